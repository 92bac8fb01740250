"""The people's view of a result: exact integer scores and the engine as users name it."""

from __future__ import annotations

from rookhaven import Document, RetrievalRequest, retrieve
from rookhaven.cli.tables import (
    audit_summary,
    exact_score,
    hits_table,
    score_scale,
    short,
    table,
    width,
)

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


def test_columns_line_up_for_wide_text_and_marks_and_cuts_keep_the_width() -> None:
    assert (width("港口"), width("crane"), width("cafe\u0301"), width("ｃ")) == (4, 5, 4, 2)
    lines = table(["id", "text"], [["s1", "港口起重机"], ["s2", "cafe\u0301 crane"]]).splitlines()
    assert [width(line.split("  ")[0]) for line in lines] == [2, 2, 2, 2]
    assert lines[1] == "--  ----------"  # "港口起重机" takes ten columns
    assert short("港口起重机延误", 9) == "港口起重…" and width(short("港口起重机延误", 9)) == 9
    assert short("crane delay report", 9) == "crane de…" and short("crane", 9) == "crane"
