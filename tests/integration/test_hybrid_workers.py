"""hybrid@1 through real workers: results replay from their audits alone, and a result
whose model this install lacks is the one-line ``unreplayable`` verdict, never a mismatch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from rookhaven.config import Settings
from rookhaven.embedding import WORDLLAMA_TABLE_SHA256, offer_directory, wordllama_files
from rookhaven.pipeline import open_pipeline
from tests.conftest import wait_until
from tests.integration.workerfarm import WorkerFarm, all_done, documents, requests
from tests.model_support import write_small_model
from tests.results_support import forget_job

pytestmark = pytest.mark.skipif(wordllama_files() is None, reason="wordllama is not installed")


def rookhaven(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rookhaven.cli.main", *args],
                          capture_output=True, text=True, env=env, timeout=300, check=False)


def test_hybrid_results_replay_without_job_records_and_a_missing_model_is_unreplayable(
        env: dict[str, str], workers: WorkerFarm, tmp_path: Path) -> None:
    small = write_small_model(tmp_path / "small-model")
    small_digest = offer_directory(small, default=False)  # known here, not the default
    hybrid_env = {**env, "ROOKHAVEN_ENGINE": "hybrid@1"}
    pipe = open_pipeline(Settings.from_mapping(hybrid_env))
    pipe.add_corpus(documents(200), "port")
    # The workers' own default is the small model: a job names its model, so the wheel's
    # results are still made with the wheel's model.
    workers.env = {**hybrid_env, "ROOKHAVEN_EMBEDDING_MODEL": str(small)}
    workers.start("hybrid", 2)
    made = [r.job_id for r in pipe.submit_many(requests(30, tag="h-"), "port")]
    other = [r.job_id for r in pipe.submit_many(requests(5, tag="s-"), "port",
                                                params={"model": small_digest})]
    wait_until(lambda: all_done(pipe, made + other), 180, what="hybrid jobs done")
    small_env = {**hybrid_env, "ROOKHAVEN_EMBEDDING_MODEL": str(small)}

    audits = [orjson.loads(pipe.store.results.audit(k)) for k in made + other]
    assert {a["engine"]["name"] for a in audits} == {"hybrid"}
    tables = {a["config"]["params"]["fusion"]["semantic"]["model"]["table"] for a in audits}
    assert len(tables) == 2  # the wheel's model and the small one, each named by sha256
    for key in made + other:  # every job record lost
        forget_job(pipe.store, key)

    done = rookhaven(small_env, "verify", "--all", "--json")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    run = orjson.loads(done.stdout)
    assert (run["checked"], run["matched"], run["alarms"]) == (35, 35, 0)

    # Without the setting this install has no such model: unreplayable, not a mismatch.
    done = rookhaven(hybrid_env, "verify", "--key", other[0])
    assert done.returncode == 1
    assert WORDLLAMA_TABLE_SHA256 in tables
    line = next(x for x in done.stdout.splitlines() if "ALARM" in x)
    assert line.split()[:3] == ["ALARM", "unreplayable", other[0]]
    assert line.endswith(f"  model {small_digest} is not installed "
                         "(pip install 'rookhaven[hybrid]')")
    assert "0 mismatched, 1 not replayable" in done.stdout
    done = rookhaven(hybrid_env, "verify", "--key", made[0])
    assert done.returncode == 0, done.stdout + done.stderr
