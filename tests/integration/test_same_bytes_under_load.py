"""The same request gives the same key and the same bytes under any load and warm-up state.

Two workers (their numba cache empty with the full run), CPU hogs beside them, and every
round's requests submitted twice at once by two submitters: every stored result and audit
must equal the inline core's bytes, the two audit copies must agree, and verify must match
everything. The suite runs a short form; the full form (cold kernels, 50 rounds) by hand:

    ROOKHAVEN_TEST_STRESS=50 .venv/bin/python -m pytest -s \
        tests/integration/test_same_bytes_under_load.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from rookhaven import RetrievalRequest, Retriever
from rookhaven.core.canonical import result_bytes
from rookhaven.sampledata import sample_corpus
from tests.conftest import ROOT, wait_until
from tests.integration.workerfarm import WorkerFarm, all_done, pipeline

ROUNDS = int(os.environ.get("ROOKHAVEN_TEST_STRESS", "0") or 0)
FULL = ROUNDS > 0
QUERIES = ["shock wave boundary layer", "crane faults and tide windows",
           "reefer alarms; customs holds", "pilot ladder incidents, berth 4 delays"]


def _hogs(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def test_the_same_requests_at_once_on_two_loaded_workers_give_the_inline_bytes(
        env: dict[str, str], workers: WorkerFarm, tmp_path: Path) -> None:
    rounds = ROUNDS or 4
    engine = env.get("ROOKHAVEN_ENGINE", "bm25@3")  # the feedback engine has the most state
    worker_env = {"ROOKHAVEN_ENGINE": engine}
    if FULL:  # kernels compiled under load, by each worker, as on a fresh machine
        worker_env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
        worker_env["ROOKHAVEN_KERNEL_WARMUP"] = "background"
    workers.env.update(worker_env)
    submitters = [pipeline({**env, **worker_env}) for _ in range(2)]
    docs = sample_corpus()
    submitters[0].add_corpus(docs, "port")
    hogs = _hogs(2 if FULL else 1)
    try:
        for name in ("w1", "w2"):
            workers.start(name, concurrency=2, timeout=600 if FULL else 60)
        batches = [[RetrievalRequest(query=f"{q} {r}", recallBudget=5 + r % 3,
                                     seed=f"L{r}-{i}") for i, q in enumerate(QUERIES)]
                   for r in range(rounds)]
        ids: list[str] = []
        for batch in batches:
            made: list[list[str]] = [[], []]

            def submit(n: int, batch: list[RetrievalRequest] = batch,
                       made: list[list[str]] = made) -> None:
                made[n] = [r.job_id for r in submitters[n].submit_many(batch, "port")]

            threads = [threading.Thread(target=submit, args=(n,)) for n in range(2)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert made[0] == made[1] and len(made[0]) == len(batch)  # one key per request
            ids += made[0]
        pipe = submitters[0]
        wait_until(lambda: all_done(pipe, ids), 900 if FULL else 120,
                   what=f"{len(ids)} jobs done under load")
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    inline = Retriever(docs, engine)
    requests = [r for batch in batches for r in batch]
    for job_id, request in zip(ids, requests, strict=True):
        result, audit = result_bytes(inline.result_data(request))
        assert pipe.store.results.get(job_id) == result, job_id
        assert pipe.store.results.audit(job_id) == audit, job_id
    assert not list(pipe.store.ledger.violations())
    done = subprocess.run([sys.executable, "-m", "rookhaven.cli.main", "verify", "--all",
                           "--json"], cwd=ROOT, env={**env, **worker_env},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    run = json.loads(done.stdout)
    assert run["checked"] == run["matched"] == len(set(ids))
