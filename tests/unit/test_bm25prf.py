"""bm25@3's pieces against the brute-force reference in tests/reference_prf.py, and its audit."""

from __future__ import annotations

import random

import pytest

from rookhaven import RetrievalRequest, Retriever, canonical_bytes
from rookhaven.core.analyzer import Analyzer
from rookhaven.core.corpus import Corpus
from rookhaven.core.engines import make_provider
from rookhaven.core.providers.bm25prf import Bm25PrfProvider
from rookhaven.core.providers.feedback import interpolate
from rookhaven.errors import ConfigError
from tests.reference_prf import ReferencePrf
from tests.unit.test_bm25_differential import WORDS, _corpus


def _params(rng: random.Random) -> dict[str, object]:
    return {"k1": rng.choice([0.9, 1.2]), "b": rng.choice([0.0, 0.75, 1.0]),
            "coverage": rng.choice([0.0, 0.25]),
            "tf_bound": rng.choice(["none", "bm25+", "bm25l"]),
            "delta": rng.choice([0.25, 0.5, 1.0]), "fb_docs": rng.choice([1, 3, 10]),
            "fb_terms": rng.choice([1, 4, 10]), "original_weight": rng.choice([0.0, 0.5, 0.7]),
            "fb_max_df": rng.choice([0.1, 0.5, 1.0])}


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("feedback", ["rm3", "bo1"])
def test_feedback_scores_equal_the_brute_force_reference_to_the_unit(seed: int,
                                                                      feedback: str) -> None:
    rng = random.Random(seed)
    docs = _corpus(rng, rng.randint(1, 40))
    analyzer = Analyzer(stemmer=rng.choice(["none", "english"]))
    params = _params(rng)
    index = Bm25PrfProvider(analyzer=analyzer, feedback=feedback, **params).build(  # type: ignore[arg-type]
        Corpus(docs))
    reference = ReferencePrf(docs, analyzer, feedback=feedback, **params)
    ids = Corpus(docs).ids
    for _ in range(6):
        terms = analyzer.terms(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))))
        ords, units = index.score(terms)
        got = {ids[o]: u for o, u in zip(ords.tolist(), units.tolist(), strict=True)}
        assert got == reference.score(terms), (terms, params)
        if terms:
            explained = index.explain(terms)
            assert explained is not None
            order, _ = reference.feedback_terms(terms)
            assert explained["feedback_docs"] == order
            assert {t["term"]: round(t["weight"] * 4096) for t in explained["terms"]} == \
                reference.weights(terms)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("bound", ["none", "bm25+", "bm25l"])
def test_lower_bounded_impacts_equal_the_reference_without_feedback(seed: int,
                                                                    bound: str) -> None:
    rng = random.Random(100 + seed)
    docs = _corpus(rng, rng.randint(1, 30))
    analyzer = Analyzer(stemmer="english")
    index = Bm25PrfProvider(analyzer=analyzer, feedback="none", tf_bound=bound,
                            delta=0.5).build(Corpus(docs))
    reference = ReferencePrf(docs, analyzer, feedback="none", tf_bound=bound, delta=0.5)
    ids = Corpus(docs).ids
    for _ in range(6):
        terms = analyzer.terms(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5))))
        ords, units = index.score(terms)
        got = {ids[o]: u for o, u in zip(ords.tolist(), units.tolist(), strict=True)}
        assert got == super(ReferencePrf, reference).score(terms)


def test_without_a_lower_bound_bm25_3_scores_as_bm25_2_does() -> None:
    docs = _corpus(random.Random(7), 30)
    old = make_provider("bm25@2").build(Corpus(docs))
    new = make_provider("bm25@3", tf_bound="none", feedback="none").build(Corpus(docs))
    for terms in (["crane"], ["tide", "pilot", "tide"], ["syntax", "quay"]):
        assert [a.tolist() for a in old.score(terms)] == [a.tolist() for a in new.score(terms)]


@pytest.mark.parametrize("budget", [1, 3, 10, 50])
@pytest.mark.parametrize("scope", ["whole-query", "subquery"])
def test_the_top_k_path_gives_the_bytes_of_full_scoring(budget: int, scope: str) -> None:
    docs = _corpus(random.Random(3), 60)
    fast = Retriever(docs, "bm25@3", feedback_scope=scope)
    slow = Retriever(docs, "bm25@3", feedback_scope=scope)
    slow._top = None  # every score from full scoring
    slow._parts = slow.index if scope == "subquery" else slow._parts
    for query in ("crane and tide", "pilot vessels; quay draft", "harbor"):
        request = RetrievalRequest(query=query, recall_budget=budget, seed="s")
        assert canonical_bytes(fast.result_data(request)) == canonical_bytes(
            slow.result_data(request))


def test_the_audit_names_feedback_documents_and_weighted_terms() -> None:
    docs = _corpus(random.Random(5), 40)
    retriever = Retriever(docs, "bm25@3", feedback="rm3", feedback_scope="whole-query")
    request = RetrievalRequest(query="crane tide and pilot", recall_budget=5, seed="s")
    data = retriever.result_data(request)
    assert canonical_bytes(data) == canonical_bytes(retriever.retrieve(request))
    expansion = data["audit"]["expansion"]
    assert expansion["method"] == "rm3"
    assert set(expansion["feedback_docs"]) <= {d.id for d in docs}
    assert {t["from"] for t in expansion["terms"]} <= {"query", "feedback", "query+feedback"}
    assert sum(t["weight"] for t in expansion["terms"]) <= 1.0
    # Under whole-query scope a subquery other than the whole query is not expanded.
    assert all("expansion" not in s for s in data["audit"]["subqueries"])
    config = data["audit"]["config"]["params"]
    assert config["feedback"]["method"] == "rm3" and config["parameters"]["fb_docs"] == 10


def test_older_engines_write_no_expansion_key() -> None:
    docs = _corpus(random.Random(5), 10)
    request = RetrievalRequest(query="crane tide", recall_budget=3, seed="s")
    for engine in ("bm25@1", "bm25@2", "tfcosine@1"):
        result = Retriever(docs, engine).retrieve(request)
        assert b"expansion" not in canonical_bytes(result)


def test_interpolation_keeps_the_query_alone_when_feedback_is_empty() -> None:
    assert interpolate({1: 2, 2: 1}, {}, 2048) == {1: 2730, 2: 1365}
    assert interpolate({1: 1}, {1: 5, 3: 5}, 2048) == {1: 3072, 3: 1024}


@pytest.mark.parametrize("bad", [{"tf_bound": "bm99"}, {"feedback": "rocchio"},
                                 {"fb_docs": 0}, {"delta": 3.0}, {"original_weight": 1.5},
                                 {"feedback_scope": "everything"}])
def test_bad_feedback_parameters_are_refused_naming_the_choices(bad: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        make_provider("bm25@3", **bad)
