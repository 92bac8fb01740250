"""A corpus streamed into an index: same ids, digest and results as the Corpus, lines not kept."""

from __future__ import annotations

import random

import pytest

from rookhaven import Document, RetrievalRequest, Retriever
from rookhaven.core.canonical import result_bytes
from rookhaven.core.corpus import Corpus
from rookhaven.core.corpusstream import CorpusStream, CorpusSummary
from rookhaven.core.engines import ENGINES
from rookhaven.errors import CorpusError, DuplicateDocumentError, IntegrityError

WORDS = ["berth", "crane", "tide", "quay", "pilot", "draught", "ballast", "hawser", "winch",
         "bollard", "lock", "sluice"]


def records(n: int, seed: int = 7) -> list[dict[str, object]]:
    rng = random.Random(seed)
    made = []
    for i in range(n):
        doc: dict[str, object] = {"id": f"d{i:05d}",
                                  "text": " ".join(rng.choices(WORDS, k=rng.randint(0, 30)))}
        if i % 5 == 0:
            doc["fields"] = {"title": " ".join(rng.choices(WORDS, k=3))}
        if i % 7 == 0:
            doc["metadata"] = {"n": i, "tags": ["é", None]}
        made.append(doc)
    return made


def lines_of(corpus: Corpus) -> list[bytes]:
    return [line.rstrip(b"\n") for line in corpus.canonical_lines()]


@pytest.mark.parametrize("engine", [spec.ref for spec in ENGINES])
def test_every_engine_gives_the_same_bytes_streamed_as_whole(engine: str) -> None:
    docs = records(3000)  # more than one chunk of the index builder
    whole = Retriever(Corpus.from_records(docs), engine)
    streamed = Retriever(CorpusStream.from_records(docs), engine)
    assert isinstance(streamed.corpus, CorpusSummary)
    assert streamed.corpus.ids == whole.corpus.ids and len(streamed.corpus) == 3000
    assert streamed.corpus.digest == whole.corpus.digest
    for i, query in enumerate(["crane tide", "pilot, ballast and winch", "sluice lock quay"]):
        request = RetrievalRequest(query=query, recall_budget=25, seed=f"s{i}")
        assert result_bytes(streamed.result_data(request)) == result_bytes(
            whole.result_data(request))


def test_lines_stream_with_their_digest_and_a_changed_line_is_caught() -> None:
    corpus = Corpus.from_records(records(200))
    lines = lines_of(corpus)
    good = Retriever(CorpusStream.from_lines(lines, corpus.digest), "bm25@2")
    assert good.corpus.digest == corpus.digest
    changed = [*lines[:50], lines[50].replace(b'"text":"', b'"text":"crane '), *lines[51:]]
    with pytest.raises(IntegrityError, match=corpus.digest):
        Retriever(CorpusStream.from_lines(changed, corpus.digest), "bm25@2")
    with pytest.raises(IntegrityError, match="line 3 is not a canonical document"):
        Retriever(CorpusStream.from_lines([*lines[:2], b"{oops", *lines[2:]], corpus.digest))


def test_a_stream_out_of_id_order_or_with_a_repeated_id_is_refused() -> None:
    docs = records(10)
    with pytest.raises(CorpusError, match=r"'d00003' comes after 'd00004'.*id order"):
        Retriever(CorpusStream.from_records([*docs[:3], docs[4], docs[3], *docs[5:]]))
    with pytest.raises(DuplicateDocumentError, match="d00002"):
        Retriever(CorpusStream.from_records([*docs[:3], docs[2], *docs[3:]]))
    with pytest.raises(CorpusError, match="record 1: unknown document keys"):
        Retriever(CorpusStream.from_records([docs[0], {"id": "x", "body": "?"}]))


def test_an_empty_stream_is_refused_as_an_empty_corpus_is() -> None:
    with pytest.raises(CorpusError, match="the corpus is empty"):
        Retriever(CorpusStream.from_records([]))


def test_a_stream_is_read_once() -> None:
    stream = CorpusStream.from_records(records(3))
    Retriever(stream)
    with pytest.raises(RuntimeError, match="read once"):
        Retriever(stream)


def test_a_document_model_corpus_and_a_stream_agree_on_ids_with_unicode() -> None:
    docs = [Document(id=i, text=t) for i, t in (("Ä", "tide"), ("a", "crane"), ("ß", "quay"))]
    whole = Corpus(docs)
    streamed = Retriever(CorpusStream.from_records(
        [{"id": d.id, "text": d.text} for d in sorted(docs, key=lambda d: d.id)]))
    assert streamed.corpus.ids == whole.ids and streamed.corpus.digest == whole.digest
