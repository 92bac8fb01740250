"""Read corpus files: a JSON array of documents, or JSON Lines (BEIR ``corpus.jsonl``).

Accepted document shapes: ``{"id", "text", "fields", "metadata"}`` (Rookhaven's own) and
``{"_id", "title", "text"}`` (BEIR). A BEIR title becomes the ``title`` field; any other
key is kept under ``metadata`` so nothing in the file is silently lost. Every error names
the file, the line (JSON Lines) or index (array), and what to fix.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from .core.corpus import Corpus
from .errors import CorpusError
from .models import Document

_KNOWN = frozenset({"id", "_id", "text", "title", "fields", "metadata"})
_BOM = b"\xef\xbb\xbf"
_HEAD = 1 << 12  # bytes read to tell a JSON array from JSON Lines


def _record(raw: Any, where: str) -> dict[str, Any]:
    """One document of the file as a plain record (``id``, ``text``, ``fields``, ``metadata``)."""
    if not isinstance(raw, dict):
        raise CorpusError(f"{where}: a document must be a JSON object, got {type(raw).__name__}")
    if "id" in raw and "_id" in raw:
        raise CorpusError(f"{where}: give either 'id' or '_id', not both")
    doc_id = raw.get("id", raw.get("_id"))
    if doc_id is None:
        raise CorpusError(f"{where}: document has no 'id' (or BEIR '_id')")
    if not isinstance(doc_id, str) or not doc_id:
        raise CorpusError(f"{where}: document id must be a non-empty string, got {doc_id!r}")
    text = raw.get("text", "")
    if not isinstance(text, str):
        raise CorpusError(f"{where}: document {doc_id!r}: 'text' must be a string")
    fields = raw.get("fields", {})
    if not isinstance(fields, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in fields.items()
    ):
        raise CorpusError(f"{where}: document {doc_id!r}: 'fields' must map names to strings")
    title = raw.get("title")
    if title is not None:
        if not isinstance(title, str):
            raise CorpusError(f"{where}: document {doc_id!r}: 'title' must be a string")
        if title.strip() and "title" not in fields:
            fields = {**fields, "title": title}
    metadata = raw.get("metadata", {})
    if not isinstance(metadata, dict):
        raise CorpusError(f"{where}: document {doc_id!r}: 'metadata' must be a JSON object")
    if not raw.keys() <= _KNOWN:
        extra = {k: v for k, v in raw.items() if k not in _KNOWN}
        clash = sorted(set(extra) & set(metadata))
        if clash:
            raise CorpusError(f"{where}: document {doc_id!r}: keys {clash} appear both at top "
                              "level and in 'metadata'; keep one")
        metadata = {**metadata, **extra}
    return {"id": doc_id, "text": text, "fields": fields, "metadata": metadata}


def _array_items(data: bytes, path: Path) -> Iterator[tuple[str, int, Any]]:
    try:
        items = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise CorpusError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(items, list):
        raise CorpusError(f"{path}: expected a JSON array of documents")
    for index, item in enumerate(items):
        yield "index", index, item


def _line_items(lines: Iterable[bytes], path: Path) -> Iterator[tuple[str, int, Any]]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield "line", number, orjson.loads(line.removeprefix(_BOM) if number == 1 else line)
        except orjson.JSONDecodeError as exc:
            raise CorpusError(f"{path}: line {number}: not valid JSON ({exc.msg})") from None


def _records(path: Path, max_docs: int, required: bool) -> Iterator[dict[str, Any]]:
    """Every document in the file as a checked plain record, in file order.

    JSON Lines are read a line at a time, so a large file is never held whole; a JSON array
    has to be parsed whole.
    """
    try:
        with path.open("rb") as file:
            head = file.read(_HEAD)
            while head.removeprefix(_BOM).isspace():  # all blank so far: look further
                more = file.read(_HEAD)
                if not more:
                    break
                head += more
            file.seek(0)
            if head.removeprefix(_BOM).lstrip().startswith(b"["):
                items = _array_items(file.read(), path)
            else:
                items = _line_items(file, path)
            yield from _checked(items, path, max_docs, required)
    except FileNotFoundError:
        raise CorpusError(f"{path}: no such corpus file") from None
    except IsADirectoryError:
        raise CorpusError(f"{path}: is a directory; give the corpus file itself") from None
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read ({exc.strerror})") from None


def _checked(items: Iterator[tuple[str, int, Any]], path: Path, max_docs: int,
             required: bool) -> Iterator[dict[str, Any]]:
    first_seen: dict[str, int] = {}  # id -> line or index it first appeared at
    for kind, number, raw in items:
        record = _record(raw, f"{path}: {kind} {number}")
        doc_id = record["id"]
        if doc_id in first_seen:
            raise CorpusError(f"{path}: {kind} {number}: duplicate document id {doc_id!r} "
                              f"(first at {kind} {first_seen[doc_id]})")
        first_seen[doc_id] = number
        if len(first_seen) > max_docs:
            raise CorpusError(f"{path}: more than {max_docs} documents; raise "
                              "ROOKHAVEN_MAX_CORPUS_DOCS or split the corpus")
        yield record
    if required and not first_seen:
        raise CorpusError(f"{path}: contains no documents")


def load_documents(path: Path | str, *, max_docs: int, required: bool = True) -> list[Document]:
    """Every document in the file at ``path``, checked; at most ``max_docs`` of them."""
    return [Document(**record) for record in _records(Path(path), max_docs, required)]


def load_corpus(path: Path | str, *, max_docs: int, required: bool = True) -> Corpus:
    """The file at ``path`` as a Corpus, checked as ``load_documents`` does.

    The same corpus as ``Corpus(load_documents(...))`` (ids, order, digest), made without
    a ``Document`` model per document: use it for large files.
    """
    return Corpus.from_records(_records(Path(path), max_docs, required))
