"""The workers' warm-up reaches every compiled path, so no pool child compiles on a job;
and a worker whose kernels are not compiled yet answers from its start."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rookhaven import Retriever, canonical_bytes
from rookhaven.core.compiled import AVAILABLE
from tests.conftest import wait_until
from tests.integration.workerfarm import WorkerFarm, all_done, documents, pipeline, requests
from tests.kernels import KERNELS

PROBE = f"""
import importlib, json
from rookhaven.pipeline.warmup import warm_up
warm_up(["bm25@3"])
kernels = {KERNELS!r}
print(json.dumps({{f"{{m}}.{{n}}": len(getattr(importlib.import_module(m), n).signatures)
                  for m, names in kernels.items() for n in names}}))
"""


@pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")
def test_a_fresh_process_warmed_up_holds_every_kernel_compiled() -> None:
    # A process of its own: in this one, earlier tests may have compiled them already.
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         check=True, timeout=600)
    signatures = json.loads(out.stdout.strip().splitlines()[-1])
    assert signatures and all(signatures.values()), signatures


@pytest.mark.slow
@pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")
def test_a_worker_with_an_empty_kernel_cache_answers_at_once_then_goes_compiled(
        env: dict[str, str], workers: WorkerFarm, tmp_path: Path) -> None:
    # Nothing compiled on this machine (a fresh install): the first job must not wait for
    # the compile, and once it is done the worker's jobs run compiled, with the same bytes.
    workers.env.update(NUMBA_CACHE_DIR=str(tmp_path / "numba"), ROOKHAVEN_LOG_LEVEL="info",
                       ROOKHAVEN_KERNEL_WARMUP="background")
    pipe = pipeline(env)
    docs = documents(300)
    pipe.add_corpus(docs, "port")
    launched = time.monotonic()
    workers.start("cold", concurrency=1)
    first = pipe.submit(requests(1, tag="cold-")[0], "port").job_id
    wait_until(lambda: all_done(pipe, [first]), 15, what="the first job, from launch")
    first_answer = time.monotonic() - launched
    log = tmp_path / "cold.log"
    ids = [first]

    def compiled_now() -> bool:
        # A task starting after the compile finished switches: keep work coming until then.
        ids.extend(r.job_id for r in pipe.submit_many(
            requests(2, tag=f"cold-{len(ids)}-"), "port"))
        return b"using the compiled kernels" in log.read_bytes()

    wait_until(compiled_now, 300, what="the worker to switch to the compiled kernels",
               interval=0.5)
    wait_until(lambda: all_done(pipe, ids), 60, what="every job done")
    inline = Retriever(docs, pipe.settings.engine)
    made = requests(1, tag="cold-") + [r for n in range(1, len(ids), 2)
                                       for r in requests(2, tag=f"cold-{n}-")]
    by_id = {pipe.spec(r, pipe.store.corpora.resolve("port")).key: r for r in made}
    for job_id in ids:
        assert pipe.result(job_id) == canonical_bytes(inline.retrieve(by_id[job_id]))
    print(f"\nempty kernel cache: first answer {first_answer:.1f} s after the worker's launch")


@pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")
def test_a_worker_told_its_kernel_cache_is_filled_starts_no_compile_and_gives_the_same_bytes(
        env: dict[str, str], workers: WorkerFarm, tmp_path: Path) -> None:
    # ROOKHAVEN_KERNEL_WARMUP=none, as in an image whose build filled the cache the way the
    # setting's help says (a second or so when this session's compile filled it already):
    # no background process, the kernels from the first job.
    workers.env.update(ROOKHAVEN_LOG_LEVEL="info", ROOKHAVEN_KERNEL_WARMUP="none")
    pipe = pipeline(env)
    subprocess.run([sys.executable, "-m", "rookhaven.pipeline.warmup", pipe.settings.engine],
                   env=workers.env, check=True, timeout=600)
    docs = documents(300)
    pipe.add_corpus(docs, "port")
    workers.start("filled", concurrency=1)
    made = requests(4, tag="filled-")
    ids = [ref.job_id for ref in pipe.submit_many(made, "port")]
    wait_until(lambda: all_done(pipe, ids), 60, what="the jobs of a worker with a filled cache")
    log = (tmp_path / "filled.log").read_bytes()
    assert b"load from numba's cache at first use" in log, log[-2000:]
    assert b"in the background" not in log and b"using the compiled kernels" not in log
    inline = Retriever(docs, pipe.settings.engine)
    for job_id, request in zip(ids, made, strict=True):
        assert pipe.result(job_id) == canonical_bytes(inline.retrieve(request))
