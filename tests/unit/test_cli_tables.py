"""The people's view of a result: exact integer scores and the engine as users name it."""

from __future__ import annotations

from rookhaven import Document, RetrievalRequest, retrieve
from rookhaven.cli.tables import audit_summary, exact_score, hits_table, score_scale

DOCS = [Document(id=f"d{i}", text=f"crane {i} tide {i % 3} berth", fields={"title": f"t{i}"})
        for i in range(8)]


def test_scores_show_as_the_engines_integers_and_the_engine_as_name_at_version() -> None:
    result = retrieve(RetrievalRequest(query="crane and tide", recallBudget=4, seed="s"), DOCS,
                      "bm25@2")
    scale = score_scale(result)
    assert scale == 1 << 24
    rows = hits_table(result, {d.id: d for d in DOCS}).splitlines()[2:]
    for row, hit in zip(rows, result.hits, strict=True):
        units = int(row.split()[2])
        assert units / scale == hit.score  # exact: the JSON's float is units / 2**24
    assert "engine bm25@2;" in audit_summary(result)


def test_the_scale_is_the_one_the_audit_records_for_its_parameters() -> None:
    request = RetrievalRequest(query="crane and tide", recallBudget=4, seed="s")
    # bm25@3 weighs its feedback query in 1/4096: its units are 2**36 with feedback on.
    for params, bits in (({}, 36), ({"feedback": "none"}, 24)):
        result = retrieve(request, DOCS, "bm25@3", **params)
        assert score_scale(result) == 1 << bits
        for row, hit in zip(hits_table(result, {d.id: d for d in DOCS}).splitlines()[2:],
                            result.hits, strict=True):
            assert int(row.split()[2]) / (1 << bits) == hit.score


def test_a_score_that_is_not_a_whole_number_of_units_is_shown_as_stored() -> None:
    assert exact_score(0.1, 1 << 24) == "0.1"
    assert exact_score(1.5, None) == "1.5"
    assert exact_score(1.5, 2) == "3"
