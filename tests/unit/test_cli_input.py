"""Bad CLI input that needs no environment: exit 2 and one line, decided before settings load.

These call ``main`` in-process, so they use input refused before ``os.environ`` is read
(argument types, undecodable bytes), or clear the ROOKHAVEN_* variables first; the rest is
in tests/integration/test_cli_fuzz.py.
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

import pytest

from rookhaven.cli.main import main, one_line
from rookhaven.cli.options import moment, positive_seconds, result_key, seconds
from rookhaven.store import Store
from rookhaven.transparency.note import generate_key


def _refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    try:
        status = main(list(argv))
    except SystemExit as exit:  # argparse's usage errors exit from inside the parser
        status = exit.code  # type: ignore[assignment]
    assert status == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "0", "1e308", "604801", "soon"])
def test_a_wait_must_be_a_finite_positive_number_of_seconds_up_to_a_week(value: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=r"seconds > 0 and <= 604800"):
        positive_seconds(value)


def test_a_sweep_age_may_be_zero_but_not_nan_or_negative() -> None:
    older_than = seconds(zero=True, maximum=100)
    assert older_than("0") == 0.0 and older_than("100") == 100.0
    for value in ("nan", "-0.5", "101", "inf"):
        with pytest.raises(argparse.ArgumentTypeError, match=r">= 0 and <= 100"):
            older_than(value)


def test_a_moment_is_finite() -> None:
    assert moment("1700000000") == 1.7e9
    assert math.isclose(moment("2024-01-01T00:00:00Z"), 1704067200)
    for value in ("nan", "inf", "-inf", "yesterday"):
        with pytest.raises(argparse.ArgumentTypeError):
            moment(value)


@pytest.mark.parametrize(("argv", "message"), [
    (["submit", "--query", "x", "--wait", "--timeout", "nan"], "argument --timeout: expected"),
    (["submit", "--query", "x", "--wait", "--timeout", "-1"], "argument --timeout: expected"),
    (["sweep", "--older-than", "nan"], "argument --older-than: expected a number of seconds"),
    (["rerank", "--to-engine", "bm25@1", "--wait-timeout", "inf"], "argument --wait-timeout"),
    (["retrieve", "--query", "x", "--seed", "\udcff"], "rookhaven: error: --seed is not valid "
     "UTF-8\n"),
    (["retrieve", "--query=\udcffcrane"], "rookhaven: error: --query is not valid UTF-8\n"),
    (["corpus", "add", "c\udcff.jsonl"], "rookhaven: error: argument 3 is not valid UTF-8\n"),
])
def test_bad_arguments_exit_2_with_one_line(capsys: pytest.CaptureFixture[str],
                                            argv: list[str], message: str) -> None:
    assert message in _refused(capsys, *argv)


@pytest.mark.parametrize("argv", [["verify", "--key"], ["result"], ["job"], ["log", "prove"]])
@pytest.mark.parametrize("key", ["sha256:feed", "SHA256:" + "a" * 64, "sha256:" + "A" * 64,
                                 "sha256:" + "0" * 63, "sha256:" + "0" * 65, "job-1", ""])
def test_a_malformed_result_key_is_bad_input_refused_before_the_store_is_opened(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        argv: list[str], key: str) -> None:
    def opened(*_: object, **__: object) -> None:
        raise AssertionError("the store was opened: something could have been recorded")
    monkeypatch.setattr(Store, "from_settings", opened)
    assert "expected a result key (sha256: and 64 lowercase hex digits)" in _refused(
        capsys, *argv, key)


def test_a_well_formed_result_key_passes_the_argument_type() -> None:
    key = "sha256:" + "0123456789abcdef" * 4
    assert result_key(key) == key


def test_an_error_naming_a_file_with_a_newline_or_escape_stays_one_line(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    for name in [n for n in os.environ if n.startswith("ROOKHAVEN_")]:
        monkeypatch.delenv(name)  # settings load before the file is opened
    missing = tmp_path / "a\nb\x1b[2J.jsonl"
    err = _refused(capsys, "retrieve", "--corpus", str(missing), "--query", "crane")
    assert "a\\nb\\x1b[2J.jsonl: no such corpus file" in err and "\x1b" not in err
    assert one_line("café\ttide 🦀") == "café\\ttide 🦀"


@pytest.mark.parametrize(("argv", "message"), [
    (["verify", "--checkpoint", "{binary}", "--verifier-key", "{key}"], "is not UTF-8 text"),
    (["verify", "--checkpoint", "{text}", "--verifier-key", "a+b+c"], "key ID 'b' is not 8 hex"),
    (["log", "consistency", "{binary}", "3"], "is not UTF-8 text"),
    (["log", "consistency", "1", "{binary}"], "is not UTF-8 text"),
    (["log", "consistency", "1", "12a"], "12a is neither a tree size nor a checkpoint file"),
    (["log", "prove", "sha256:" + "0" * 64, "--checkpoint", "{binary}"], "is not UTF-8 text"),
])
def test_a_checkpoint_file_or_verifier_key_that_cannot_be_one_exits_2_with_one_line(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        argv: list[str], message: str) -> None:
    binary, text = tmp_path / "x.cp", tmp_path / "y.cp"
    binary.write_bytes(bytes(range(256))[128:192])
    text.write_text("hello\nworld\n")
    key = generate_key("rookhaven.test", bytes(32))[1]
    monkeypatch.setenv("ROOKHAVEN_REDIS_URL", "redis://127.0.0.1:1/0")  # never reached
    monkeypatch.setenv("ROOKHAVEN_REDIS_TIMEOUT", "1")
    filled = [a.format(binary=binary, text=text, key=key) for a in argv]
    assert message in _refused(capsys, *filled)


@pytest.mark.parametrize("raw", ["\uff15", "1_000", " 5", "5 ", "+5", "٥", "5.0", ""])
def test_a_whole_number_flag_takes_ascii_digits_only(raw: str) -> None:
    from rookhaven.cli.options import positive_int
    with pytest.raises(argparse.ArgumentTypeError, match="expected a whole number"):
        positive_int(raw)
    assert positive_int("15") == 15


@pytest.mark.parametrize("raw", ["\uff15", "1_0"])
def test_a_whole_number_setting_takes_ascii_digits_only(raw: str) -> None:
    from rookhaven.settingvalues import whole
    with pytest.raises(ValueError, match="whole number"):
        whole(1, 100)(raw)
    assert whole(1, 100)(" 15 ") == 15
