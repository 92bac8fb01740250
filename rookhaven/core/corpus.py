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
from functools import cached_property
from itertools import pairwise
from operator import lt
from typing import Any, overload

import numpy as np
import numpy.typing as npt
import orjson

from ..errors import CorpusError, DuplicateDocumentError
from ..models import Document
from .canonical import to_plain

_KEYS = ("id", "text", "fields", "metadata")
_SCALARS = (str, int, float, bool, type(None))
_SPAN_BLOCK = 1 << 16  # line bounds turned into Python ints at a time


def document_bytes(doc: Document) -> bytes:
    """One document's canonical JSON line (without the newline)."""
    return orjson.dumps(to_plain(doc), option=orjson.OPT_SORT_KEYS)


def _json_problem(value: Any, path: str) -> str | None:
    """Where ``value`` holds something that is not plain JSON, and what it is; else None."""
    if isinstance(value, _SCALARS):
        return None
    if isinstance(value, list):
        for i, item in enumerate(value):
            problem = _json_problem(item, f"{path}[{i}]")
            if problem:
                return problem
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"a key of type {type(key).__name__} ({key!r}) at {path}"
            problem = _json_problem(item, f"{path}[{key!r}]")
            if problem:
                return problem
        return None
    return f"a value of type {type(value).__name__} at {path}"


def record_line(record: Mapping[str, Any], where: str) -> tuple[str, bytes]:
    """A record's id and canonical JSON line, checked by the rules ``Document`` applies.

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
        raise CorpusError(f"{where}: document id must be a non-empty string, got {doc_id!r}")
    text = record.get("text", "")
    if not isinstance(text, str):
        raise CorpusError(f"{where}: document {doc_id!r}: 'text' must be a string, "
                          f"got {type(text).__name__}")
    fields = record.get("fields", {})
    if not isinstance(fields, dict):
        raise CorpusError(f"{where}: document {doc_id!r}: 'fields' must be a dict of names to "
                          f"strings, got {type(fields).__name__}")
    for name, value in fields.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise CorpusError(f"{where}: document {doc_id!r}: 'fields' must map names to "
                              f"strings, got {name!r}: {type(value).__name__}")
    metadata = record.get("metadata", {})
    if not isinstance(metadata, dict):
        raise CorpusError(f"{where}: document {doc_id!r}: 'metadata' must be a dict, "
                          f"got {type(metadata).__name__}")
    problem = _json_problem(metadata, "metadata") if metadata else None
    if problem:
        raise CorpusError(f"{where}: document {doc_id!r}: 'metadata' holds {problem}; only "
                          "JSON values are accepted (str, int, float, bool, None, list, "
                          "dict with string keys)")
    try:
        line = orjson.dumps({"fields": fields, "id": doc_id, "metadata": metadata, "text": text},
                            option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError as exc:
        raise CorpusError(f"{where}: document {doc_id!r}: cannot be encoded ({exc})") from None
    return doc_id, line


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
        corpus = cls.__new__(cls)
        corpus._pack(record_line(r, f"record {i}") for i, r in enumerate(records))
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
