"""`rookhaven eval` on collections with odd judgements and queries: counted, warned of, or
refused with one line, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rookhaven.cli.main import main
from tests.unit.test_metrics import _collection


def _eval(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object], str]:
    status = main(["eval", str(root), "--provider", "bm25@2", "--format", "json"])
    out, err = capsys.readouterr()
    return status, (json.loads(out) if status == 0 else {}), err


def _edited_queries(tmp_path: Path, old: str, new: str) -> Path:
    """The test collection with ``old`` replaced by ``new`` in its queries.jsonl."""
    root = _collection(tmp_path / "c")
    queries = root / "queries.jsonl"
    queries.write_text(queries.read_text().replace(old, new))
    return root


def test_a_blank_query_ranks_nothing_and_counts_as_empty(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _edited_queries(tmp_path, '"crane repair"', '"  "')
    status, report, _ = _eval(root, capsys)
    assert status == 0 and report["empty_queries"] == 2  # "zebra" and the blank one


def test_a_byte_order_mark_before_the_queries_is_read_past(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _collection(tmp_path / "c")
    plain = _eval(root, capsys)[1]
    queries = root / "queries.jsonl"
    queries.write_bytes(b"\xef\xbb\xbf" + queries.read_bytes())
    assert _eval(root, capsys)[1] == plain


def test_a_number_as_a_query_id_is_refused_as_a_document_s_is(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _edited_queries(tmp_path, '"_id": "1"', '"_id": 1')
    status, _, err = _eval(root, capsys)
    assert status == 2 and "line 1: '_id' and 'text' must be strings" in err


def test_a_pair_judged_twice_with_two_grades_is_refused_naming_the_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _collection(tmp_path / "c")
    qrels = root / "qrels" / "test.tsv"
    qrels.write_text(qrels.read_text() + "1\td1\t2\n")  # the same grade again: harmless
    assert _eval(root, capsys)[0] == 0
    qrels.write_text(qrels.read_text() + "1\td1\t1\n")
    status, _, err = _eval(root, capsys)
    assert status == 2 and "line 7" in err and "another grade" in err


def test_judgements_naming_unknown_queries_or_documents_are_counted_and_warned_of(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _collection(tmp_path / "c")
    plain = _eval(root, capsys)[1]
    qrels = root / "qrels" / "test.tsv"
    qrels.write_text(qrels.read_text() + "9\td1\t1\n1\tdX\t1\n")
    status, report, err = _eval(root, capsys)
    assert status == 0
    assert (report["unknown_judged_queries"], report["judged_documents_not_in_corpus"]) == (1, 1)
    assert "not in queries.jsonl" in err and "not in corpus.jsonl" in err
    # The unknown query is left out; the unknown document is a relevant one never found.
    assert report["ndcg@10"] < plain["ndcg@10"] and report["success@1"] == plain["success@1"]


def test_a_run_file_is_refused_before_ranking_when_an_id_holds_white_space(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _collection(tmp_path / "c")
    corpus = root / "corpus.jsonl"
    corpus.write_text(corpus.read_text().replace('"d2"', '"doc two"'))
    run_file = tmp_path / "run.txt"
    status = main(["eval", str(root), "--run-out", str(run_file)])
    err = capsys.readouterr().err
    assert status == 2 and "the id 'doc two' holds white space" in err, err
    assert not run_file.exists()
    assert main(["eval", str(root), "--format", "json"]) == 0  # without a run file it ranks


def test_a_split_file_with_a_byte_order_mark_names_its_queries(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _collection(tmp_path / "c")
    split = tmp_path / "split.txt"
    split.write_bytes(b"\xef\xbb\xbf1\n2\n")
    assert main(["eval", str(root), "--queries-split", str(split), "--format", "json"]) == 0
    capsys.readouterr()
