"""The inverted index: sorted vocabulary, CSR postings by document ordinal, field-weighted counts.

Built in chunks of documents, read from the corpus as plain records (never a model per
document), so memory stays near the size of the final arrays. Term ids are first handed
out in order of first appearance (cheap), then renumbered to the sorted vocabulary when
postings are laid out, so nothing depends on dict or set iteration order.
Field weights are fixed-point (``WEIGHT_ONE`` units per 1.0), which keeps every count and
length an exact integer.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from itertools import compress, repeat
from operator import is_
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError
from .analyzer import Analyzer, split_identifiers
from .asciitokens import byte_table, classes
from .corpus import RecordSource

WEIGHT_BITS = 4
WEIGHT_ONE = 1 << WEIGHT_BITS
FORM_BITS = 8  # forms of a stem a posting's form byte can name (ADR 0067)
CHUNK_DOCS = 1 << 13  # documents per chunk (local ordinals fit in uint16); bounds the transients
BODY = "text"


def fixed_weights(weights: Mapping[str, float]) -> dict[str, int]:
    """Field weights in 1/16 units; a weight that is not a multiple of 1/16 is refused."""
    fixed: dict[str, int] = {}
    for name in sorted(weights):
        units = float(weights[name]) * WEIGHT_ONE
        if not units.is_integer() or not 0 <= units <= 255:
            raise ConfigError(f"field weight {name}={weights[name]!r} must be a multiple of "
                              f"1/{WEIGHT_ONE} between 0 and {255 / WEIGHT_ONE}")
        fixed[name] = int(units)
    return fixed


@dataclass(frozen=True)
class InvertedIndex:
    """Postings of term ``t`` are ``docs[offsets[t]:offsets[t+1]]`` (ascending), ``tfs`` alike.

    ``tfs`` and ``lengths`` are field-weighted counts in 1/16 units.
    """

    vocabulary: tuple[str, ...]
    offsets: npt.NDArray[np.int64]
    docs: npt.NDArray[np.int32]
    tfs: npt.NDArray[Any]  # uint16 when every count fits, else int32
    lengths: npt.NDArray[np.int64]
    # Where asked for (ADR 0067): bit i of a posting's byte set where its document holds
    # the i-th form of the posting's stem, forms numbered in the order the build first
    # learns them (chunk by chunk; in a chunk, the texts with characters outside ASCII
    # first, each text's new tokens sorted, then the ASCII texts' new tokens sorted), the
    # first FORM_BITS; and each such form's bit, by form.
    forms: npt.NDArray[np.uint8] | None = None
    form_bits: Mapping[str, int] | None = None

    @property
    def n_docs(self) -> int:
        return len(self.lengths)

    @cached_property
    def term_ids(self) -> dict[str, int]:
        return {term: i for i, term in enumerate(self.vocabulary)}

    def df(self) -> npt.NDArray[np.int64]:
        """Document frequency of every term, in vocabulary order."""
        return np.diff(self.offsets)

    def prefix_range(self, prefix: str) -> tuple[int, int]:
        """Term ids ``[lo, hi)`` of every vocabulary term starting with ``prefix``."""
        lo = bisect_left(self.vocabulary, prefix)
        hi = bisect_left(self.vocabulary, prefix + "\U0010ffff", lo)
        return lo, hi


class _Builder:
    """Accumulates one chunk of documents at a time and keeps its per-chunk postings."""

    def __init__(self, analyzer: Analyzer, weights: dict[str, int], forms: bool = False
                 ) -> None:
        self.analyzer, self.weights = analyzer, weights
        self.stem = analyzer.stem if analyzer.stemmer != "none" else None
        # ASCII text takes the compiled path (core.asciitokens), after the rewrite the
        # analyzer applies before splitting (identifiers: ASCII in, ASCII out).
        self.table = byte_table(analyzer.ascii_gaps)
        self.rewrite = split_identifiers if analyzer.identifiers == "split" else None
        self.lookup: dict[str, int] = {}   # raw token -> provisional term id, or -1 (stop word)
        self.terms: list[str] = []         # provisional id -> term
        self.term_of: dict[str, int] = {}  # term -> provisional id
        # Per chunk: its terms as runs (postings are sorted by term), its number of documents
        # and the type its counts are kept in.
        self.runs: list[tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]] = []
        self.sizes: list[int] = []
        self.tf_types: list[type[np.integer[Any]]] = []
        # Every chunk's postings, appended: 2-byte local ordinals, then counts. Two growing
        # buffers rather than arrays per chunk, so that freeing them gives the memory back
        # to the system at once instead of leaving holes that stay resident.
        self.local = bytearray()
        self.tf = bytearray()
        self.lengths: list[npt.NDArray[np.int64]] = []
        # With ``forms``: raw token -> its bit among its stem's forms (-1: none), forms
        # counted a stem, and every chunk's posting bytes.
        self.forms = forms
        self.form_bit: dict[str, int] = {}
        self.form_count: dict[str, int] = {}
        self.form_bytes = bytearray()

    def _learn(self, tokens: set[str]) -> None:
        """Give provisional ids to tokens not seen before, in sorted order (never set order)."""
        lookup, term_of, terms = self.lookup, self.term_of, self.terms
        for token in sorted(tokens):
            if self.analyzer.is_stopword(token):
                lookup[token] = -1
                continue
            # The token is already normalised and split exactly as Analyzer.terms does it,
            # so only the stemmer is left to apply (re-analysing could re-split it).
            key = self.stem(token) if self.stem else token
            if key not in term_of:
                term_of[key] = len(terms)
                terms.append(key)
            lookup[token] = term_of[key]
            if self.forms:
                count = self.form_count.get(key, 0)
                self.form_count[key] = count + 1
                self.form_bit[token] = count if count < FORM_BITS else -1

    def add_chunk(self, docs: Iterable[Mapping[str, Any]]) -> None:
        """Index one chunk of documents, given as plain records (``fields`` and ``text``).

        Only 4-byte term ids are kept until the chunk is counted. ASCII text is split in one
        compiled pass that groups equal tokens (``core.asciitokens``), so only a chunk's
        distinct tokens become strings; other text is split one field at a time, so its
        token strings never all exist at once. Both give the same ids.
        """
        texts: list[str] = []
        seg_doc: list[int] = []
        seg_w: list[int] = []
        weights, n = self.weights, 0
        for local, doc in enumerate(docs):
            n += 1
            fields = doc["fields"]
            if fields:
                for name in sorted(fields):
                    texts.append(fields[name])
                    seg_doc.append(local)
                    seg_w.append(weights.get(name, WEIGHT_ONE))
            texts.append(doc["text"])
            seg_doc.append(local)
            seg_w.append(weights.get(BODY, WEIGHT_ONE))
        docs_of, weights_of = np.asarray(seg_doc, dtype=np.int32), np.asarray(seg_w, np.uint8)
        ascii_ = np.fromiter(map(str.isascii, texts), dtype=bool, count=len(texts))
        plain = [t for t, a in zip(texts, ascii_, strict=True) if a]
        if self.rewrite is not None:
            plain = list(map(self.rewrite, plain))
        grouped = classes(plain, self.table) if plain else None
        bits: npt.NDArray[np.int8] | None = None
        if grouped is None:
            ids, seg_len, bits = self._token_ids(texts)
        else:
            # A string and a lookup per distinct token, not per token. Segments may be
            # counted in any order (a chunk's counts are sums), so the ASCII ones go first.
            names, token_class, ascii_len = grouped
            rest_ids, rest_len, rest_bits = self._token_ids(
                [t for t, a in zip(texts, ascii_, strict=True) if not a])
            ids = np.concatenate([np.asarray(self._known(names), dtype=np.int32)[token_class],
                                  rest_ids])
            if rest_bits is not None:
                bits = np.concatenate([self._bits(names)[token_class], rest_bits])
            seg_len = np.concatenate([ascii_len, rest_len])
            docs_of = np.concatenate([docs_of[ascii_], docs_of[~ascii_]])
            weights_of = np.concatenate([weights_of[ascii_], weights_of[~ascii_]])
        self._close_chunk(ids, n, docs_of, weights_of, seg_len, bits)

    def _bits(self, tokens: list[str]) -> npt.NDArray[np.int8]:
        """Each of ``tokens``' form bit (learnt by ``_known``; -1 for a stop word)."""
        bit = self.form_bit.get
        return np.fromiter((bit(t, -1) for t in tokens), dtype=np.int8, count=len(tokens))

    def _known(self, tokens: list[str]) -> list[int]:
        """The provisional id of each of ``tokens``, learning the new ones first."""
        ids = list(map(self.lookup.get, tokens))
        if None in ids:  # new tokens: learn them (sorted), then look them up again
            self._learn(set(compress(tokens, map(is_, ids, repeat(None)))))
            ids = list(map(self.lookup.get, tokens))
        return cast("list[int]", ids)

    def _token_ids(self, texts: list[str]) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64],
                                                    npt.NDArray[np.int8] | None]:
        """Every token's id, text by text, each text's token count and (with forms) every
        token's form bit: the string path."""
        found = array("i")
        bits = array("b")
        seg_len: list[int] = []
        split = self.analyzer.split_tokens
        for text in texts:
            words = split(text)
            found.extend(self._known(words))
            if self.forms:
                bits.extend(self._bits(words).tolist())
            seg_len.append(len(words))
        return (np.frombuffer(found, dtype=np.int32), np.asarray(seg_len, dtype=np.int64),
                np.frombuffer(bits, dtype=np.int8) if self.forms else None)

    def _close_chunk(self, ids: npt.NDArray[np.int32], n: int, seg_doc: npt.NDArray[Any],
                     seg_w: npt.NDArray[Any], seg_len: npt.NDArray[Any],
                     bits: npt.NDArray[np.int8] | None = None) -> None:
        doc = np.repeat(seg_doc, seg_len)
        weight = np.repeat(seg_w, seg_len)
        keep = ids >= 0
        ids, doc, weight = ids[keep], doc[keep], weight[keep]
        # Sums of small integers in float64 are exact (far below 2**53).
        self.sizes.append(n)
        self.lengths.append(np.bincount(doc, weights=weight, minlength=n).astype(np.int64))
        # uint32 keys sort faster than int64 when the key space allows it.
        key_type: Any = np.uint32 if len(self.terms) * n < 1 << 32 else np.int64
        keys = ids.astype(key_type)
        keys *= key_type(n)
        keys += doc.astype(key_type)
        if bits is None and np.all(weight == WEIGHT_ONE):
            uniq, counts = np.unique(keys, return_counts=True)
            tf = counts.astype(np.int32) * WEIGHT_ONE
        else:
            uniq, inverse = np.unique(keys, return_inverse=True)
            tf = np.bincount(inverse, weights=weight).astype(np.int32)
        if bits is not None:
            kept = bits[keep]
            masks = np.zeros(len(uniq), dtype=np.uint8)
            # OR is order-free: any occurrence of a numbered form sets its bit.
            np.bitwise_or.at(masks, inverse[kept >= 0],
                             np.left_shift(1, kept[kept >= 0]).astype(np.uint8))
            self.form_bytes += masks.data
        # Compact while waiting for layout (every posting is held once, until finish).
        tf_type = np.uint16 if len(tf) == 0 or int(tf.max()) <= 0xFFFF else np.int32
        run_terms, run_lengths = np.unique(uniq // n, return_counts=True)
        self.runs.append((run_terms.astype(np.int32), run_lengths.astype(np.int64)))
        self.tf_types.append(tf_type)
        self.local += (uniq % n).astype(np.uint16).data
        self.tf += tf.astype(tf_type).data

    def _positions(self, rank: npt.NDArray[np.int64],
                   offsets: npt.NDArray[np.int64]) -> Iterator[tuple[npt.NDArray[np.int64], int]]:
        """Where each chunk's postings go in the laid-out arrays, and the chunk's first ordinal.

        Each run goes to its term's fill mark, in document order within the run.
        """
        filled = offsets[:-1].copy()
        base = 0
        for (run_terms, run_lengths), size in zip(self.runs, self.sizes, strict=True):
            t = rank[run_terms]
            run_starts = np.cumsum(run_lengths) - run_lengths
            count = int(run_lengths.sum())
            yield np.repeat(filled[t] - run_starts, run_lengths) + np.arange(count), base
            filled[t] += run_lengths
            base += size

    def _lay_out(self, out: npt.NDArray[Any], buffer: bytearray,
                 types: list[type[np.integer[Any]]], rank: npt.NDArray[np.int64],
                 offsets: npt.NDArray[np.int64], *, ordinals: bool) -> None:
        """Scatter every chunk's values from ``buffer`` into ``out``; with ``ordinals``, the
        values are local document ordinals and become corpus ordinals on the way."""
        start = 0
        for (pos, base), kind in zip(self._positions(rank, offsets), types, strict=True):
            values = np.frombuffer(buffer, dtype=kind, count=len(pos), offset=start)
            out[pos] = values.astype(np.int32) + base if ordinals else values
            start += values.nbytes

    def finish(self) -> InvertedIndex:
        order = sorted(range(len(self.terms)), key=self.terms.__getitem__)
        rank = np.empty(len(order), dtype=np.int64)
        rank[np.asarray(order, dtype=np.int64)] = np.arange(len(order))
        df = np.zeros(len(order), dtype=np.int64)
        for run_terms, run_lengths in self.runs:
            df[rank[run_terms]] += run_lengths  # a term has one run per chunk
        offsets = np.zeros(len(order) + 1, dtype=np.int64)
        np.cumsum(df, out=offsets[1:])
        # Documents first, then counts: each buffer is freed before the next array is made.
        docs = np.empty(int(offsets[-1]), dtype=np.int32)
        self._lay_out(docs, self.local, [np.uint16] * len(self.runs), rank, offsets,
                      ordinals=True)
        self.local = bytearray()
        wide = any(t != np.uint16 for t in self.tf_types)
        tfs = np.empty(int(offsets[-1]), dtype=np.int32 if wide else np.uint16)
        self._lay_out(tfs, self.tf, self.tf_types, rank, offsets, ordinals=False)
        self.tf = bytearray()
        forms = None
        if self.forms:
            forms = np.empty(int(offsets[-1]), dtype=np.uint8)
            self._lay_out(forms, self.form_bytes, [np.uint8] * len(self.runs), rank, offsets,
                          ordinals=False)
            self.form_bytes = bytearray()
        lengths = np.concatenate(self.lengths) if self.lengths else np.zeros(0, np.int64)
        vocabulary = tuple(self.terms[i] for i in order)
        return InvertedIndex(vocabulary=vocabulary, offsets=offsets, docs=docs, tfs=tfs,
                             lengths=lengths, forms=forms,
                             form_bits={t: b for t, b in self.form_bit.items() if b >= 0}
                             if self.forms else None)


def build_index(corpus: RecordSource, analyzer: Analyzer,
                field_weights: Mapping[str, float] | None = None, *,
                forms: bool = False) -> InvertedIndex:
    """Index ``corpus`` (a Corpus or a CorpusStream) with ``analyzer``; field ``text`` is
    the body, other fields weigh 1.0 unless ``field_weights`` says otherwise; with
    ``forms``, each posting's form byte too (ADR 0067)."""
    weights = fixed_weights(field_weights or {})
    builder = _Builder(analyzer, weights, forms)
    for chunk in corpus.record_chunks(CHUNK_DOCS):
        builder.add_chunk(chunk)
    return builder.finish()
