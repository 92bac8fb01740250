"""An immutable corpus: documents in id order, with ordinals and a content digest.

Documents are sorted by id so that nothing downstream can depend on the order a caller
supplied them in, and a document's ordinal doubles as the final tie-break key. A corpus
keeps each document only as its canonical JSON line (the bytes the digest hashes), all in
one buffer, and makes a ``Document`` when one is asked for (docs/adr/0009-compact-corpus.md).
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import pairwise
from operator import lt
from typing import Any, Protocol, overload

import numpy as np
import numpy.typing as npt
import orjson

from ..errors import CorpusError, DuplicateDocumentError, shown
from ..models import Document
from .canonical import to_plain

_KEYS = ("id", "text", "fields", "metadata")
_SCALARS = (str, int, float, bool, type(None))
_SPAN_BLOCK = 1 << 16  # line bounds turned into Python ints at a time


class RecordSource(Protocol):
    """Documents in id order as plain dicts, a chunk at a time: what an index is built
    from (a ``Corpus``, or a ``core.corpusstream.CorpusStream`` read once)."""

    def record_chunks(self, size: int) -> Iterator[Iterator[dict[str, Any]]]: ...


def document_bytes(doc: Document) -> bytes:
    """One document's canonical JSON line (without the newline)."""
    try:
        return orjson.dumps(to_plain(doc), option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError as exc:  # a lone surrogate: no UTF-8 can hold it
        raise CorpusError(
            f"document {shown(doc.id)} cannot be encoded ({exc}): its text holds a lone "
            "surrogate (U+D800-U+DFFF), which is no character; decode the source as UTF-8 "
            "without errors='surrogateescape', or remove it") from None


@dataclass(frozen=True)
class DocumentLimits:
    """The largest document accepted, passed in by the caller (from the settings)."""

    max_id_len: int  # characters
    max_doc_bytes: int  # the canonical JSON line
    max_metadata_bytes: int  # the metadata's canonical JSON
    max_metadata_depth: int  # nesting levels; the metadata object itself is level 1


def _json_problem(value: Any, path: str, max_depth: int | None = None) -> str | None:
    """Where ``value`` holds something that is not plain JSON, or nests deeper than
    ``max_depth``, and what it is; else None.

    A walk with an explicit stack, not recursion: metadata nested a thousand deep must be
    an error message, not a RecursionError.
    """
    def cut(where: str) -> str:
        return where[:80] + ("..." if len(where) > 80 else "")

    stack: list[tuple[Any, str, int]] = [(value, path, 1)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, _SCALARS):
            continue
        if not isinstance(item, list | dict):
            return f"a value of type {type(item).__name__} at {cut(where)}"
        if max_depth is not None and depth > max_depth:
            return f"more than {max_depth} levels of nesting at {cut(where)}"
        children: list[tuple[Any, str, int]] = []
        if isinstance(item, list):
            children = [(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(item)]
        else:
            for key, v in item.items():
                if not isinstance(key, str):
                    return f"a key of type {type(key).__name__} ({key!r}) at {cut(where)}"
                children.append((v, f"{where}[{shown(key)}]", depth + 1))
        stack.extend(reversed(children))  # first child on top: problems found in order
    return None


def record_line(record: Mapping[str, Any], where: str,
                limits: DocumentLimits | None = None) -> tuple[str, bytes]:
    """A record's id and canonical JSON line, checked by the rules ``Document`` applies
    and, if given, within ``limits``.

    ``record`` has ``id`` (a non-empty string) and optionally ``text`` (a string),
    ``fields`` (names to strings) and ``metadata`` (a JSON object); the line is exactly
    ``document_bytes(Document(**record))``. Metadata must be plain JSON (str, int, float,
    bool, None, list, dict with string keys): anything else has no one canonical form.
    """
    if not isinstance(record, Mapping):
        raise CorpusError(f"{where}: a document must be a mapping, got {type(record).__name__}")
    unknown = sorted(str(k) for k in record if k not in _KEYS)
    if unknown:
        raise CorpusError(f"{where}: unknown document keys {unknown}; "
                          f"a document has only {', '.join(_KEYS)}")
    doc_id = record.get("id")
    if not isinstance(doc_id, str) or not doc_id:
        got = shown(doc_id) if isinstance(doc_id, str) else repr(doc_id)[:60]
        raise CorpusError(f"{where}: document id must be a non-empty string, got {got}")
    if limits is not None and len(doc_id) > limits.max_id_len:
        raise CorpusError(f"{where}: document id {shown(doc_id)} is {len(doc_id)} characters; "
                          f"the limit is {limits.max_id_len} (ROOKHAVEN_MAX_ID_LEN)")
    name = shown(doc_id)
    text = record.get("text", "")
    if not isinstance(text, str):
        raise CorpusError(f"{where}: document {name}: 'text' must be a string, "
                          f"got {type(text).__name__}")
    fields = record.get("fields", {})
    if not isinstance(fields, dict):
        raise CorpusError(f"{where}: document {name}: 'fields' must be a dict of names to "
                          f"strings, got {type(fields).__name__}")
    for key, value in fields.items():
        if not isinstance(key, str) or not isinstance(value, str):
            got = shown(key) if isinstance(key, str) else repr(key)[:60]
            raise CorpusError(f"{where}: document {name}: 'fields' must map names to "
                              f"strings, got {got}: {type(value).__name__}")
    metadata = record.get("metadata", {})
    if not isinstance(metadata, dict):
        raise CorpusError(f"{where}: document {name}: 'metadata' must be a dict, "
                          f"got {type(metadata).__name__}")
    depth = None if limits is None else limits.max_metadata_depth
    problem = _json_problem(metadata, "metadata", depth) if metadata else None
    if problem and problem.startswith("more than"):
        raise CorpusError(f"{where}: document {name}: 'metadata' has {problem} "
                          "(ROOKHAVEN_MAX_METADATA_DEPTH)")
    if problem:
        raise CorpusError(f"{where}: document {name}: 'metadata' holds {problem}; only "
                          "JSON values are accepted (str, int, float, bool, None, list, "
                          "dict with string keys)")
    try:
        line = orjson.dumps({"fields": fields, "id": doc_id, "metadata": metadata, "text": text},
                            option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError as exc:
        raise CorpusError(f"{where}: document {name}: cannot be encoded ({exc})") from None
    if limits is not None:
        _check_size(line, metadata, where, name, limits)
    return doc_id, line


def _check_size(line: bytes, metadata: dict[str, Any], where: str, name: str,
                limits: DocumentLimits) -> None:
    if len(line) > limits.max_doc_bytes:
        raise CorpusError(f"{where}: document {name} is {len(line)} bytes as canonical JSON; "
                          f"the limit is {limits.max_doc_bytes} (ROOKHAVEN_MAX_DOC_BYTES)")
    # The metadata's share of the line; only measured when the line could hold too much.
    if metadata and len(line) > limits.max_metadata_bytes:
        size = len(orjson.dumps(metadata, option=orjson.OPT_SORT_KEYS))
        if size > limits.max_metadata_bytes:
            raise CorpusError(f"{where}: document {name}: 'metadata' is {size} bytes as "
                              f"canonical JSON; the limit is {limits.max_metadata_bytes} "
                              "(ROOKHAVEN_MAX_METADATA_BYTES)")


class Corpus(Sequence[Document]):
    """Documents sorted by id, each id unique; never mutated after construction.

    Held compactly: every canonical line (newline included) in one buffer, found by the
    ``[start, end)`` of each ordinal. Indexing or iterating makes ``Document`` models from
    those bytes; ``records`` gives plain dicts, which is all the index builder needs.
    """

    ids: tuple[str, ...]
    _buffer: memoryview
    _starts: npt.NDArray[np.int64]
    _ends: npt.NDArray[np.int64]
    _in_order: bool

    def __init__(self, documents: Iterable[Document]) -> None:
        self._pack((doc.id, document_bytes(doc)) for doc in documents)

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]]) -> Corpus:
        """A corpus straight from plain records (``{"id", "text", "fields", "metadata"}``).

        Same documents, ids, order and digest as ``Corpus(Document(**r) for r in records)``
        without making a model per record; see ``record_line`` for the rules. Errors name the
        record by its position in ``records``.
        """
        return cls.from_lines(record_line(r, f"record {i}") for i, r in enumerate(records))

    @classmethod
    def from_lines(cls, lines: Iterable[tuple[str, bytes]]) -> Corpus:
        """A corpus from ``(id, canonical line)`` pairs that ``record_line`` made."""
        corpus = cls.__new__(cls)
        corpus._pack(lines)
        return corpus

    def _pack(self, lines: Iterable[tuple[str, bytes]]) -> None:
        buffer = bytearray()  # grows in place (large reallocations are remapped, not copied)
        bounds = array("q", [0])
        ids: list[str] = []
        for doc_id, line in lines:
            ids.append(doc_id)
            buffer += line
            buffer += b"\n"
            bounds.append(len(buffer))
        offsets = np.frombuffer(bounds, dtype=np.int64)
        self._in_order = all(map(lt, ids, ids[1:]))
        if self._in_order:
            self.ids = tuple(ids)
            self._starts, self._ends = offsets[:-1], offsets[1:]
        else:
            order = sorted(range(len(ids)), key=ids.__getitem__)  # stable: ties stay adjacent
            for before, after in pairwise(order):
                if ids[before] == ids[after]:
                    raise DuplicateDocumentError(f"duplicate document id {ids[after]!r}: "
                                                 "every document needs its own id")
            self.ids = tuple(ids[i] for i in order)
            rows = np.asarray(order, dtype=np.int64)
            self._starts, self._ends = offsets[rows], offsets[rows + 1]
        self._buffer = memoryview(buffer).toreadonly()

    def __len__(self) -> int:
        return len(self.ids)

    def line(self, ordinal: int) -> bytes:
        """The canonical JSON line of the document at ``ordinal`` (without the newline)."""
        return self._buffer[int(self._starts[ordinal]):int(self._ends[ordinal]) - 1].tobytes()

    @overload
    def __getitem__(self, index: int) -> Document: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Document, ...]: ...

    def __getitem__(self, index: int | slice) -> Document | tuple[Document, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        return Document.model_validate_json(self.line(index))

    def __iter__(self) -> Iterator[Document]:
        for ordinal in range(len(self)):
            yield self[ordinal]

    def _spans(self, start: int, stop: int) -> Iterator[tuple[int, int]]:
        """``(start, end)`` of each line in ordinals [start, stop), read in bounded blocks."""
        for lo in range(start, stop, _SPAN_BLOCK):
            hi = min(lo + _SPAN_BLOCK, stop)
            yield from zip(self._starts[lo:hi].tolist(), self._ends[lo:hi].tolist(), strict=True)

    def records(self, start: int = 0, stop: int | None = None) -> Iterator[dict[str, Any]]:
        """Documents ``start`` to ``stop`` (ordinals) as plain dicts, without building models."""
        buffer, loads = self._buffer, orjson.loads
        for s, e in self._spans(start, len(self) if stop is None else min(stop, len(self))):
            yield loads(buffer[s:e])

    def record_chunks(self, size: int) -> Iterator[Iterator[dict[str, Any]]]:
        """The documents as plain dicts, ``size`` at a time, in id order (as an index
        builder reads a ``CorpusStream``)."""
        for start in range(0, len(self), size):
            yield self.records(start, start + size)

    def canonical_lines(self) -> Iterator[bytes]:
        """The canonical corpus as JSON lines, newline-terminated, in id order."""
        buffer = self._buffer
        for s, e in self._spans(0, len(self)):
            yield buffer[s:e].tobytes()

    @cached_property
    def digest(self) -> str:
        """``sha256:<hex>`` over the canonical JSON lines: the corpus's identity."""
        h = hashlib.sha256()
        if self._in_order:  # the buffer is exactly the canonical lines, in order
            h.update(self._buffer)
        else:
            buffer = self._buffer
            for s, e in self._spans(0, len(self)):
                h.update(buffer[s:e])
        return "sha256:" + h.hexdigest()


def as_corpus(documents: Corpus | Iterable[Document], *, required: bool = True) -> Corpus:
    """Wrap ``documents`` as a Corpus (a Corpus passes through); refuse an empty one if required."""
    corpus = documents if isinstance(documents, Corpus) else Corpus(documents)
    if required and len(corpus) == 0:
        raise CorpusError("the corpus is empty: add at least one document before retrieving")
    return corpus
