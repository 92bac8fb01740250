"""hybrid@1: bm25@6's integers fused with a static model's exact cosine order, by digest."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rookhaven import Document, RetrievalRequest, Retriever, canonical_bytes
from rookhaven.core import compiled
from rookhaven.core.engines import make_provider
from rookhaven.core.semantic import fusion
from rookhaven.core.semantic.vectors import (
    _keys_reference,
    candidates,
    code_planes,
    document_vectors,
    keys_of,
    radii,
    rarity_weights,
    scaled,
    sign_codes,
)
from rookhaven.embedding import offer_directory, wordllama_files
from rookhaven.errors import ConfigError, ModelUnavailableError
from tests.model_support import write_small_model

needs_model = pytest.mark.skipif(wordllama_files() is None, reason="wordllama is not installed")
CORPUS = [
    Document(id="push", text="send a push notification to a mobile device"),
    Document(id="sms", text="deliver a text message to a phone number"),
    Document(id="crane", text="crane maintenance schedule for berth 7",
             fields={"title": "Crane upkeep"}),
    Document(id="tide", text="berth delays caused by tide windows"),
    Document(id="empty", text=""),
    Document(id="mail", text="send an email with an attachment"),
]


def _cosine_order(vectors: np.ndarray, query: np.ndarray) -> list[int]:
    """Documents by exact cosine (dot * |dot| / |d|^2 as a Fraction), ties by ordinal."""
    def signed_square(i: int) -> Fraction:
        dot = int(np.dot(vectors[i].astype(object), query.astype(object)))
        return Fraction(dot * abs(dot), int((vectors[i].astype(object) ** 2).sum()))
    live = [i for i in range(len(vectors)) if vectors[i].any()]
    return sorted(live, key=lambda i: (-signed_square(i), i))


def _random_index(seed: int, documents: int, zero_every: int) -> tuple[Any, Any, Any, Any]:
    """Random int8 document vectors (every ``zero_every``-th all zeros), their radii and
    sign codes, and a random int16-range query: a semantic index without a model."""
    rng = np.random.default_rng(seed)
    vectors = rng.integers(-127, 128, size=(documents, 256)).astype(np.int8)
    vectors[::zero_every] = 0
    query = rng.integers(-32767, 32768, size=256).astype(np.int32)
    return vectors, radii(vectors), sign_codes(vectors), query


def _compiled_as_reference(make: Any, *args: Any) -> Any:
    """``make(*args)`` with the compiled code live, asserted equal, array by array, to its
    answer on the reference path."""
    live = make(*args)
    compiled.hold()
    try:
        held = make(*args)
    finally:
        compiled.release()
    assert all(np.array_equal(a, b) for a, b in zip(live, held, strict=True))
    return live


def test_semantic_keys_order_documents_as_their_exact_cosine_does() -> None:
    rng = np.random.default_rng(3)
    vectors = scaled(rng.integers(-500, 500, size=(300, 64)), 127).astype(np.int8)
    vectors[5] = 0
    query = scaled(rng.integers(-900, 900, size=64), 32767)[0].astype(np.int32)
    keys = _keys_reference(vectors, radii(vectors), query)
    ours = sorted(np.flatnonzero(radii(vectors) > 0).tolist(), key=lambda i: (-keys[i], i))
    exact = _cosine_order(vectors, query)
    # isqrt's floor moves a key by less than one part in 2^16 of the norm: the orders may
    # differ only between cosines that close.
    mismatched = [(a, b) for a, b in zip(ours, exact, strict=True) if a != b]
    assert len(mismatched) <= 2
    assert keys[5] == np.iinfo(np.int64).min


@pytest.mark.skipif(not compiled.AVAILABLE, reason="numba is not installed")
def test_the_compiled_semantic_list_is_the_reference_integers_over_many_documents() -> None:
    from rookhaven.core.semantic.lists import semantic_list
    vectors, r, codes, query = _random_index(4, 5000, 97)
    for limit, depth in ((500, 100), (10**6, 300)):
        live = _compiled_as_reference(semantic_list, vectors, r, code_planes(codes), query,
                                      limit, depth)
        assert len(live[0]) >= depth


@pytest.mark.skipif(not compiled.AVAILABLE, reason="numba is not installed")
def test_the_compiled_semantic_list_keeps_every_tie_at_its_depth_as_the_reference() -> None:
    """Seven distinct vectors among 3,000 documents: keys tie by the hundred, so the depth
    falls inside a tie at nearly every cut the compiled list sorts only above."""
    from rookhaven.core.semantic.lists import semantic_list
    rng = np.random.default_rng(7)
    vectors = rng.integers(-127, 128, size=(7, 256)).astype(np.int8)[rng.integers(0, 7, 3000)]
    vectors[::97] = 0
    r, codes = radii(vectors), sign_codes(vectors)
    for _ in range(20):
        query = rng.integers(-32767, 32768, size=256).astype(np.int32)
        for limit, depth in ((500, 100), (3000, 5), (10**6, 1000), (100, 100), (10, 1)):
            _compiled_as_reference(semantic_list, vectors, r, code_planes(codes), query, limit,
                                   depth)


def test_competition_ranks_share_a_rank_and_keep_every_tie_at_the_cut() -> None:
    ords = np.array([10, 11, 12, 13, 14, 15])
    keys = np.array([5, 9, 9, 7, 5, 1])
    got_ords, ranks = fusion.competition_top(ords, keys, 4)
    assert got_ords.tolist() == [11, 12, 13, 10, 14]
    assert ranks.tolist() == [1, 1, 3, 4, 4]


def test_the_compiled_competition_ranks_are_the_reference_ones() -> None:
    from rookhaven.core.semantic.lists import ranked
    rng = np.random.default_rng(11)
    cases = [(rng.permutation(400)[:n], rng.integers(1, span, n), depth)
             for n in (0, 1, 7, 150, 400) for span in (3, 50, 10**9) for depth in (0, 1, 5, 100)]
    live = [ranked(ords, keys, depth) for ords, keys, depth in cases]
    compiled.hold()
    try:
        held = [ranked(ords, keys, depth) for ords, keys, depth in cases]
    finally:
        compiled.release()
    for (ords, keys, depth), a, b in zip(cases, live, held, strict=True):
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]), (len(ords), depth)
        assert np.array_equal(b[0], fusion.competition_top(ords, keys, depth)[0])
    assert any(len(a[0]) > depth for (_, _, depth), a in zip(cases, live, strict=True))


def test_fused_scores_are_the_integer_reciprocal_rank_sums() -> None:
    lexical = (np.array([3, 1, 2]), np.array([1, 2, 2]))
    semantic = (np.array([2, 7]), np.array([1, 2]))
    ords, units, lex, sem = fusion.fuse(lexical, semantic, 204, 51, 60)
    assert ords.tolist() == [1, 2, 3, 7]
    expected = [(204 << 24) // 62, (204 << 24) // 62 + (51 << 24) // 61,
                (204 << 24) // 61, (51 << 24) // 62]
    assert units.tolist() == expected
    assert lex.tolist() == [2, 2, 1, 0] and sem.tolist() == [0, 1, 0, 2]


@needs_model
def test_the_semantic_half_finds_a_document_that_shares_no_word_with_the_query() -> None:
    retriever = Retriever(CORPUS, "hybrid@1")
    result = retriever.retrieve(RetrievalRequest(query="alert people on their phones",
                                                 recallBudget=3))
    assert result.hits, "bm25 alone matches nothing here but 'phones' -> 'phone'"
    ranked = [h.id for h in result.hits]
    assert {"push", "sms"} & set(ranked[:2])
    bm25 = Retriever(CORPUS, "bm25@6").retrieve(
        RetrievalRequest(query="alert people on their phones", recallBudget=3))
    assert [h.id for h in bm25.hits] != ranked


@needs_model
def test_the_audit_names_the_models_digests_and_each_picks_two_ranks() -> None:
    retriever = Retriever(CORPUS, "hybrid@1")
    request = RetrievalRequest(query="crane maintenance, tide delays", recallBudget=4)
    result = retriever.retrieve(request)
    semantic = result.audit.config["params"]["fusion"]["semantic"]["model"]
    assert semantic["table"].startswith("sha256:") and semantic["tokenizer"].startswith(
        "sha256:")
    assert result.audit.config["params"]["parameters"]["model"] == semantic["table"]
    for sub in result.audit.subqueries:
        assert sub.fusion is not None
        assert len(sub.fusion["ranks"]) == len(sub.contributed)
        assert all(r[0] or r[1] for r in sub.fusion["ranks"])
    assert result.audit.fusion is not None
    assert len(result.audit.fusion["ranks"]) == len(result.hits)
    assert canonical_bytes(result) == retriever.result_bytes(request)[0]


@needs_model
def test_the_compiled_and_reference_paths_give_the_same_hybrid_bytes() -> None:
    retriever = Retriever(CORPUS, "hybrid@1")
    request = RetrievalRequest(query="send a message to a phone; berth tide", recallBudget=5)
    live = retriever.result_bytes(request)
    compiled.hold()
    try:
        held = retriever.result_bytes(request)
    finally:
        compiled.release()
    assert live == held


WORDS = ["crane", "berth", "tide", "vessel", "cargo", "pilot", "harbour", "manifest", "customs",
         "delay", "weather", "dock", "message", "phone", "alert", "notify", "schedule",
         "container", "reefer", "gantry"]


@needs_model
@pytest.mark.parametrize("params", [
    {}, {"confident_coverage": 0}, {"query_weighting": "rarity"},
    {"confident_semantic_weight": 0.1, "semantic_prefilter": 20, "semantic_depth": 10},
    {"semantic_weight": 0, "confident_semantic_weight": 0}, {"lexical_depth": 0}])
def test_one_compiled_call_fuses_as_the_steps_do(params: dict[str, object]) -> None:
    """Every branch of the one-call path (the confidence rule on and off, firing or not,
    the prefilter cutting, no semantic weight, no lexical list) against the steps."""
    rng = np.random.default_rng(3)
    docs = [Document(id=f"d{i}", text=" ".join(rng.choice(WORDS, 6))) for i in range(400)]
    retriever = Retriever(docs, "hybrid@1", **params)
    queries = ["crane berth tide vessel cargo pilot", "alert the phone", "gantry",
               "zzqx unknownword", "send a message to a phone; berth tide", docs[7].text]
    requests = [RetrievalRequest(query=q, recallBudget=b) for q in queries for b in (3, 40)]
    live = [retriever.result_bytes(r) for r in requests]
    compiled.hold()
    try:
        held = [Retriever(docs, "hybrid@1", **params).result_bytes(r) for r in requests]
    finally:
        compiled.release()
    assert live == held


@needs_model
def test_with_no_semantic_weight_the_lexical_ranks_are_bm25_6s_order() -> None:
    request = RetrievalRequest(query="send a message", recallBudget=4, decompose=False)
    hybrid = Retriever(CORPUS, "hybrid@1", semantic_weight=0.0).retrieve(request)
    bm25 = Retriever(CORPUS, "bm25@6").retrieve(request)
    assert [h.id for h in hybrid.hits] == [h.id for h in bm25.hits]


def test_a_model_directory_is_used_and_named_by_its_sha256(tmp_path: Path) -> None:
    directory = write_small_model(tmp_path / "small")
    digest = offer_directory(directory, default=False)
    retriever = Retriever(CORPUS, "hybrid@1", model=digest)
    result = retriever.retrieve(RetrievalRequest(query="crane berth", recallBudget=3))
    model = result.audit.config["params"]["fusion"]["semantic"]["model"]
    assert model["table"] == digest and model["dim"] == 8
    assert result.hits[0].id == "crane"


def test_a_model_that_is_not_installed_is_one_line_naming_its_digest_and_the_fix() -> None:
    missing = "sha256:" + "0" * 64
    with pytest.raises(ModelUnavailableError) as caught:
        make_provider("hybrid@1", model=missing).config()
    message = str(caught.value)
    assert message == (f"model {missing} is not installed "
                       "(pip install 'rookhaven[hybrid]')")


def test_a_directory_without_its_files_is_refused_naming_what_is_missing(
        tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"has no model\.safetensors"):
        offer_directory(tmp_path, default=False)


def test_isqrt_radius_is_exact() -> None:
    vectors = np.array([[3, 4] + [0] * 6, [0] * 8], dtype=np.int8)
    assert radii(vectors).tolist() == [math.isqrt(25 << 16), 0]


def test_rarity_weights_are_integer_log2_of_the_inverse_document_share() -> None:
    df = np.array([0, 1, 5, 10, 99, 100])
    assert rarity_weights(df, 100).tolist() == [7, 6, 5, 4, 1, 1]


@needs_model
def test_a_rarity_weighted_query_is_recorded_and_ranks_on_both_paths() -> None:
    retriever = Retriever(CORPUS, "hybrid@1", query_weighting="rarity")
    request = RetrievalRequest(query="alert people on their phones", recallBudget=3)
    result = retriever.retrieve(request)
    assert result.audit.config["params"]["fusion"]["query_weighting"] == "rarity"
    compiled.hold()
    try:
        held = retriever.result_bytes(request)
    finally:
        compiled.release()
    assert held == retriever.result_bytes(request)
    with pytest.raises(ConfigError, match="query_weighting must be one of none, rarity"):
        make_provider("hybrid@1", query_weighting="idf")


def test_the_prefilter_keeps_every_document_up_to_the_cuts_distance() -> None:
    vectors, r, codes, query = _random_index(5, 6000, 31)
    live = candidates(codes, r, query, 500)
    assert len(live) >= 500
    flips = np.array([bin(int(x)).count("1") for x in
                      (codes ^ sign_codes((query > 0).astype(np.int8)[None, :])[0]).ravel()])
    distance = flips.reshape(len(codes), -1).sum(axis=1)
    cut = distance[live].max()
    assert set(live.tolist()) == set(np.flatnonzero((distance <= cut) & (r > 0)).tolist())
    assert candidates(codes, r, query, 10**6).tolist() == np.flatnonzero(r > 0).tolist()
    assert np.array_equal(keys_of(vectors, r, query, live),
                          _keys_reference(vectors, r, query)[live])


@needs_model
def test_document_vectors_are_the_same_on_both_paths() -> None:
    from rookhaven.core.semantic.shelf import SHELF
    model = SHELF.model(SHELF.default_digest())
    texts = ["crane maintenance", "", "起重机 delay", "a" * 300]
    live = _compiled_as_reference(document_vectors, model, texts)
    assert live[1][1] == 0 and not live[0][1].any()


@needs_model
def test_query_vectors_semantic_lists_and_fusion_are_the_same_on_both_paths() -> None:
    from rookhaven.core.semantic.lists import fused, semantic_list
    from rookhaven.core.semantic.shelf import SHELF
    from rookhaven.core.semantic.vectors import query_vector
    model = SHELF.model(SHELF.default_digest())
    rng = np.random.default_rng(6)
    weights = rng.integers(1, 15, size=len(model.table))
    vectors = rng.integers(-127, 128, size=(3000, 256)).astype(np.int8)
    vectors[::17] = 0
    r, codes = radii(vectors), sign_codes(vectors)
    lexical = fusion.competition_top(np.arange(0, 300, 3), rng.integers(1, 40, 100), 50)
    texts = ["alert people on their phones", "起重机 delay ü", "x"]
    live = [(query_vector(model, t), query_vector(model, t, weights)) for t in texts]
    lists = [semantic_list(vectors, r, code_planes(codes), q, limit, 60)
             for q, _ in live for limit in (200, 10**6)]
    fusions = [fused(lexical, s, 204, 51, 20) for s in lists]
    compiled.hold()
    try:
        held = [(query_vector(model, t), query_vector(model, t, weights)) for t in texts]
        held_lists = [semantic_list(vectors, r, code_planes(codes), q, limit, 60)
                      for q, _ in held for limit in (200, 10**6)]
        held_fusions = [fused(lexical, s, 204, 51, 20) for s in held_lists]
    finally:
        compiled.release()
    for a, b in zip(live, held, strict=True):
        assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    for a, b in zip([*lists, *fusions], [*held_lists, *held_fusions], strict=True):
        assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert all(len(s[0]) >= 60 for s in lists)


def test_engines_says_which_engines_cannot_run_here_and_why(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from rookhaven.cli import engines as command
    from rookhaven.config import Settings
    from rookhaven.core.semantic.shelf import SHELF
    monkeypatch.setattr(SHELF, "default", None)
    rows = {r["engine"]: r for r in command.rows(Settings())}
    assert rows["bm25@6"]["cannot_run"] is None
    assert rows["hybrid@1"]["cannot_run"].startswith(
        "no static embedding model is installed (pip install 'rookhaven[hybrid]'")
