"""A catalog's own judged requests as a collection: lines ``{"query", "expected": [ids]}``.

Any expected document counts as a hit (relevance 1), as such fixtures mean it: a request may
be served by any of several tools. Request ids are the line numbers (``r1``, ``r2``, ...).
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
        qrels[qid] = dict.fromkeys(expected, 1)
        unknown += sum(1 for e in dict.fromkeys(expected) if e not in ids)
    if not queries:
        raise CorpusError(f"{path}: no request in it; write one JSON line a request: "
                          '{"query": "...", "expected": ["tool_a"]}')
    return Collection(documents=documents, queries=queries, qrels=qrels,
                      unknown_documents=unknown)
