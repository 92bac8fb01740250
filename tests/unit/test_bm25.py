"""The bm25 provider's promises: smoothed IDF, prefixes, coverage, synonyms, fields, exactness."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rookhaven import Document, RetrievalRequest, Retriever, canonical_bytes, retrieve
from rookhaven.core.corpus import Corpus
from rookhaven.core.engines import make_provider
from rookhaven.core.providers.bm25 import Bm25Provider
from rookhaven.core.providers.impacts import idf
from rookhaven.errors import ConfigError


def _ids(query: str, docs: list[Document], **params: object) -> list[str]:
    result = retrieve(RetrievalRequest(query=query, recall_budget=10), docs, "bm25", **params)
    return [h.id for h in result.hits]


def test_a_one_document_corpus_returns_its_document() -> None:
    assert _ids("harbour", [Document(id="only", text="The harbour at dawn")]) == ["only"]


def test_a_term_in_every_document_still_scores_above_zero() -> None:
    assert idf(10, 10) > 0
    docs = [Document(id=f"d{i}", text="crane") for i in range(3)]
    assert len(_ids("crane", docs)) == 3


def test_a_prefix_reaches_a_longer_token_at_reduced_weight() -> None:
    docs = [Document(id="a", text="SyntaxErrors everywhere"), Document(id="b", text="syntax")]
    result = retrieve(RetrievalRequest(query="syntax"), docs, "bm25", stemmer="none")
    scores = {h.id: h.score for h in result.hits}
    assert set(scores) == {"a", "b"} and scores["a"] < scores["b"]
    assert _ids("syntax", docs, stemmer="none", prefix_weight=0.0) == ["b"]


def test_matching_more_distinct_terms_beats_repeating_one() -> None:
    docs = [Document(id="rep", text="pilot pilot pilot pilot pilot tide"),
            Document(id="both", text="pilot tide berth"),
            Document(id="other", text="weather report")]
    assert _ids("pilot berth", docs)[0] == "both"


def test_synonyms_match_at_reduced_weight() -> None:
    docs = [Document(id="v", text="the vessel sailed"), Document(id="s", text="the ship sailed"),
            Document(id="x", text="the crane")]
    assert _ids("ship", docs, synonyms={"ship": ["vessel"]}) == ["s", "v"]
    assert _ids("ship", docs) == ["s"]


def test_a_title_match_outweighs_the_same_match_in_the_body() -> None:
    docs = [Document(id="body", text="tide tables and more words here", fields={"title": "x"}),
            Document(id="title", text="and more words here", fields={"title": "tide tables"})]
    assert _ids("tide", docs)[0] == "title"


def test_every_score_changing_parameter_is_in_the_config() -> None:
    base = make_provider("bm25").config()
    variants = [{"k1": 1.5}, {"b": 0.5}, {"prefix_weight": 0.3}, {"prefix_min_len": 3},
                {"prefix_max_terms": 8}, {"coverage": 0.5}, {"synonym_weight": 0.25},
                {"synonyms": {"quay": ["berth"]}}, {"field_weights": {"title": 3.0}},
                {"stemmer": "none"}, {"stopwords": "none"}]
    for params in variants:
        assert make_provider("bm25", **params).config() != base, params


def test_unknown_parameters_are_refused_with_the_accepted_list() -> None:
    with pytest.raises(ConfigError, match="accepts stopwords, stemmer, split, k1"):
        make_provider("bm25", k3=8)
    with pytest.raises(ConfigError, match="between 0 and 1"):
        make_provider("bm25", coverage=2.0)


_PORT = ["tide", "pilot", "berth", "crane", "quay", "vessel", "cargo", "lock", "draft", "harbour"]
CORPUS = [Document(id=f"d{i:03d}", text=" ".join(random.Random(i).choice(_PORT)
                                                for _ in range(12)),
    fields={"title": random.Random(-i).choice(["tide", "crane", "cargo", ""])})
    for i in range(120)]


def test_scores_do_not_depend_on_the_order_terms_are_processed_in() -> None:
    index = Bm25Provider().build(Corpus(CORPUS))
    terms = ["tide", "pilot", "pilot", "berth", "crane", "harb"]
    expected = index.score(terms)
    for seed in range(10):
        shuffled = terms[:]
        random.Random(seed).shuffle(shuffled)
        plan = index.plan(shuffled)
        random.Random(seed).shuffle(plan)
        ords, units = index.scorer.score_all(plan)
        assert np.array_equal(ords, expected[0]) and np.array_equal(units, expected[1])


class _FullOnly:
    """An index without the top-k fast path (all else forwarded), to compare bytes against."""

    def __init__(self, index: Any) -> None:
        self._index = index

    def __getattr__(self, name: str) -> Any:
        if name == "top":  # so the engine sees no TopKIndex and scores every match
            raise AttributeError(name)
        found = getattr(self._index, name)
        if name == "subquery_index":  # where subqueries rank on the index itself: on this
            return lambda: self if found() is self._index else found()
        return found


def _full_only(engine: str, monkeypatch: pytest.MonkeyPatch) -> Retriever:
    """A Retriever of ``engine`` over ``CORPUS`` whose index has no top-k fast path."""
    provider = type(make_provider(engine))
    build = provider.build
    with monkeypatch.context() as patch:
        patch.setattr(provider, "build", lambda self, corpus: _FullOnly(build(self, corpus)))
        return Retriever(CORPUS, engine)


@pytest.mark.parametrize("engine", ["bm25@2", "bm25@3"])
@pytest.mark.parametrize("budget", [1, 3, 10, 50])
def test_top_k_fast_path_gives_the_same_bytes_as_full_scoring(
        budget: int, engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = Retriever(CORPUS, engine)
    slow = _full_only(engine, monkeypatch)
    assert not hasattr(slow.index, "top") and hasattr(fast.index, "top")
    for query in ["tide and pilot, berth", "crane", "cargo lock; draft quay and vessel",
                  "harb or tide or tide", "nothing matches this"]:
        for decompose in (True, False):
            request = RetrievalRequest(query=query, recall_budget=budget, decompose=decompose)
            assert canonical_bytes(fast.retrieve(request)) == canonical_bytes(
                slow.retrieve(request)), (query, decompose)


@pytest.mark.parametrize("window", [None, 64, 4096])
def test_the_pruned_kernel_keeps_exactly_the_documents_at_or_above_the_kth_score(
        window: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    from rookhaven.core.providers import kernel

    if not kernel.AVAILABLE:
        pytest.skip("numba is not installed: the kernel is not used")
    if window is not None:  # small windows: many windows, so pruning across them is exercised
        monkeypatch.setattr(kernel, "WINDOW", window)
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(60)] + ["wide", "widen", "widening"]
    docs = [Document(id=f"d{i:04d}", text=" ".join(
        rng.choice(vocab[: rng.randint(3, len(vocab))]) for _ in range(rng.randint(1, 30))))
        for i in range(700)]
    index = Bm25Provider(synonyms={"w1": ["w2"]}).build(Corpus(docs))
    for _ in range(150):
        terms = [rng.choice(vocab) for _ in range(rng.randint(1, 9))]
        k = rng.choice([1, 2, 5, 10, 50, 1000])
        plan = index.plan(terms)
        ords, units = index.scorer.score_all(plan)
        if len(units) > k:
            cut = np.sort(units)[-k]
            ords, units = ords[units >= cut], units[units >= cut]
        got_o, got_u = index.top(terms, k)
        order = np.argsort(got_o)
        assert np.array_equal(got_o[order], ords) and np.array_equal(got_u[order], units), terms


def test_bm25_is_the_default_provider_everywhere() -> None:
    from rookhaven.config import Settings

    assert Settings().engine == Settings.from_mapping({}).engine == "bm25@6"
    result = retrieve(RetrievalRequest(query="tide"), CORPUS)
    assert result.audit.engine.name == "bm25"
    assert Retriever(CORPUS).provider.name == "bm25"


def test_a_synonyms_file_reads_groups_and_one_way_rules(tmp_path: Path) -> None:
    from rookhaven.synonymfile import load_synonyms, parse_synonyms

    path = tmp_path / "syn.txt"
    path.write_text("# port words\nship, vessel\n\nquay => berth, wharf\n")
    assert load_synonyms(path) == {"quay": ["berth", "wharf"], "ship": ["vessel"],
                                   "vessel": ["ship"]}
    with pytest.raises(ConfigError, match="line 1"):
        parse_synonyms("lonely")
    docs = [Document(id="b", text="the berth"), Document(id="q", text="the quay")]
    assert _ids("quay", docs, synonyms=load_synonyms(path)) == ["q", "b"]
    assert _ids("berth", docs, synonyms=load_synonyms(path)) == ["b"]


_SKEWED = [Document(id="many", text="crane " * 3000), Document(id="one", text="crane tide")] + [
    Document(id=f"f{i}", text="filler words " * 50) for i in range(50)]


@pytest.mark.parametrize("engine", ["bm25@1", "bm25@2", "bm25@3", "bm25@4"])
@pytest.mark.parametrize("k1", [100.0, 1e20, 1e308])
def test_a_k1_whose_impacts_overflow_is_refused_not_ranked(engine: str, k1: float) -> None:
    # int32 impacts: a float past 2**31 cast to int32 is undefined (x86 gave -2**31 and the
    # best document vanished; ARM saturates), so the bytes would depend on the CPU.
    with np.errstate(all="raise"), pytest.raises(ConfigError, match="lower k1"):
        Retriever(_SKEWED, engine, k1=k1)


@pytest.mark.parametrize("engine", ["bm25@1", "bm25@2", "bm25@3", "bm25@4"])
def test_a_large_k1_that_fits_still_ranks_the_heavy_document_first(engine: str) -> None:
    result = Retriever(_SKEWED, engine, k1=40.0).retrieve(
        RetrievalRequest(query="crane", recallBudget=3, seed="x"))
    assert [h.id for h in result.hits][:2] == ["many", "one"]
