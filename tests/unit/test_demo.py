"""``rookhaven demo`` runs with no services and shows hits, audits and a clean replay."""

from __future__ import annotations

import pytest

from rookhaven.cli.main import main
from rookhaven.sample import sample_corpus, sample_requests


def test_the_shipped_sample_data_loads() -> None:
    assert len(sample_corpus()) >= 300
    assert len(sample_requests()) >= 10


def test_demo_prints_hit_tables_and_audits_and_replays_every_result(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--queries", "3"]) == 0
    out = capsys.readouterr().out
    assert out.count("subquery 0:") == 3
    assert "rank  id" in out
    assert "replayed 3/3 results byte for byte" in out
