"""Read corpus files: a JSON array of documents, or JSON Lines (BEIR ``corpus.jsonl``).

Accepted document shapes: ``{"id", "text", "fields", "metadata"}`` (Rookhaven's own) and
``{"_id", "title", "text"}`` (BEIR). A BEIR title becomes the ``title`` field; any other
key is kept under ``metadata`` so nothing in the file is silently lost. Every error names
the file, the line (JSON Lines) or index (array), and what to fix.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from .core.corpus import Corpus, DocumentLimits, record_line
from .errors import CorpusError, shown
from .jsonkeys import repeated_key
from .models import Document

_KNOWN = frozenset({"id", "_id", "text", "title", "fields", "metadata"})
_BOM = b"\xef\xbb\xbf"
_HEAD = 1 << 12  # bytes read to tell a JSON array from JSON Lines


@dataclass(frozen=True)
class FileLimits:
    """How large a corpus file and each document in it may be (``Settings.file_limits``)."""

    max_bytes: int  # the whole file
    document: DocumentLimits  # each document; also the longest line of JSON Lines


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
        raise CorpusError(f"{where}: document id must be a non-empty string, "
                          f"got {repr(doc_id)[:60]}")
    text = raw.get("text", "")
    if not isinstance(text, str):
        raise CorpusError(f"{where}: document {shown(doc_id)}: 'text' must be a string")
    fields = raw.get("fields", {})
    if not isinstance(fields, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in fields.items()
    ):
        raise CorpusError(f"{where}: document {shown(doc_id)}: 'fields' must map names to strings")
    title = raw.get("title")
    if title is not None:
        if not isinstance(title, str):
            raise CorpusError(f"{where}: document {shown(doc_id)}: 'title' must be a string")
        if title.strip():
            if fields.get("title", title) != title:
                raise CorpusError(f"{where}: document {shown(doc_id)}: 'title' and "
                                  "'fields.title' differ; keep one")
            fields = {**fields, "title": title}
    metadata = raw.get("metadata", {})
    if not isinstance(metadata, dict):
        raise CorpusError(f"{where}: document {shown(doc_id)}: 'metadata' must be a JSON object")
    if not raw.keys() <= _KNOWN:
        extra = {k: v for k, v in raw.items() if k not in _KNOWN}
        clash = sorted(set(extra) & set(metadata))
        if clash:
            raise CorpusError(f"{where}: document {shown(doc_id)}: keys {clash} appear both at top "
                              "level and in 'metadata'; keep one")
        metadata = {**metadata, **extra}
    return {"id": doc_id, "text": text, "fields": fields, "metadata": metadata}


def _too_big(path: Path, max_bytes: int) -> CorpusError:
    return CorpusError(f"{path}: larger than {max_bytes} bytes; raise ROOKHAVEN_MAX_CORPUS_BYTES "
                       "or split the corpus")


def _not_json(path: Path, line: int, msg: str) -> CorpusError:
    if "depth" in msg.lower() or "recursion" in msg.lower():
        msg = "nested too deep"
    if "utf-8" in msg.lower():  # orjson's words for bytes that are not UTF-8 are misleading
        return CorpusError(f"{path}: line {line}: not UTF-8 text; save the file as UTF-8 "
                           "(a Latin-1, UTF-16 or compressed file is read as bytes)")
    return CorpusError(f"{path}: line {line}: not valid JSON ({msg})")


def _array_items(file: BinaryIO, path: Path,
                 max_bytes: int | None) -> Iterator[tuple[str, int, Any]]:
    data = file.read() if max_bytes is None else file.read(max_bytes + 1)
    if max_bytes is not None and len(data) > max_bytes:
        raise _too_big(path, max_bytes)
    try:
        # A byte order mark is read past, as before a JSON Lines file's first line.
        items = orjson.loads(memoryview(data)[len(_BOM):] if data.startswith(_BOM) else data)
    except orjson.JSONDecodeError as exc:
        raise _not_json(path, exc.lineno, exc.msg) from None
    _repeats(path, "the array", data, items)
    del data
    if not isinstance(items, list):
        raise CorpusError(f"{path}: expected a JSON array of documents")
    for index, item in enumerate(items):
        yield "index", index, item


def _lines(file: BinaryIO, path: Path, limits: FileLimits | None) -> Iterator[bytes]:
    """The file's lines, each at most ROOKHAVEN_MAX_DOC_BYTES, all at most
    ROOKHAVEN_MAX_CORPUS_BYTES: ``/dev/zero`` is refused, not read until memory runs out."""
    if limits is None:
        yield from file
        return
    longest, total, number = limits.document.max_doc_bytes, 0, 0
    while line := file.readline(longest + 2):  # the line, "\r\n", and one byte too many
        number += 1
        total += len(line)
        if total > limits.max_bytes:
            raise _too_big(path, limits.max_bytes)
        if len(line.rstrip(b"\r\n")) > longest:
            raise CorpusError(f"{path}: line {number}: longer than {longest} bytes; a document "
                              "may be at most that (ROOKHAVEN_MAX_DOC_BYTES)")
        yield line


def _repeats(path: Path, where: str, raw: bytes, parsed: Any) -> None:
    key = repeated_key(raw, parsed)
    if key is not None:
        raise CorpusError(f"{path}: {where}: the key {shown(key)} is given twice in one "
                          "object (readers disagree on which counts); keep one")


def _line_items(lines: Iterable[bytes], path: Path) -> Iterator[tuple[str, int, Any]]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        raw = line.removeprefix(_BOM) if number == 1 else line
        try:
            item = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise _not_json(path, number, exc.msg) from None
        _repeats(path, f"line {number}", raw, item)
        yield "line", number, item


def _starts_array(file: BinaryIO, path: Path, max_bytes: int | None) -> bool:
    """Whether the first byte that is not blank (after a byte order mark) is ``[``; the
    blank bytes before it are counted, never kept."""
    head, seen = file.read(_HEAD).removeprefix(_BOM), 0
    while head:
        seen += len(head)
        text = head.lstrip()
        if text:
            return text.startswith(b"[")
        if max_bytes is not None and seen > max_bytes:
            raise _too_big(path, max_bytes)
        head = file.read(_HEAD)
    return False


def _records(path: Path, max_docs: int, required: bool,
             limits: FileLimits | None) -> Iterator[tuple[dict[str, Any], str]]:
    """Every document in the file as a checked plain record and where it is, in file order.

    JSON Lines are read a line at a time, so a large file is never held whole; a JSON array
    has to be parsed whole.
    """
    max_bytes = None if limits is None else limits.max_bytes
    try:
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size  # 0 for /dev/zero: the readers count too
            if max_bytes is not None and size > max_bytes:
                raise _too_big(path, max_bytes)
            array = _starts_array(file, path, max_bytes)
            file.seek(0)
            if array:
                items = _array_items(file, path, max_bytes)
            else:
                items = _line_items(_lines(file, path, limits), path)
            yield from _checked(items, path, max_docs, required)
    except FileNotFoundError:
        raise CorpusError(f"{path}: no such corpus file") from None
    except IsADirectoryError:
        raise CorpusError(f"{path}: is a directory; give the corpus file itself") from None
    except MemoryError:
        raise CorpusError(f"{path}: too large to read into memory; split the corpus or "
                          "write it as JSON Lines") from None
    except OSError as exc:  # a pipe or a device has no strerror for what it cannot do
        reason = exc.strerror or "not a regular file; give a file on disk"
        raise CorpusError(f"{path}: cannot read ({reason})") from None


def _checked(items: Iterator[tuple[str, int, Any]], path: Path, max_docs: int,
             required: bool) -> Iterator[tuple[dict[str, Any], str]]:
    first_seen: dict[str, int] = {}  # id -> line or index it first appeared at
    for kind, number, raw in items:
        where = f"{path}: {kind} {number}"
        record = _record(raw, where)
        doc_id = record["id"]
        if doc_id in first_seen:
            raise CorpusError(f"{where}: duplicate document id {shown(doc_id)} "
                              f"(first at {kind} {first_seen[doc_id]})")
        first_seen[doc_id] = number
        if len(first_seen) > max_docs:
            raise CorpusError(f"{path}: more than {max_docs} documents; raise "
                              "ROOKHAVEN_MAX_CORPUS_DOCS or split the corpus")
        yield record, where
    if required and not first_seen:
        raise CorpusError(f"{path}: contains no documents")


def load_documents(path: Path | str, *, max_docs: int, required: bool = True,
                   limits: FileLimits | None = None) -> list[Document]:
    """Every document in the file at ``path``, checked; at most ``max_docs`` of them, each
    and the file within ``limits`` if given (``Settings.file_limits``)."""
    documents = []
    for record, where in _records(Path(path), max_docs, required, limits):
        record_line(record, where, None if limits is None else limits.document)
        documents.append(Document(**record))
    return documents


def load_corpus(path: Path | str, *, max_docs: int, required: bool = True,
                limits: FileLimits | None = None) -> Corpus:
    """The file at ``path`` as a Corpus, checked as ``load_documents`` does.

    The same corpus as ``Corpus(load_documents(...))`` (ids, order, digest), made without
    a ``Document`` model per document: use it for large files.
    """
    document = None if limits is None else limits.document
    return Corpus.from_lines(record_line(record, where, document)
                             for record, where in _records(Path(path), max_docs, required, limits))
