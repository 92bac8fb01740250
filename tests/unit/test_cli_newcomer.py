"""What a newcomer's session found: bad eval, rerank and output input gets exit 2 and one line.

Each case here once ended in a traceback or a misleading line (a newcomer's run of the CLI
on inputs of their own, 2026-12-04). ``main`` runs in-process with the ROOKHAVEN_* variables
cleared; nothing here needs a service.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from rookhaven.cli.main import main
from rookhaven.core.engines import engine_spec


@pytest.fixture(autouse=True)
def _no_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("ROOKHAVEN_")]:
        monkeypatch.delenv(name)


@pytest.fixture
def collection(tmp_path: Path) -> Iterator[Path]:
    """A BEIR-layout collection of three documents and two judged queries."""
    root = tmp_path / "tiny"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_bytes(b"".join(
        orjson.dumps({"_id": f"d{i}", "text": text}) + b"\n"
        for i, text in enumerate(["crane fault", "tide window", "reefer alarm"])))
    (root / "queries.jsonl").write_bytes(b'{"_id":"q1","text":"crane"}\n'
                                         b'{"_id":"q2","text":"tide"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td0\t1\n"
                                             "q2\td1\t1\n", encoding="utf-8")
    yield root


def _status(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        status = main(list(argv))
    except SystemExit as exit:  # argparse's usage errors exit from inside the parser
        status = int(exit.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    status, _, err = _status(capsys, *argv)
    assert status == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_a_collection_that_reads_cleanly_is_evaluated(
        collection: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _status(capsys, "eval", str(collection))
    assert status == 0 and out.startswith("queries       2\n")


@pytest.mark.parametrize(("qrels", "message"), [
    ("query-id\tcorpus-id\tscore\nq1\td0\tabc\n",
     "line 2: the score must be a whole number, got 'abc'"),
    ("q9\td0\t1\n", "none of the 2 queries of queries.jsonl has a judgement"),
])
def test_judgements_that_cannot_be_read_or_match_no_query_are_refused(
        collection: Path, capsys: pytest.CaptureFixture[str], qrels: str,
        message: str) -> None:
    (collection / "qrels" / "test.tsv").write_text(qrels, encoding="utf-8")
    assert message in _refused(capsys, "eval", str(collection))


def test_a_query_id_given_twice_is_refused_naming_both_lines(
        collection: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with (collection / "queries.jsonl").open("ab") as queries:
        queries.write(b'{"_id":"q1","text":"reefer"}\n')
    assert "line 3: query id 'q1' again (first on line 1)" in _refused(
        capsys, "eval", str(collection))


@pytest.mark.parametrize(("param", "message"), [
    ("k1=abc", "parameter k1 must be a finite number, got 'abc'"),
    ("k1=true", "parameter k1 must be a finite number, got True"),
    ("k1=1e999", "parameter k1 must be a finite number, got '1e999'"),
    ("prefix_min_len=2.5", "parameter prefix_min_len must be a whole number"),
    ("field_weights=5", "parameter field_weights must be an object of names to finite numbers"),
    ("synonyms=5", "parameter synonyms must be an object of names to lists of strings"),
    ('synonyms={"a":"b"}', "parameter synonyms must be an object of names to lists"),
])
def test_an_engine_parameter_of_the_wrong_type_is_named_with_what_it_takes(
        collection: Path, capsys: pytest.CaptureFixture[str], param: str,
        message: str) -> None:
    assert message in _refused(capsys, "eval", str(collection), "--engine", "bm25@2",
                               "--param", param)


def test_a_parameter_given_as_a_whole_number_keeps_its_config_and_results(
        collection: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Checked, never converted: k1=1 is recorded as 1, as before the check existed.
    recorded = engine_spec("bm25@2").build(k1=1).config()["k1"]
    assert recorded == 1 and isinstance(recorded, int)
    status, _, _ = _status(capsys, "eval", str(collection), "--param", "k1=1")
    assert status == 0


def test_output_files_are_checked_before_any_work(
        collection: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere" / "x.run"
    assert "does not exist; create it" in _refused(
        capsys, "eval", str(collection), "--run-out", str(missing))
    assert "is a directory; name a file in it" in _refused(
        capsys, "eval", str(collection), "--run-out", str(tmp_path))
    assert "does not exist" in _refused(capsys, "rerank", "--to-engine", "bm25@2",
                                        "--inline", "--out", str(missing))
    assert "does not exist" in _refused(capsys, "submit", "--query", "crane", "--wait",
                                        "--out", str(missing))


def test_an_empty_split_is_refused(collection: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    split = tmp_path / "split.txt"
    split.write_text("\n", encoding="utf-8")
    assert "the split lists no query id" in _refused(
        capsys, "eval", str(collection), "--queries-split", str(split))


@pytest.mark.parametrize(("argv", "message"), [
    (["retrieve", "--query", "x", "--engine", "bm25@99"],
     "rookhaven: error: --engine names an unknown engine 'bm25@99'; choose one of"),
    (["retrieve", "--query", "x", "--engine", "bm25@"], "--engine names an unknown engine"),
    (["retrieve", "--query", "x", "--provider", "bm2"], "--provider names an unknown engine"),
    (["demo", "--queries", "-1"], "argument --queries: expected a whole number >= 0"),
    (["submit", "--query", "x", "--out", "x.jsonl"], "--out writes the results once they "
     "are done: add --wait"),
])
def test_a_flag_is_named_as_it_was_typed_and_the_value_said_once(
        capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    err = _refused(capsys, *argv)
    assert message in err and "ROOKHAVEN_ENGINE" not in err and err.count("bm25@99") <= 1


def test_the_version_and_every_commands_help_line(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _status(capsys, "--version")
    assert status == 0 and out.startswith("rookhaven ")
    status, out, _ = _status(capsys, "--help")
    assert status == 0 and "(from workers)" not in out
    assert "demo      run the whole pipeline in-process" in out
