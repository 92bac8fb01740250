"""Helpers for the MCP tests: a small corpus file, a pipeline stand-in, a stdio session.

``MemoryBackend`` stands in for the pipeline (jobs and results in dicts, ranking inline), so
the server's job tools are tested without Redis; the real pipeline backend has its own
integration tests.
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fakeredis
import httpx2
from mcp_types import CallToolResult

from rookhaven.config import Settings
from rookhaven.core.canonical import canonical_bytes
from rookhaven.errors import NotFoundError, StoreUnavailableError
from rookhaven.models import Audit, Document, RetrievalRequest, RetrievalResult
from rookhaven.pipeline import Executor, Pipeline, RecordingDispatcher
from rookhaven.server.inline import InlineBackend
from rookhaven.server.outputs import CorporaOutput, JobOutput, RunOutput, VerifyOutput
from rookhaven.server.pipeline import PipelineBackend
from rookhaven.server.ports import CorpusData, PreparedRun, Retrieval, needs_pipeline
from rookhaven.store import Store
from rookhaven.verification import Selection
from tests import kernelcache

DOCUMENTS = [
    {"id": "d1", "text": "crane maintenance schedule for berth 7"},
    {"id": "d2", "text": "berth delays caused by tide windows"},
    {"id": "d3", "text": "crane faults reported on the night shift"},
    {"id": "d4", "text": "tide tables and pilot boarding windows"},
    {"id": "d5", "text": "reefer container power faults at berth 3"},
]

INITIALIZE_PARAMS = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "rookhaven-tests", "version": "1"},
}


def http_client(authorization: str) -> httpx2.AsyncClient:
    """An HTTP client sending ``authorization``, with the timeouts the MCP SDK gives its own
    (30 s, and 300 s to read: a tool may hold its answer, as ``get_run`` with ``wait``
    does), not httpx's 5 s."""
    return httpx2.AsyncClient(headers={"authorization": authorization},
                              timeout=httpx2.Timeout(30.0, read=300.0))


def ok(result: CallToolResult) -> dict[str, Any]:
    """The structured content of a successful tool result."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    """The message of a tool error, which must carry no structured content or traceback."""
    assert result.is_error
    assert result.structured_content is None
    text = str(result.content[0].text)  # type: ignore[union-attr]
    assert "Traceback" not in text
    return text


def fake_store() -> Iterator[Store]:
    """A store on a fresh fakeredis, closed afterwards (for a fixture to yield from)."""
    client = fakeredis.FakeRedis()
    yield Store(client, "mcp")
    client.close()


def worker(store: Store, settings: Settings) -> RecordingDispatcher:
    """A dispatcher that runs each job at once with the real Executor, like a worker would."""
    return RecordingDispatcher(executor=Executor(store, settings), worker="w1")


def pipeline_backend(store: Store, settings: Settings,
                     docs: list[Document]) -> PipelineBackend:
    """The MCP server's pipeline backend over ``store``, ``docs`` stored as corpus 'port'."""
    pipeline = Pipeline(store, worker(store, settings), settings)
    pipeline.add_corpus(docs, "port")
    return PipelineBackend(pipeline, settings, wait=10)


def write_corpus(directory: Path, name: str = "port") -> Path:
    path = directory / f"{name}.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DOCUMENTS), encoding="utf-8")
    return path


class MemoryBackend:
    """The pipeline's contract kept in memory; ``down`` makes every call fail like Redis down."""

    def __init__(self, settings: Settings) -> None:
        self.inline = InlineBackend(settings)
        self.stored: dict[str, bytes] = {}
        self.jobs: dict[str, JobOutput] = {}
        self.down = False

    def _reachable(self) -> None:
        if self.down:
            raise StoreUnavailableError("Error 111 connecting to 127.0.0.1:6379. "
                                        "Connection refused.")

    def retrieve(self, request: RetrievalRequest, corpus: str | None,
                 engine: str | None = None, asked_by: str | None = None) -> Retrieval:
        self._reachable()
        done = self.inline.retrieve(request, corpus, engine)
        return dataclasses.replace(done, mode="pipeline", reason="a worker answered")

    def answers_at_once(self, corpus: str | None, engine: str | None = None) -> bool:
        return False  # as the pipeline's: a store call each time

    def submit(self, request: RetrievalRequest, corpus: str | None,
               engine: str | None = None, asked_by: str | None = None) -> JobOutput:
        self._reachable()
        done = self.inline.retrieve(request, corpus, engine)
        self.stored.setdefault(done.result_key, canonical_bytes(done.result))
        job_id = done.result_key  # as in the pipeline: the job id is the result key
        self.jobs[job_id] = JobOutput(job_id=job_id, result_key=done.result_key, state="done",
                                      attempts=1)
        return self.jobs[job_id]

    def job(self, job_id: str) -> JobOutput:
        self._reachable()
        if job_id not in self.jobs:
            raise NotFoundError(f"no job {job_id!r}")
        return self.jobs[job_id]

    def result(self, key: str) -> RetrievalResult:
        self._reachable()
        if key not in self.stored:
            raise NotFoundError(f"no stored result under {key!r}")
        return RetrievalResult.model_validate_json(self.stored[key])

    def audit(self, key: str) -> Audit:
        return self.result(key).audit

    def proof(self, key: str) -> None:
        return None  # a memory backend keeps no log

    def verify(self, key: str) -> VerifyOutput:
        stored = self.result(key)
        audit = stored.audit
        request = RetrievalRequest(query=audit.query, recall_budget=audit.recall_budget,
                                   seed=audit.seed, decompose=audit.decompose)
        same = canonical_bytes(self.inline.retriever().retrieve(request)) == \
            self.stored[key]
        return VerifyOutput(result_key=key, match=same, outcome="match" if same else "mismatch",
                            alarm=not same, where=None if same else "hits")

    def corpora(self) -> CorporaOutput:
        self._reachable()
        return self.inline.corpora().model_copy(update={"pipeline": True})

    def corpus(self, ref: str) -> CorpusData:
        self._reachable()
        return self.inline.corpus(ref)

    def result_keys(self, offset: int, count: int) -> list[str]:
        self._reachable()
        return sorted(self.stored)[offset: offset + count]

    # Runs need a real store: tests/unit/test_mcp_runs.py uses the pipeline backend.
    def start_verification(self, selection: Selection,
                           asked_by: str | None = None) -> PreparedRun:
        raise needs_pipeline("start_verification")

    def start_rerank(self, target: Any, asked_by: str | None = None) -> PreparedRun:
        raise needs_pipeline("start_rerank")

    def recorded_run(self, run_id: str) -> RunOutput:
        raise NotFoundError(f"no run {run_id!r}")

    def report(self, run_id: str) -> bytes:
        raise NotFoundError(f"no run {run_id!r}")

    def close(self) -> None:
        pass


def server_env(corpus: Path | None, **extra: str) -> dict[str, str]:
    """The environment for a `rookhaven mcp` child: no Redis, this corpus, nothing inherited
    that would change its settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROOKHAVEN_")}
    if corpus is not None:
        env["ROOKHAVEN_CORPUS_PATH"] = str(corpus)
    env["ROOKHAVEN_KERNEL_WARMUP"] = kernelcache.warmup_setting()
    env.update(extra)
    return env


class StdioSession:
    """A `rookhaven mcp` child spoken to line by line; every read has a bounded wait."""

    def __init__(self, env: dict[str, str], timeout: float = 20.0) -> None:
        self.timeout = timeout
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rookhaven.cli.main", "mcp"], env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._pump_err, daemon=True).start()
        self._next_id = 1000

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _pump_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def send_raw(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.rstrip(b"\n") + b"\n")
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(json.dumps(message).encode())

    def read(self) -> dict[str, Any]:
        """The next line of stdout, which must be one JSON object."""
        line = self._lines.get(timeout=self.timeout)
        assert line is not None, "the server closed stdout: " + b"".join(self.stderr).decode()
        message = json.loads(line)
        assert isinstance(message, dict)
        return message

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and return its response, checking every line before it is one."""
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.until(self._next_id)

    def until(self, request_id: int | str) -> dict[str, Any]:
        while True:
            message = self.read()
            if message.get("id") == request_id:
                return message

    def initialize(self) -> dict[str, Any]:
        response = self.request("initialize", INITIALIZE_PARAMS)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response

    def close(self) -> int:
        """Close stdin, wait for the child to exit (killing it if it will not), its status."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=self.timeout)
            raise
