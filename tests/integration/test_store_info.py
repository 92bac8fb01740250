"""``rookhaven store info`` on a real Redis: counts from the indexes, bytes from MEMORY USAGE."""

from __future__ import annotations

import subprocess
import sys

import orjson

from rookhaven import Document, RetrievalRequest
from rookhaven.config import Settings
from rookhaven.pipeline import Executor, Pipeline, RecordingDispatcher
from rookhaven.store import Store
from tests.conftest import ROOT


def test_store_info_counts_what_was_stored_and_measures_its_bytes(env: dict[str, str]) -> None:
    settings = Settings.from_mapping(env)
    store = Store.from_settings(settings)
    pipe = Pipeline(store, RecordingDispatcher(ledger=store), settings)
    pipe.add_corpus([Document(id=f"d{i}", text=f"crane {i % 5} tide {i % 3}")
                     for i in range(40)], "port")
    refs = pipe.submit_many([RetrievalRequest(query=f"crane {i} and tide", seed=f"s{i}")
                             for i in range(30)], "port")
    Executor(store, settings).run([r.job_id for r in refs], "test")

    def info(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "rookhaven.cli.main", "store", "info",
                               *args], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=60, check=False)

    done = info("--json", "--sample", "10")
    assert done.returncode == 0, done.stderr
    found = orjson.loads(done.stdout)
    assert (found["results"], found["leaves"], found["corpora"]) == (30, 30, 1)
    assert found["sampled"] == 10 and found["log_shards"] == 1
    # A result (with the audit it frames) and its job record are each at least their bytes.
    one = next(k for k, _ in store.audits.scan())
    floor = len(store.results.get(one))
    assert found["bytes_per_result"] > floor
    assert 300 < found["bytes_per_leaf"] < 5_000
    assert found["bytes_for_1e9"] == 10**9 * (found["bytes_per_result"]
                                              + found["bytes_per_leaf"])
    text = info()
    assert text.returncode == 0 and "10^9 results would take" in text.stdout
    store.close()
