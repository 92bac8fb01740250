"""The hybrid@2 candidate: a semantic weight that follows the model's coverage of the query,
and both lists' depths that follow the request's budget."""

from __future__ import annotations

import numpy as np
import pytest

from rookhaven import Document, RetrievalRequest, Retriever
from rookhaven.core import compiled
from rookhaven.core.analyzer import Analyzer
from rookhaven.core.corpus import Corpus
from rookhaven.core.index import FORM_BITS, build_index
from rookhaven.core.providers.hybrid import GatedHybridProvider
from rookhaven.core.semantic.coverage import WHOLE, coverage, stepped_weight
from rookhaven.embedding import wordllama_files
from rookhaven.errors import ConfigError

needs_model = pytest.mark.skipif(wordllama_files() is None, reason="wordllama is not installed")
WORDS = ["crane", "berth", "tide", "vessel", "cargo", "pilot", "harbour", "manifest", "customs",
         "delay", "weather", "dock", "message", "phone", "alert", "notify", "schedule",
         "container", "reefer", "gantry", "anmeldung", "liegeplatz", "gezeiten", "zollamt"]


def _candidate(**params: object) -> GatedHybridProvider:
    return GatedHybridProvider(analyzer=Analyzer(stemmer="english", split="visible-words"),
                               version="2", record_parameters=True, **params)


def _docs(count: int) -> list[Document]:
    rng = np.random.default_rng(5)
    return [Document(id=f"d{i}", text=" ".join(rng.choice(WORDS, 6))) for i in range(count)]


def _one_piece(token: str) -> bool:
    """A model holding the words of four letters or fewer whole."""
    return len(token) <= 4


def test_coverage_is_the_floored_share_of_tokens_held_whole() -> None:
    assert coverage(["dock", "tide"], _one_piece) == WHOLE
    assert coverage(["harbour", "manifest"], _one_piece) == 0
    assert coverage(["dock", "tide", "harbour"], _one_piece) == 2 * 256 // 3 == 170
    assert coverage([], _one_piece) == WHOLE  # nothing the model could misread


def test_the_weight_is_the_first_step_the_coverage_reaches() -> None:
    steps = ((192, 51), (160, 25))
    assert [stepped_weight(c, steps) for c in (256, 192, 191, 160, 159, 0)] == [
        51, 51, 25, 25, 0, 0]
    assert stepped_weight(256, ()) == 0


def test_depth_floor_and_fixed_depths_are_one_choice_or_the_other() -> None:
    with pytest.raises(ConfigError, match="depth_floor"):
        _candidate(lexical_depth=100)
    with pytest.raises(ConfigError, match="depth_floor"):
        _candidate(depth_floor=-1)
    assert _candidate(depth_floor=0, lexical_depth=100, semantic_depth=100).depth_floor == 0


@needs_model
def test_both_depths_follow_the_budget_above_the_floor() -> None:
    index = Retriever(_docs(60), _candidate()).index
    assert index.for_texts({}, 10).depths == (50, 50)
    assert index.for_texts({}, 80).depths == (80, 80)
    fixed = Retriever(_docs(60), _candidate(depth_floor=0, lexical_depth=30,
                                            semantic_depth=20)).index
    assert fixed.for_texts({}, 80).depths == (30, 20)


@needs_model
def test_a_query_the_model_cannot_read_is_served_bm25_6s_ranking_and_says_why() -> None:
    """Hangul the model reads as byte pieces: coverage 0, no semantic list, so the fused
    ranking is the lexical list's, bm25@6's own order."""
    docs = [*_docs(40), Document(id="ko", text="선박 입항 일정 선석 배정"),
            Document(id="ko2", text="선박 화물 통관 일정")]
    request = RetrievalRequest(query="선박 입항 일정", recallBudget=5, decompose=False)
    gated = Retriever(docs, _candidate()).result_data(request)
    fusion = gated["audit"]["subqueries"][0]["fusion"]
    assert fusion["coverage"] < 160 and fusion["semantic_weight"] == 0
    assert all(sem == 0 for _, sem in fusion["ranks"])
    bm25 = Retriever(docs, "bm25@6").result_data(request)
    assert [h["id"] for h in gated["hits"]] == [h["id"] for h in bm25["hits"]]


@needs_model
def test_a_query_the_model_reads_whole_keeps_the_full_semantic_weight() -> None:
    # Words the model holds whole; no document matches both, so the confidence rule (a
    # rank-1 document matching every query term) leaves the weight as the steps give it.
    request = RetrievalRequest(query="cargo alert", recallBudget=5, decompose=False)
    docs = [Document(id="a", text="cargo schedule"), Document(id="b", text="alert the phone"),
            Document(id="c", text="vessel notify")]
    fusion = Retriever(docs, _candidate()).result_data(request)["audit"]["subqueries"][0][
        "fusion"]
    assert fusion["coverage"] == WHOLE and fusion["semantic_weight"] == 51


@needs_model
def test_half_the_tokens_whole_earn_no_semantic_weight() -> None:
    request = RetrievalRequest(query="cargo crane", recallBudget=5, decompose=False)
    docs = [Document(id="a", text="cargo schedule"), Document(id="b", text="crane the phone")]
    fusion = Retriever(docs, _candidate()).result_data(request)["audit"]["subqueries"][0][
        "fusion"]
    assert fusion["coverage"] == 128 and fusion["semantic_weight"] == 0


@needs_model
def test_the_config_records_the_rules_so_an_audit_rebuilds_the_candidate() -> None:
    config = Retriever(_docs(10), _candidate()).identity.config["params"]
    fusion = config["fusion"]
    assert fusion["coverage_steps"] == [[192, 51], [160, 25]]
    assert fusion["depth_floor"] == 50 and fusion["semantic_prefilter"] == 250
    assert config["parameters"]["coverage_full"] == 0.75


@needs_model
@pytest.mark.parametrize("params", [{}, {"coverage_half": 0}, {"semantic_prefilter": 20},
                                    {"depth_floor": 0, "lexical_depth": 0,
                                     "semantic_depth": 30}])
def test_the_candidate_ranks_the_same_bytes_on_the_compiled_and_reference_paths(
        params: dict[str, object]) -> None:
    docs = _docs(400)
    queries = ["crane berth tide vessel", "anmeldung liegeplatz gezeiten zollamt",
               "crane liegeplatz", "alert the phone; gantry", docs[7].text]
    requests = [RetrievalRequest(query=q, recallBudget=b) for q in queries for b in (3, 60)]
    live = [Retriever(docs, _candidate(**params)).result_bytes(r) for r in requests]
    compiled.hold()
    try:
        held = [Retriever(docs, _candidate(**params)).result_bytes(r) for r in requests]
    finally:
        compiled.release()
    assert live == held


DEPLOY = [Document(id="a", text="deployment of the service"),
          Document(id="b", text="deploy the service"),
          Document(id="c", text="deploying services daily"),
          Document(id="d", text="weather report")]


def test_a_posting_names_which_of_its_stems_forms_the_document_holds() -> None:
    analyzer = Analyzer(stemmer="english", split="visible-words")
    index = build_index(Corpus(DEPLOY), analyzer, forms=True)
    # One chunk of ASCII texts: its new forms numbered in sorted order (deploy, deploying,
    # deployment).
    assert {t: index.form_bits[t] for t in ("deploy", "deploying", "deployment")} == {
        "deploy": 0, "deploying": 1, "deployment": 2}
    term = index.term_ids["deploy"]
    lo, hi = int(index.offsets[term]), int(index.offsets[term + 1])
    by_doc = dict(zip(index.docs[lo:hi].tolist(), index.forms[lo:hi].tolist(), strict=True))
    assert by_doc == {0: 0b100, 1: 0b001, 2: 0b010}
    # The form byte is asked for: the index every released engine builds is unchanged.
    plain = build_index(Corpus(DEPLOY), analyzer)
    assert plain.forms is None and plain.form_bits is None
    assert np.array_equal(plain.docs, index.docs) and np.array_equal(plain.tfs, index.tfs)


def test_only_a_stems_first_eight_forms_have_a_bit() -> None:
    forms = sorted(["connect", "connected", "connecting", "connection", "connections",
                    "connective", "connectives", "connecter", "connectional", "connects",
                    "connectivity", "connector", "connectors"])
    docs = [Document(id=f"d{i}", text=form) for i, form in enumerate(forms)]
    analyzer = Analyzer(stemmer="english")
    index = build_index(Corpus(docs), analyzer, forms=True)
    by_stem: dict[str, list[str]] = {}
    for form in forms:
        by_stem.setdefault(analyzer.terms(form)[0], []).append(form)
    assert max(map(len, by_stem.values())) > FORM_BITS  # the cap is reached
    for stem_forms in by_stem.values():
        # One chunk of ASCII texts: its forms numbered in sorted order, eight at most a stem.
        named = stem_forms[:FORM_BITS]
        assert [index.form_bits.get(f) for f in stem_forms] == [
            *range(len(named)), *[None] * (len(stem_forms) - len(named))]


@needs_model
def test_a_word_held_in_the_querys_own_form_outranks_a_stem_only_match() -> None:
    for query, first in (("deploy service", "b"), ("deployment service", "a")):
        request = RetrievalRequest(query=query, recallBudget=3, decompose=False)
        exact = Retriever(DEPLOY, _candidate()).result_data(request)
        assert exact["hits"][0]["id"] == first
        assert exact["hits"][0]["score"] > exact["hits"][1]["score"]
        stems = Retriever(DEPLOY, _candidate(exact_weight=0)).result_data(request)
        assert stems["hits"][0]["score"] == stems["hits"][1]["score"]  # a and b tie


@needs_model
def test_exact_words_count_only_where_the_model_reads_the_query() -> None:
    """The stemmer is English: where the coverage says the query is not (here two of three
    words in pieces), a stem-only match weighs as much as the exact word."""
    request = RetrievalRequest(query="deploy crane berth", recallBudget=3, decompose=False)
    result = Retriever(DEPLOY, _candidate()).result_data(request)
    assert result["audit"]["subqueries"][0]["fusion"]["coverage"] < 192
    assert result["hits"][0]["score"] == result["hits"][1]["score"]
    everywhere = Retriever(DEPLOY, _candidate(exact_coverage=0)).result_data(request)
    assert everywhere["hits"][0]["id"] == "b"
    assert everywhere["hits"][0]["score"] > everywhere["hits"][1]["score"]


def test_the_compiled_exact_bonus_is_the_reference_integers() -> None:
    from rookhaven.core.providers.exactwords import exact_bonus

    rng = np.random.default_rng(11)
    lists = [np.unique(rng.integers(0, 500, size=rng.integers(1, 200))) for _ in range(30)]
    offsets = np.concatenate([[0], np.cumsum([len(x) for x in lists])]).astype(np.int64)
    docs = np.concatenate(lists).astype(np.int32)
    forms = rng.integers(0, 256, size=len(docs)).astype(np.uint8)
    impacts = rng.integers(1, 1 << 20, size=len(docs)).astype(np.int32)
    terms = rng.integers(0, 30, size=6).astype(np.int64)
    bits = rng.integers(0, 8, size=6).astype(np.int64)
    ords = np.unique(rng.integers(0, 520, size=120)).astype(np.int64)
    args = (offsets, docs, forms, impacts, terms, bits, ords, 64, 8)
    live = exact_bonus(*args)
    compiled.hold()
    try:
        held = exact_bonus(*args)
    finally:
        compiled.release()
    assert np.array_equal(live, held) and live.any()


def test_every_posting_byte_names_exactly_the_numbered_forms_its_document_holds() -> None:
    """ASCII and non-ASCII texts, fields and body, over several chunks' worth of learning."""
    analyzer = Analyzer(stemmer="english", split="visible-words")
    rng = np.random.default_rng(8)
    words = ["Straße", "Straßen", "deploy", "deployed", "deploying", "deployment", "Ünit",
             "ünits", "connect", "connected", "connection", "café", "cafés", "berth"]
    # Ids that sort as they are listed: a corpus orders its documents by id.
    docs = [Document(id=f"d{i:03d}", text=" ".join(rng.choice(words, 4)),
                     fields={"title": str(rng.choice(words))} if i % 3 == 0 else {})
            for i in range(300)]
    index = build_index(Corpus(docs), analyzer, forms=True)
    assert index.forms is not None and index.form_bits is not None
    held = [set(analyzer.split_tokens(" ".join([*(d.fields or {}).values(), d.text])))
            for d in docs]
    for term, stem in enumerate(index.vocabulary):
        named = {f: b for f, b in index.form_bits.items() if analyzer.terms_of([f]) == [stem]}
        lo, hi = int(index.offsets[term]), int(index.offsets[term + 1])
        for doc, byte in zip(index.docs[lo:hi].tolist(), index.forms[lo:hi].tolist(),
                             strict=True):
            assert byte == sum(1 << b for f, b in named.items() if f in held[doc])
