"""An immutable corpus: documents in id order, with ordinals and a content digest.

Documents are sorted by id so that nothing downstream can depend on the order a caller
supplied them in, and a document's ordinal doubles as the final tie-break key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from functools import cached_property
from itertools import pairwise

import orjson

from ..errors import CorpusError, DuplicateDocumentError
from ..models import Document
from .canonical import to_plain


def document_bytes(doc: Document) -> bytes:
    """One document's canonical JSON line (without the newline)."""
    return orjson.dumps(to_plain(doc), option=orjson.OPT_SORT_KEYS)


class Corpus(Sequence[Document]):
    """Documents sorted by id, each id unique; never mutated after construction."""

    def __init__(self, documents: Iterable[Document]) -> None:
        docs = sorted(documents, key=lambda d: d.id)
        for before, after in pairwise(docs):
            if before.id == after.id:
                raise DuplicateDocumentError(
                    f"duplicate document id {after.id!r}: every document needs its own id"
                )
        self._docs: tuple[Document, ...] = tuple(docs)
        self.ids: tuple[str, ...] = tuple(d.id for d in docs)

    def __len__(self) -> int:
        return len(self._docs)

    def __getitem__(self, index: int) -> Document:  # type: ignore[override]
        return self._docs[index]

    def __iter__(self) -> Iterator[Document]:
        return iter(self._docs)

    def canonical_lines(self) -> Iterator[bytes]:
        """The canonical corpus as JSON lines, newline-terminated, in id order."""
        for doc in self._docs:
            yield document_bytes(doc) + b"\n"

    @cached_property
    def digest(self) -> str:
        """``sha256:<hex>`` over the canonical JSON lines: the corpus's identity."""
        h = hashlib.sha256()
        for line in self.canonical_lines():
            h.update(line)
        return "sha256:" + h.hexdigest()


def as_corpus(documents: Corpus | Iterable[Document], *, required: bool = True) -> Corpus:
    """Wrap ``documents`` as a Corpus (a Corpus passes through); refuse an empty one if required."""
    corpus = documents if isinstance(documents, Corpus) else Corpus(documents)
    if required and len(corpus) == 0:
        raise CorpusError("the corpus is empty: add at least one document before retrieving")
    return corpus
