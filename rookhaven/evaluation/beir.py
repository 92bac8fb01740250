"""Read a BEIR-layout collection: corpus.jsonl, queries.jsonl and qrels/test.tsv."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..core.corpus import Corpus
from ..corpusfile import load_corpus
from ..errors import CorpusError, shown
from ..jsonkeys import repeated_key

Qrels = dict[str, dict[str, int]]


@dataclass(frozen=True)
class Collection:
    """Documents, judged queries (id -> text, in file order) and graded judgements."""

    documents: Corpus
    queries: dict[str, str]
    qrels: Qrels
    # Judgements that name a query queries.jsonl lacks (dropped), or a document the corpus
    # lacks (kept: it counts as relevant and is never found, as trec_eval counts it).
    unknown_queries: int = 0
    unknown_documents: int = 0

    def warnings(self) -> list[str]:
        """What a person should know about the judgements before trusting the numbers."""
        said = []
        if self.unknown_queries:
            said.append(f"{self.unknown_queries} judged query id(s) are not in queries.jsonl; "
                        "their judgements are ignored")
        if self.unknown_documents:
            said.append(f"{self.unknown_documents} judgement(s) name documents not in "
                        "corpus.jsonl; they count as relevant documents never found")
        return said


def _queries(path: Path) -> dict[str, str]:
    if not path.is_file():
        raise CorpusError(f"{path}: no queries file; a BEIR collection has queries.jsonl")
    queries: dict[str, str] = {}
    lines: dict[str, int] = {}
    data = path.read_bytes()
    data = data.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark some editors write
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            raw = orjson.loads(line)
            qid, text = raw["_id"], raw["text"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            raise CorpusError(f"{path}: line {number}: expected a JSON object with "
                              "'_id' and 'text'") from None
        repeated = repeated_key(line, raw)
        if repeated is not None:
            raise CorpusError(f"{path}: line {number}: the key {shown(repeated)} is given "
                              "twice; keep one")
        if not isinstance(qid, str) or not isinstance(text, str):
            raise CorpusError(f"{path}: line {number}: '_id' and 'text' must be strings "
                              "(write a number id in quotes)")
        if qid in lines:
            raise CorpusError(f"{path}: line {number}: query id {shown(qid)} again (first on "
                              f"line {lines[qid]}); each query needs an id of its own")
        queries[qid], lines[qid] = text, number
    return queries


def _qrels(path: Path) -> Qrels:
    if not path.is_file():
        raise CorpusError(f"{path}: no judgements; a BEIR collection has qrels/test.tsv")
    qrels: Qrels = {}
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path}: not UTF-8 (byte {exc.start}); save it as UTF-8") from None
    for number, line in enumerate(lines, start=1):
        cols = line.split("\t")
        if not line.strip() or (number == 1 and not cols[-1].strip().lstrip("-").isdigit()):
            continue  # blank line or the header
        if len(cols) != 3:
            raise CorpusError(f"{path}: line {number}: expected query-id, corpus-id, score "
                              "separated by tabs")
        try:
            score = int(cols[2])
        except ValueError:
            raise CorpusError(f"{path}: line {number}: the score must be a whole number, got "
                              f"{shown(cols[2])}") from None
        judged = qrels.setdefault(cols[0], {})
        if judged.get(cols[1], score) != score:
            raise CorpusError(f"{path}: line {number}: query {shown(cols[0])} and document "
                              f"{shown(cols[1])} judged again with another grade ({score}, "
                              f"before {judged[cols[1]]}); keep one line per pair")
        judged[cols[1]] = score
    return qrels


def load_collection(directory: Path | str, *, max_docs: int) -> Collection:
    """The collection under ``directory``; only queries that have judgements are kept."""
    root = Path(directory)
    if not root.is_dir():
        raise CorpusError(f"{root}: not a directory; give a BEIR collection directory")
    judged = _qrels(root / "qrels" / "test.tsv")
    listed = _queries(root / "queries.jsonl")
    queries = {q: t for q, t in listed.items() if q in judged}
    if not queries:
        raise CorpusError(f"{root}: none of the {len(listed)} queries of queries.jsonl has a "
                          "judgement in qrels/test.tsv; their first column must name the "
                          "queries' '_id's")
    qrels = {q: grades for q, grades in judged.items() if q in listed}
    documents = load_corpus(root / "corpus.jsonl", max_docs=max_docs)
    ids = set(documents.ids)
    return Collection(documents=documents, queries=queries, qrels=qrels,
                      unknown_queries=len(judged) - len(qrels),
                      unknown_documents=sum(d not in ids for g in qrels.values() for d in g))


UNLABELLED = "unlabelled"


def _json_object(path: Path, what: str) -> dict[str, Any]:
    try:
        found = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read {what} ({exc.strerror})") from None
    except orjson.JSONDecodeError:
        found = None
    if not isinstance(found, dict):
        raise CorpusError(f"{path}: {what} must be one JSON object")
    return found


def read_metadata(path: Path | str) -> dict[str, Any]:
    """Collections' metadata by directory name, for collections that cannot hold a
    ``meta.json`` of their own (``{"cisi": {"genre": "ad-hoc"}, ...}``)."""
    return _json_object(Path(path), "the collections' metadata (name -> object)")


def collection_genre(directory: Path | str, known: Mapping[str, Any] | None = None) -> str:
    """The group a collection's metadata puts it in: its ``genre`` (``ad-hoc``, ``catalog``,
    ...), with `` (held out)`` for a set kept out of tuning, so it never joins a genre's mean.

    The metadata is ``meta.json`` beside the collection, else ``known[<directory name>]``;
    without either the collection is ``UNLABELLED``.
    """
    root = Path(directory)
    path = root / "meta.json"
    if path.is_file():
        meta, where = _json_object(path, "meta.json"), str(path)
    elif known is not None and root.resolve().name in known:
        meta, where = known[root.resolve().name], f"the metadata of {root.resolve().name}"
    else:
        return UNLABELLED
    genre = meta.get("genre") if isinstance(meta, dict) else None
    if not isinstance(genre, str) or not genre.strip():
        raise CorpusError(f"{where}: 'genre' must be a non-empty string, got {genre!r}")
    return f"{genre} (held out)" if meta.get("held_out") is True else genre


def read_split(path: Path | str) -> list[str]:
    """Query ids listed one a line (first tab-separated column); blank lines ignored."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # a byte order mark is read past
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read the split file ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path}: not UTF-8 (byte {exc.start}); save it as UTF-8") from None
    return [line.split("\t")[0].strip() for line in text.splitlines() if line.strip()]
