"""A re-ranking's history for tests: a corpus, its next version, and requests first run on
the one (in process, on fakeredis), so a run re-ranks them on the other."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import fakeredis

from rookhaven import Document, RetrievalRequest
from rookhaven.config import Settings
from rookhaven.pipeline import Pipeline
from rookhaven.pipeline.inline import inline_pipeline
from rookhaven.rerank import Reranker, RerankSpec
from rookhaven.store import Store

OLD = [Document(id=f"d{i:02d}", text=f"crane {i % 5} berth {i % 4} tide {i % 3} delay")
       for i in range(40)]
# The next version: a third of the documents reworded, some removed, some added.
NEW = ([d.model_copy(update={"text": d.text.replace("crane", "gantry")}) if i % 3 == 0 else d
        for i, d in enumerate(OLD) if i % 7 != 6]
       + [Document(id=f"n{i}", text=f"crane {i} tide delay delay") for i in range(5)])
REQUESTS = [RetrievalRequest(query=f"crane {i % 5} and tide {i % 3}", recallBudget=1 + i % 6,
                             seed=f"s{i}") for i in range(23)]


def titled(documents: Sequence[Document]) -> list[Document]:
    """``documents``, each with a title field: "report <its id>"."""
    return [d.model_copy(update={"fields": {"title": f"report {d.id}"}}) for d in documents]


def history(prefix: str, old: Sequence[Document] = OLD, new: Sequence[Document] = NEW,
            ) -> Iterator[Pipeline]:
    """An inline pipeline whose store holds ``old`` as port@1 with REQUESTS run on it, and
    ``new`` as port@2 (for a fixture: closed after)."""
    client = fakeredis.FakeRedis()
    pipe = inline_pipeline(Store(client, prefix), Settings(engine="tfcosine@1", batch_size=5))
    pipe.add_corpus(old, "port")
    pipe.submit_many(REQUESTS, "port")
    pipe.add_corpus(new, "port")
    yield pipe
    client.close()


def rerun(pipe: Pipeline, chunk: int = 4) -> str:
    """A finished re-ranking of port@1's history on port@2: its run id."""
    spec = RerankSpec(source="audits", corpus=pipe.store.corpora.resolve("port@1"),
                      target_corpus=pipe.store.corpora.resolve("port@2"), chunk=chunk)
    reranker = Reranker(pipe)
    run_id = reranker.start(spec)
    reranker.run(run_id)
    return run_id
