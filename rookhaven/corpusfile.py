"""Read corpus files: a JSON array of documents, or JSON Lines (BEIR ``corpus.jsonl``).

Accepted document shapes: ``{"id", "text", "fields", "metadata"}`` (Rookhaven's own) and
``{"_id", "title", "text"}`` (BEIR). A BEIR title becomes the ``title`` field; any other
key is kept under ``metadata`` so nothing in the file is silently lost. Every error names
the file, the line (JSON Lines) or index (array), and what to fix.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from .errors import CorpusError
from .models import Document

_KNOWN = frozenset({"id", "_id", "text", "title", "fields", "metadata"})


def _document(raw: Any, where: str) -> Document:
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
    fields = dict(fields)
    title = raw.get("title")
    if title is not None:
        if not isinstance(title, str):
            raise CorpusError(f"{where}: document {doc_id!r}: 'title' must be a string")
        if title.strip() and "title" not in fields:
            fields["title"] = title
    metadata = raw.get("metadata", {})
    if not isinstance(metadata, dict):
        raise CorpusError(f"{where}: document {doc_id!r}: 'metadata' must be a JSON object")
    extra = {k: v for k, v in raw.items() if k not in _KNOWN}
    clash = sorted(set(extra) & set(metadata))
    if clash:
        raise CorpusError(f"{where}: document {doc_id!r}: keys {clash} appear both at top level "
                          "and in 'metadata'; keep one")
    return Document(id=doc_id, text=text, fields=fields, metadata={**metadata, **extra})


def _array_items(data: bytes, path: Path) -> Iterator[tuple[str, Any]]:
    try:
        items = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise CorpusError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(items, list):
        raise CorpusError(f"{path}: expected a JSON array of documents")
    for index, item in enumerate(items):
        yield f"{path}: index {index}", item


def _line_items(data: bytes, path: Path) -> Iterator[tuple[str, Any]]:
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            yield f"{path}: line {number}", orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise CorpusError(f"{path}: line {number}: not valid JSON ({exc.msg})") from None


def load_documents(path: Path | str, *, max_docs: int, required: bool = True) -> list[Document]:
    """Every document in the file at ``path``, checked; at most ``max_docs`` of them."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CorpusError(f"{path}: no such corpus file") from None
    except IsADirectoryError:
        raise CorpusError(f"{path}: is a directory; give the corpus file itself") from None
    except OSError as exc:
        raise CorpusError(f"{path}: cannot read ({exc.strerror})") from None
    body = data.removeprefix(b"\xef\xbb\xbf").lstrip()
    items = _array_items(body, path) if body.startswith(b"[") else _line_items(data, path)
    documents: list[Document] = []
    first_seen: dict[str, str] = {}
    for where, raw in items:
        doc = _document(raw, where)
        if doc.id in first_seen:
            raise CorpusError(f"{where}: duplicate document id {doc.id!r} "
                              f"(first at {first_seen[doc.id].removeprefix(f'{path}: ')})")
        first_seen[doc.id] = where
        documents.append(doc)
        if len(documents) > max_docs:
            raise CorpusError(f"{path}: more than {max_docs} documents; raise "
                              "ROOKHAVEN_MAX_CORPUS_DOCS or split the corpus")
    if required and not documents:
        raise CorpusError(f"{path}: contains no documents")
    return documents
