"""The inverted index: sorted vocabulary, postings in document order, chunking invisible."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from rookhaven.core import index as index_module
from rookhaven.core.analyzer import Analyzer, split_tokens
from rookhaven.core.corpus import Corpus
from rookhaven.core.index import InvertedIndex, build_index
from rookhaven.errors import ConfigError
from rookhaven.models import Document
from tests.reference_analysis import interpreter_split_tokens

DOCS = [Document(id=f"d{i}", text=text, fields=fields) for i, (text, fields) in enumerate([
    ("Cranes lift containers; the crane rests.", {"title": "Crane report"}),
    ("Tide tables for the harbour pilots", {}),
    ("", {"title": "Empty body"}),
    ("The the the", {}),
    ("SyntaxErrors and syntax checks", {"keywords": "parser"}),
])]


def _naive(docs: list[Document], analyzer: Analyzer) -> dict[str, list[tuple[int, int]]]:
    postings: dict[str, list[tuple[int, int]]] = {}
    for ordinal, doc in enumerate(sorted(docs, key=lambda d: d.id)):
        counts: dict[str, int] = {}
        for text in [*(doc.fields[k] for k in sorted(doc.fields)), doc.text]:
            for t in analyzer.terms(text):
                counts[t] = counts.get(t, 0) + 16
        for t, c in counts.items():
            postings.setdefault(t, []).append((ordinal, c))
    return postings


def _postings(index: InvertedIndex, term_id: int) -> tuple[Any, Any]:
    lo, hi = int(index.offsets[term_id]), int(index.offsets[term_id + 1])
    return index.docs[lo:hi], index.tfs[lo:hi]


@pytest.mark.parametrize("stemmer", ["none", "english"])
def test_postings_match_a_naive_count_and_vocabulary_is_sorted(stemmer: str) -> None:
    analyzer = Analyzer(stemmer=stemmer)
    index = build_index(Corpus(DOCS), analyzer)
    assert list(index.vocabulary) == sorted(index.vocabulary)
    naive = _naive(DOCS, analyzer)
    assert sorted(naive) == list(index.vocabulary)
    for t, term in enumerate(index.vocabulary):
        docs, tfs = _postings(index, t)
        assert list(zip(docs.tolist(), tfs.tolist(), strict=True)) == naive[term]


def test_building_in_small_chunks_gives_the_same_arrays(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = build_index(Corpus(DOCS), Analyzer())
    monkeypatch.setattr(index_module, "CHUNK_DOCS", 2)
    chunked = build_index(Corpus(DOCS), Analyzer())
    assert chunked.vocabulary == whole.vocabulary
    for name in ("offsets", "docs", "tfs", "lengths"):
        assert np.array_equal(getattr(chunked, name), getattr(whole, name)), name


def test_field_weights_scale_counts_and_lengths() -> None:
    index = build_index(Corpus(DOCS), Analyzer(), {"title": 2.0})
    docs, tfs = _postings(index, index.term_ids["crane"])
    assert docs.tolist() == [0] and tfs.tolist() == [16 + 32]
    assert index.lengths[0] == 16 * 5 + 32 * 2


def test_a_field_weight_off_the_sixteenth_grid_is_refused() -> None:
    with pytest.raises(ConfigError, match="multiple of 1/16"):
        build_index(Corpus(DOCS), Analyzer(), {"title": 0.3})


@pytest.mark.parametrize("text", ["Hello, World! x_y 3.5 a-b\\tc\\x1fd", "ﬁne Straße ＡＢＣ", "",
                                  "naïve café_au-lait", "\\x00\\x7f~^`|", "İstanbul ΣΑΣ"])
def test_the_pinned_splitter_agrees_with_the_interpreter_on_long_assigned_text(text: str) -> None:
    assert Analyzer().split_tokens(text) == split_tokens(text) == interpreter_split_tokens(text)
