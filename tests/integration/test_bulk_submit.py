"""``rookhaven submit --requests FILE`` against a real Redis and real workers: ids in input
order, results equal to the inline core's bytes, a bad line refused before anything is
submitted, a failed job exits 1 naming it, progress only on a terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import orjson
import redis

from rookhaven import RetrievalRequest, canonical_bytes, retrieve
from tests.conftest import ROOT, wait_until
from tests.integration.workerfarm import WorkerFarm, documents, pipeline, requests

DOCS = documents(120)
ENGINES = ["bm25@2", "tfcosine@1", "bm25@1"]


def lines(n: int, tag: str = "") -> list[dict[str, object]]:
    """``n`` request lines, engines interleaved so batching by engine must restore order."""
    return [{"query": r.query, "recallBudget": r.recall_budget, "seed": r.seed,
             "engine": ENGINES[i % 3], **({"decompose": False} if i % 4 == 0 else {})}
            for i, r in enumerate(requests(n, tag))]


def write(path: Path, items: list[dict[str, object]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(item) + b"\n\n" for item in items))  # blank lines too
    return path


def submit(env: dict[str, str], *args: str, **popen: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rookhaven.cli.main", "submit", *args],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=180,
                          check=False, **popen)  # type: ignore[call-overload]


def job_records(env: dict[str, str]) -> int:
    client = redis.Redis.from_url(env["ROOKHAVEN_REDIS_URL"])
    try:
        return int(client.hlen(f"{env['ROOKHAVEN_KEY_PREFIX']}:jobs:state"))
    finally:
        client.close()


def expected(item: dict[str, object]) -> bytes:
    request = RetrievalRequest(query=item["query"], recallBudget=item["recallBudget"],
                               seed=item["seed"], decompose=item.get("decompose", True))
    return canonical_bytes(retrieve(request, DOCS, str(item["engine"])))


def test_ids_come_in_input_order_and_results_equal_the_inline_core(
        env: dict[str, str], workers: WorkerFarm, tmp_path: Path) -> None:
    pipe = pipeline(env)
    pipe.add_corpus(DOCS, "port")
    items = lines(60)
    workers.start("w1")
    out = tmp_path / "results.jsonl"
    done = submit(env, "--corpus", "port", "--requests", str(write(tmp_path / "r.jsonl", items)),
                  "--wait", "--out", str(out), "--timeout", "120")
    assert done.returncode == 0, done.stderr
    ids = done.stdout.split()
    digest = pipe.store.corpora.resolve("port")
    assert ids == [pipe.spec(RetrievalRequest(
        query=i["query"], recallBudget=i["recallBudget"], seed=i["seed"],
        decompose=i.get("decompose", True)), digest, str(i["engine"])).key for i in items]
    assert "submitted" not in done.stderr  # stderr is a pipe here
    assert out.read_bytes().split(b"\n")[:-1] == [expected(item) for item in items]
    pipe.store.close()


def test_a_bad_line_is_refused_with_its_number_before_anything_is_submitted(
        env: dict[str, str], tmp_path: Path) -> None:
    pipe = pipeline(env)
    pipe.add_corpus(DOCS, "port")
    path = tmp_path / "r.jsonl"
    good = b"".join(orjson.dumps(item) + b"\n" for item in lines(5))
    for bad, says in [(b'{"query": "tide", "recallBudget": 0}', "recall"),
                      (b'{"query": "tide", "colour": "red"}', "unknown field 'colour'"),
                      (b'{"query": "tide", "engine": "bm99"}', "unknown engine"),
                      (b'{"query": "tide", "seed": 7}', "seed must be a string"),
                      (b"[1, 2]", "expected a JSON object"),
                      (b"{not json", "not JSON")]:
        path.write_bytes(good + b"\n" + bad + b"\n" + good)
        before = job_records(env)
        done = submit(env, "--corpus", "port", "--requests", str(path))
        assert done.returncode == 2, done.stderr
        assert f"{path}: line 7: " in done.stderr and says in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        assert done.stdout == "" and job_records(env) == before == 0
    pipe.store.close()


def test_query_and_requests_are_mutually_exclusive_and_one_is_required(
        env: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", lines(1))
    assert submit(env, "--query", "tide", "--requests", str(path)).returncode == 2
    assert submit(env, "--corpus", "port").returncode == 2


def test_a_job_that_fails_at_run_time_exits_1_naming_it(
        env: dict[str, str], workers: WorkerFarm, tmp_path: Path) -> None:
    pipe = pipeline(env)
    digest = pipe.add_corpus(DOCS, "port").digest
    items = lines(6)
    out = tmp_path / "results.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rookhaven.cli.main", "submit", "--corpus", "port",
         "--requests", str(write(tmp_path / "r.jsonl", items)), "--wait", "--out", str(out),
         "--timeout", "120"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: job_records(env) == len(items), 60, what="the jobs to be recorded")
        # No worker has loaded it yet: every job now fails for good when it runs.
        pipe.store.client.delete(pipe.store.keys.corpus_meta(digest))
        workers.start("w1")
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, stderr
    ids = stdout.split()
    assert len(ids) == len(items)
    for job_id in ids:
        assert f"job {job_id} failed" in stderr
    assert "NotFoundError" in stderr and f"{len(items)} of {len(items)} job(s) failed" in stderr
    assert not out.exists()
    pipe.store.close()


def test_progress_is_shown_on_a_terminal_and_not_on_a_pipe(
        env: dict[str, str], tmp_path: Path) -> None:
    pipe = pipeline(env)
    pipe.add_corpus(DOCS, "port")
    path = write(tmp_path / "r.jsonl", lines(12))
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "rookhaven.cli.main", "submit", "--corpus", "port",
             "--requests", str(path)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
            stderr=follower, timeout=120, check=False)
        os.close(follower)
        follower = -1
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert done.returncode == 0
    assert b"submitted 12/12" in shown
    assert len(done.stdout.split()) == 12
    piped = submit(env, "--corpus", "port", "--requests", str(path))
    assert piped.returncode == 0 and "submitted" not in piped.stderr
    pipe.store.close()
