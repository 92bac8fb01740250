"""Engine upgrades, as an operator lives them: results made by workers under bm25@1, the
default switched to bm25@2, more results, every job record lost; ``rookhaven verify --all``
still replays every result byte for byte from its audit, and ``rookhaven rerank
--to-engine`` reports what the newer version changes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

from rookhaven.config import Settings
from rookhaven.pipeline import Pipeline, open_pipeline
from tests.conftest import wait_until
from tests.integration.workerfarm import WorkerFarm, all_done, documents, requests
from tests.results_support import forget_job


def rookhaven(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rookhaven.cli.main", *args],
                          capture_output=True, text=True, env=env, timeout=300, check=False)


def submit_and_drain(pipe: Pipeline, tag: str, params: dict[str, object] | None = None
                     ) -> list[str]:
    refs = pipe.submit_many(requests(30, tag=tag), "port", params=params)
    ids = [r.job_id for r in refs]
    wait_until(lambda: all_done(pipe, ids), 120, what=f"{tag} jobs done")
    return ids


def test_results_of_every_engine_version_replay_after_an_upgrade_without_job_records(
        env: dict[str, str], workers: WorkerFarm, tmp_path: Path) -> None:
    old_env = {**env, "ROOKHAVEN_ENGINE": "bm25@1"}
    old = open_pipeline(Settings.from_mapping(old_env))
    old.add_corpus(documents(200), "port")
    worker = workers.start("old", 2)
    made = submit_and_drain(old, "v1-") + submit_and_drain(old, "v1k-", {"k1": 0.9})
    workers.kill(worker)

    new_env = {**env, "ROOKHAVEN_ENGINE": "bm25@2"}  # the operator switches the default
    new = open_pipeline(Settings.from_mapping(new_env))
    workers.env = new_env
    workers.start("new", 2)
    made += submit_and_drain(new, "v1-") + submit_and_drain(new, "v2s-",
                                                           {"synonyms": {"quay": ["berth"]}})
    engines = {orjson.loads(new.store.results.audit(k))["engine"]["version"] for k in made}
    assert engines == {"1.1", "1.2"} and len(set(made)) == 120

    for key in made:  # an eviction or a partial restore loses every job record
        forget_job(new.store, key)
    assert not any(new.store.jobs.get_many(made))

    done = rookhaven(new_env, "verify", "--all", "--json")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    run = orjson.loads(done.stdout)
    assert (run["checked"], run["matched"], run["alarms"], run["drift"]) == (120, 120, 0, 0)
    assert run["verdicts"] == []  # matches are counted per engine, not listed
    assert set(run["matched_by_engine"]) == {"bm25@1", "bm25@2"}

    out = tmp_path / "upgrade.jsonl"
    done = rookhaven(new_env, "rerank", "--corpus", "port", "--to-engine", "bm25@2",
                     "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "120 queries, 120 compared, 0 failed" in done.stdout
    rows = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert len(rows) == 120
    # bm25@2 ranks as bm25@1 does: the switch changes the audit record, not the ranking.
    assert {row["status"] for row in rows} == {"ok"}
    assert all(row["change"]["overlap_at_k"] == 1.0 for row in rows)


def test_results_stored_under_bm25_3_verify_after_the_default_moves_on(
        env: dict[str, str], workers: WorkerFarm) -> None:
    # Releases before ADR 0024 defaulted to bm25@3, ADR 0024's to bm25@2, ADR 0039's to
    # bm25@5; this one to bm25@6 (ADR 0040; no setting needed).
    old_env = {**env, "ROOKHAVEN_ENGINE": "bm25@3"}
    old = open_pipeline(Settings.from_mapping(old_env))
    old.add_corpus(documents(200), "port")
    worker = workers.start("old", 2)
    made = submit_and_drain(old, "v3-")
    workers.kill(worker)

    new_env = {k: v for k, v in env.items() if k != "ROOKHAVEN_ENGINE"}
    assert Settings.from_mapping(new_env).engine == "bm25@6"
    new = open_pipeline(Settings.from_mapping(new_env))
    workers.env = new_env
    workers.start("new", 2)
    made += submit_and_drain(new, "v3-")  # the same requests, now under the new default
    engines = {orjson.loads(new.store.results.audit(k))["engine"]["version"] for k in made}
    assert engines == {"1.3", "1.6"} and len(set(made)) == 60

    done = rookhaven(new_env, "verify", "--all", "--json")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    run = orjson.loads(done.stdout)
    assert (run["checked"], run["matched"], run["alarms"], run["drift"]) == (60, 60, 0, 0)
    assert run["verdicts"] == []  # matches are counted per engine, not listed
    assert set(run["matched_by_engine"]) == {"bm25@3", "bm25@6"}
