"""Logs are one JSON object per line on stderr, with the fields passed as ``extra``."""

from __future__ import annotations

import logging

import orjson
import pytest

from rookhaven.logs import configure_logging


def test_a_log_record_is_one_json_line_on_stderr_with_its_extra_fields(
        capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("info")
    logging.getLogger("rookhaven.test").info("stored result", extra={"result_key": "sha256:ab"})
    logging.getLogger("rookhaven.test").debug("not shown at info")
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.strip().splitlines()
    entry = orjson.loads(line)
    assert entry["msg"] == "stored result"
    assert entry["level"] == "info"
    assert entry["result_key"] == "sha256:ab"
    assert entry["ts"].endswith("Z")
