"""``submit --requests`` files: read as the other input files are, every bad line named."""

from __future__ import annotations

from pathlib import Path

import pytest

from rookhaven.cli.requestfile import Defaults, read_requests
from rookhaven.config import Settings
from rookhaven.errors import InputError

SETTINGS = Settings()
DEFAULTS = Defaults(recall_budget=None, seed=None, decompose=True, engine="bm25@2")


def _read(tmp_path: Path, data: bytes) -> list[tuple[object, str]]:
    path = tmp_path / "r.jsonl"
    path.write_bytes(data)
    return read_requests(path, SETTINGS, DEFAULTS)  # type: ignore[return-value]


def test_a_byte_order_mark_is_read_past_as_in_corpus_and_query_files(tmp_path: Path) -> None:
    plain = _read(tmp_path, b'{"query": "crane fault"}\n{"query": "tide"}\n')
    assert _read(tmp_path, b'\xef\xbb\xbf{"query": "crane fault"}\n{"query": "tide"}\n') == plain


def test_a_whole_budget_written_with_a_point_is_that_number_as_json_schema_reads_it(
        tmp_path: Path) -> None:
    ((request, engine),) = _read(tmp_path, b'{"query": "crane", "recallBudget": 3.0}\n')
    assert request.recall_budget == 3 and engine == "bm25@2"  # type: ignore[attr-defined]
    with pytest.raises(InputError, match=r"line 1: recallBudget must be a whole number"):
        _read(tmp_path, b'{"query": "crane", "recallBudget": 3.5}\n')


def test_a_line_that_is_not_utf8_says_so_with_the_byte(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"r.jsonl: line 2: not UTF-8 \(byte 12 of the line\)"):
        _read(tmp_path, b'{"query": "tide"}\n{"query": "\xff crane"}\n')
