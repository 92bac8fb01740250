"""Bulk re-ranking of 1,000 historical queries through real workers, checked directly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from rookhaven import Document, retrieve
from rookhaven.config import Settings
from rookhaven.core.compare import compare_rankings
from rookhaven.pipeline import open_pipeline
from rookhaven.pipeline.inline import inline_pipeline
from tests.conftest import ROOT
from tests.integration.workerfarm import WorkerFarm, documents, requests


def edited(docs: list[Document]) -> list[Document]:
    """A next corpus version: every fifth document reworded, every ninth removed, ten added."""
    changed = [d.model_copy(update={"text": d.text.replace("crane", "hoist")}) if i % 5 == 0
               else d for i, d in enumerate(docs) if i % 9 != 4]
    return changed + [Document(id=f"new-{i}", text="crane tide delay crane berth")
                      for i in range(10)]


@pytest.mark.slow
def test_reranking_a_thousand_queries_reports_counts_matching_a_direct_computation(
        env: dict[str, str], workers: WorkerFarm, tmp_path: Path) -> None:
    settings = Settings.from_mapping(env)
    store = open_pipeline(settings).store
    history = inline_pipeline(store, settings)
    old_docs, new_docs = documents(), edited(documents())
    history.add_corpus(old_docs, "port")
    asked = requests(1000, tag="history-")
    history.submit_many(asked, "port")
    history.add_corpus(new_docs, "port")

    workers.start("rerank-1", concurrency=2)
    out = tmp_path / "report.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "rookhaven.cli.main", "rerank", "--corpus", "port@1",
         "--to-corpus", "port@2", "--chunk", "200", "--out", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "1000/1000 queries" in done.stderr

    rows = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert len(rows) == 1000
    expected = {}
    for request in asked:
        old = [h.id for h in retrieve(request, old_docs, settings.engine).hits]
        new = [h.id for h in retrieve(request, new_docs, settings.engine).hits]
        expected[(request.query, request.seed)] = compare_rankings(old, new,
                                                                   request.recall_budget)
    for row in rows:
        assert row["change"] == expected[(row["query"], row["seed"])].as_dict()
    changed = sum(not c.unchanged for c in expected.values())
    gained = sum(len(c.gained) for c in expected.values())
    lost = sum(len(c.lost) for c in expected.values())
    assert f"unchanged {1000 - changed}, changed {changed}" in done.stdout
    assert f"documents gained {gained}, lost {lost}" in done.stdout
    assert 0 < changed < 1000
