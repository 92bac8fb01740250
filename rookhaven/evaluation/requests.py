"""A catalog's own judged requests as a collection: lines ``{"query", "expected": [ids]}``.

Any expected document counts as a hit (relevance 1), as such fixtures mean it: a request may
be served by any of several tools; a bare tool name also means every ``group/name`` a
registry qualified it as. Request ids are the line numbers (``r1``, ``r2``, ...).
"""

from __future__ import annotations

from pathlib import Path

import orjson

from ..core.corpus import Corpus
from ..errors import CorpusError, shown
from .beir import Collection


def requests_collection(path: Path | str, documents: Corpus) -> Collection:
    """The requests of the JSON Lines file at ``path`` judged against ``documents``."""
    path = Path(path)
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    ids = set(documents.ids)
    # A registry names a tool "group/name" where two groups share the name: a request
    # expecting the bare name is served by any of them.
    qualified: dict[str, list[str]] = {}
    for doc_id in documents.ids:
        if "/" in doc_id:
            qualified.setdefault(doc_id.rsplit("/", 1)[1], []).append(doc_id)
    unknown = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise CorpusError(f"{where}: not JSON ({exc})") from None
        query = record.get("query") if isinstance(record, dict) else None
        expected = record.get("expected") if isinstance(record, dict) else None
        if not isinstance(query, str) or not query.strip():
            raise CorpusError(f"{where}: a request needs a non-empty string \"query\"")
        if (not isinstance(expected, list) or not expected
                or not all(isinstance(e, str) and e for e in expected)):
            raise CorpusError(f"{where}: \"expected\" must be a non-empty list of document ids "
                              f"(tool names), got {shown(str(expected))}")
        qid = f"r{number}"
        queries[qid] = query
        judged: dict[str, int] = {}
        for name in dict.fromkeys(expected):
            if name in ids or name not in qualified:
                unknown += name not in ids
                judged[name] = 1
            else:
                judged.update(dict.fromkeys(qualified[name], 1))
        qrels[qid] = judged
    if not queries:
        raise CorpusError(f"{path}: no request in it; write one JSON line a request: "
                          '{"query": "...", "expected": ["tool_a"]}')
    return Collection(documents=documents, queries=queries, qrels=qrels,
                      unknown_documents=unknown)
