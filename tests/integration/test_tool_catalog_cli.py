"""``rookhaven corpus add --tools``: a published tool catalog stored as is, or one line and
nothing stored."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from rookhaven.config import Settings
from rookhaven.store import Store
from tests.integration.test_cli_retrieve import run_cli

TOOLS = {"tools": [
    {"name": "sendPushNotification", "description": "Send a push notification to a device.",
     "inputSchema": {"type": "object", "properties": {"device_id": {"type": "string"}}}},
    {"name": "send_email", "description": "Send an email to an address.",
     "inputSchema": {"type": "object", "properties": {"to": {"type": "string"}}}},
]}


def test_a_tools_list_result_is_stored_as_a_corpus_and_ranked(
        env: dict[str, str], tmp_path: Path) -> None:
    catalog = tmp_path / "tools.json"
    catalog.write_bytes(orjson.dumps({"jsonrpc": "2.0", "id": 2, "result": TOOLS}))
    done = run_cli("corpus", "add", "--tools", str(catalog), "--name", "notify", env=env)
    assert done.returncode == 0, done.stderr
    digest = done.stdout.decode().strip()
    again = run_cli("corpus", "add", "--tools", str(catalog), "--name", "notify", env=env)
    assert again.stdout.decode().strip() == digest  # the same list, the same corpus
    listed = run_cli("corpus", "list", env=env).stdout.decode()
    assert f"notify@1\t{digest}\t2 documents" in listed
    entry = Store.from_settings(Settings.from_mapping(env)).corpora.entry(digest)
    assert entry.documents == 2


@pytest.mark.parametrize(("content", "message"), [
    (b'{"tools": [{"description": "no name"}]}', "tools[0]: a tool needs a non-empty string"),
    (b'{"tools": [{"name": "a"}, {"name": "a"}]}', "tool 'a' is listed twice"),
    (b'{"tools": [{"name": "a", "inputSchema": 7}]}', "inputSchema must be an object"),
    (b"{not json", "not JSON"),
    (b'{"rows": []}', "not a tool catalog"),
])
def test_a_bad_catalog_exits_2_with_one_line_and_stores_nothing(
        env: dict[str, str], tmp_path: Path, content: bytes, message: str) -> None:
    catalog = tmp_path / "tools.json"
    catalog.write_bytes(content)
    done = run_cli("corpus", "add", "--tools", str(catalog), "--name", "bad", env=env)
    stderr = done.stderr.decode()
    assert done.returncode == 2 and done.stdout == b""
    assert message in stderr and stderr.count("\n") == 1, stderr
    assert "bad@" not in run_cli("corpus", "list", env=env).stdout.decode()


def test_corpus_add_takes_one_source_a_file_tools_or_a_live_server(
        env: dict[str, str], tmp_path: Path) -> None:
    catalog = tmp_path / "tools.json"
    catalog.write_bytes(orjson.dumps(TOOLS))
    for args in (["corpus", "add"], ["corpus", "add", str(catalog), "--tools", str(catalog)],
                 ["corpus", "add", "--tools", str(catalog), "--from-mcp", "x"]):
        done = run_cli(*args, env=env)
        assert done.returncode == 2
        assert "takes a corpus FILE, --tools FILE or --from-mcp COMMAND... (one of them)" in (
            done.stderr.decode())
    done = run_cli("corpus", "add", "--from-mcp", env=env)
    assert done.returncode == 2
    assert "--from-mcp needs the command that starts the server" in done.stderr.decode()


def test_eval_ranks_a_catalogs_own_judged_requests_per_engine_with_the_paired_test(
        env: dict[str, str], tmp_path: Path) -> None:
    catalog = tmp_path / "tools.json"
    catalog.write_bytes(orjson.dumps(TOOLS))
    assert run_cli("corpus", "add", "--tools", str(catalog), "--name", "cat",
                   env=env).returncode == 0
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(b"\n".join(orjson.dumps(r) for r in [
        {"query": "send an email", "expected": ["send_email"]},
        {"query": "push notification to a device", "expected": ["sendPushNotification"]},
        {"query": "notify someone", "expected": ["sendPushNotification", "send_email"]},
    ]))
    done = run_cli("eval", "--requests", str(requests), "--corpus", "cat", "--engine", "bm25@6",
                   "--engine", "bm25@2", "--format", "json", env=env)
    assert done.returncode == 0, done.stderr
    report = orjson.loads(done.stdout)
    assert report["requests"] == 3 and report["engines"] == ["bm25@6", "bm25@2"]
    cell = report["collections"]["requests.jsonl"]["bm25@6"]
    assert cell["success@1"] >= 2 / 3 and cell["success@5"] >= 2 / 3
    assert "mrr@10" in cell and "ndcg@10" in cell
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"query": "x", "expected": []}\n')
    done = run_cli("eval", "--requests", str(bad), "--corpus", "cat", env=env)
    assert done.returncode == 2 and b'bad.jsonl:1: "expected" must be' in done.stderr
    done = run_cli("eval", "--requests", str(requests), env=env)
    assert done.returncode == 2 and b"--requests FILE and --corpus REF go together" in done.stderr
