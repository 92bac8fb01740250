"""bm25@4: feedback runs where the predictor says, and the audit says why, in integers."""

from __future__ import annotations

import pytest

from rookhaven import Document, RetrievalRequest, Retriever, canonical_bytes
from rookhaven.core.providers.predictor import GAP_BITS, FeedbackPredictor
from rookhaven.errors import ConfigError

RULE = FeedbackPredictor(min_length=20, max_gap=2 << GAP_BITS, fb_docs=3)


@pytest.mark.parametrize(("mean16", "first", "run", "reason"), [
    (19 * 16, [], False, "short-documents"),
    (20 * 16, [9, 8], False, "few-matches"),
    (20 * 16, [21, 12, 10], False, "clear-winner"),
    (20 * 16, [20, 12, 10], True, "ad-hoc"),
])
def test_the_predictor_decides_on_length_matches_and_gap_and_names_its_reason(
        mean16: int, first: list[int], run: bool, reason: str) -> None:
    decision = RULE.decide(mean16, first)
    assert (decision["run"], decision["reason"]) == (run, reason)
    assert decision["inputs"]["mean_length16"] == mean16


def test_a_gap_of_zero_never_skips_for_the_gap() -> None:
    rule = FeedbackPredictor(min_length=0, max_gap=0, fb_docs=2)
    assert rule.decide(0, [10**9, 1])["run"]


def _port(words: int) -> list[Document]:
    filler = " ".join(f"cargo{i % 7} berth manifest" for i in range(words))
    return [Document(id=f"d{i}", text=f"crane {i % 3} hoist fault reefer {filler}")
            for i in range(12)]


def _expansion(docs: list[Document], **params: object) -> dict[str, object]:
    result = Retriever(docs, "bm25@4", **params).retrieve(
        RetrievalRequest(query="crane hoist fault", recall_budget=5))
    assert result.audit.expansion is not None
    return result.audit.expansion


def test_short_documents_are_never_expanded_and_the_audit_records_the_length() -> None:
    expansion = _expansion(_port(0), fb_min_length=24)
    assert expansion["predictor"] == {"run": False, "reason": "short-documents",
                                      "inputs": {"mean_length16": expansion["predictor"][
                                          "inputs"]["mean_length16"]}}
    assert expansion["feedback_docs"] == []
    assert {t["from"] for t in expansion["terms"]} == {"query"}  # type: ignore[index]


def test_long_documents_are_expanded_with_the_first_pass_recorded() -> None:
    expansion = _expansion(_port(30), fb_min_length=24, fb_docs=3, fb_max_df=1.0)
    predictor = expansion["predictor"]
    assert predictor["run"] and predictor["reason"] == "ad-hoc"  # type: ignore[index]
    assert set(predictor["inputs"]) == {"mean_length16", "matched", "top", "kth"}  # type: ignore[index]
    assert len(expansion["feedback_docs"]) == 3  # type: ignore[arg-type]
    assert "feedback" in {t["from"] for t in expansion["terms"]}  # type: ignore[index]


def test_the_same_request_gives_the_same_bytes_whether_or_not_its_decision_is_remembered(
        ) -> None:
    retriever = Retriever(_port(30), "bm25@4", fb_docs=3)
    request = RetrievalRequest(query="crane hoist fault; reefer", recall_budget=6)
    first = canonical_bytes(retriever.result_data(request))
    retriever.index._feedback.clear()  # type: ignore[attr-defined]
    assert canonical_bytes(retriever.result_data(request)) == first
    fresh = Retriever(_port(30), "bm25@4", fb_docs=3)
    assert canonical_bytes(fresh.result_data(request)) == first


@pytest.mark.parametrize("params", [{"fb_min_length": -1}, {"fb_max_gap": 0.5},
                                    {"identifiers": "camel"}])
def test_bad_predictor_parameters_are_refused_with_the_accepted_range(
        params: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        Retriever(_port(0), "bm25@4", **params)
