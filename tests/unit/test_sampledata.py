"""The sample data that ``rookhaven demo`` runs on ships with the package and loads."""

from __future__ import annotations

from rookhaven.sampledata import sample_corpus, sample_requests


def test_the_shipped_sample_data_loads() -> None:
    assert len(sample_corpus()) >= 300
    assert len(sample_corpus("port_ops_edited.jsonl")) >= 300
    assert len(sample_requests()) >= 10
