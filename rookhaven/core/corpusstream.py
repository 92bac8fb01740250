"""A corpus read once, in id order, straight into an index: lines hashed as they pass, never kept.

A ``Corpus`` keeps every canonical line so that it can hand documents back; a Retriever
needs only the ids, the digest and the index (docs/adr/0028-corpus-streamed-into-index.md).
At a million documents the lines are 900 MB that nothing reads after the build, so a worker
loading a stored corpus, or anyone indexing a file already in id order, streams it: each
line is parsed for the index builder, hashed into the digest and dropped. What is left is
a ``CorpusSummary``: the ids and the digest, the same as the ``Corpus`` of those lines.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any

import orjson

from ..errors import CorpusError, DuplicateDocumentError, IntegrityError, shown
from .corpus import DocumentLimits, record_line


@dataclass(frozen=True)
class CorpusSummary:
    """What a Retriever keeps of a streamed corpus: its ids in order and its digest."""

    ids: tuple[str, ...]
    digest: str

    def __len__(self) -> int:
        return len(self.ids)


class CorpusStream:
    """Canonical lines in strictly increasing id order, read once by an index builder.

    Make one with ``from_records`` (records checked and encoded as ``Corpus.from_records``
    does) or ``from_lines`` (canonical lines, trusted only through the digest they must
    hash to). ``summary()`` is available once ``record_chunks`` has been read to the end.
    """

    def __init__(self, pairs: Iterable[tuple[str, bytes, dict[str, Any] | None]],
                 expected_digest: str | None = None) -> None:
        self._pairs = iter(pairs)
        self._expected = expected_digest
        self._summary: CorpusSummary | None = None
        self._started = False

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]],
                     limits: DocumentLimits | None = None) -> CorpusStream:
        """Plain records (``{"id", "text", "fields", "metadata"}``), already in id order."""
        # The builder reads only fields and text, which record_line has checked: it gets
        # them from the record rather than parsing the line just encoded.
        return cls((*record_line(r, f"record {i}", limits),
                    {"fields": r.get("fields") or {}, "text": r.get("text", "")})
                   for i, r in enumerate(records))

    @classmethod
    def from_lines(cls, lines: Iterable[bytes], digest: str) -> CorpusStream:
        """Canonical JSON lines (no newline) of the corpus ``digest``, in id order; the
        stream raises IntegrityError at its end if they do not hash to ``digest``."""
        def parsed() -> Iterator[tuple[str, bytes, dict[str, Any] | None]]:
            for number, line in enumerate(lines, start=1):
                try:
                    record = orjson.loads(line)
                    doc_id = record["id"]
                except (orjson.JSONDecodeError, KeyError, TypeError):
                    raise IntegrityError(f"corpus {digest}: line {number} is not a canonical "
                                         "document; its stored bytes were changed") from None
                yield doc_id, line, record
        return cls(parsed(), expected_digest=digest)

    def record_chunks(self, size: int) -> Iterator[Iterator[dict[str, Any]]]:
        """The documents as plain dicts, ``size`` at a time, in id order; once only."""
        if self._started:
            raise RuntimeError("a CorpusStream is read once")  # a bug, not input
        self._started = True
        ids: list[str] = []
        digest = hashlib.sha256()
        records = self._checked(ids, digest)
        while chunk := list(islice(records, size)):
            yield iter(chunk)
        found = "sha256:" + digest.hexdigest()
        if self._expected is not None and found != self._expected:
            raise IntegrityError(f"stored corpus {self._expected} hashes to {found}: its bytes "
                                 "were changed in Redis; add the corpus file again under a new "
                                 "name")
        self._summary = CorpusSummary(tuple(ids), found)

    def _checked(self, ids: list[str], digest: Any) -> Iterator[dict[str, Any]]:
        last: str | None = None
        for doc_id, line, record in self._pairs:
            if last is not None and doc_id <= last:
                if doc_id == last:
                    raise DuplicateDocumentError(f"duplicate document id {doc_id!r}: every "
                                                 "document needs its own id")
                raise CorpusError(f"document {shown(doc_id)} comes after {shown(last)}: a "
                                  "streamed corpus must be in id order; build a Corpus instead")
            last = doc_id
            ids.append(doc_id)
            digest.update(line)
            digest.update(b"\n")
            yield record if record is not None else orjson.loads(line)

    def summary(self) -> CorpusSummary:
        """The ids and digest of the lines read (after ``record_chunks`` was exhausted)."""
        if self._summary is None:
            raise RuntimeError("CorpusStream.summary() before the stream was read")  # a bug
        return self._summary
