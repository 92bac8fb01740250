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


def test_corpus_add_takes_a_file_or_tools_not_both(env: dict[str, str], tmp_path: Path) -> None:
    catalog = tmp_path / "tools.json"
    catalog.write_bytes(orjson.dumps(TOOLS))
    for args in (["corpus", "add"], ["corpus", "add", str(catalog), "--tools", str(catalog)]):
        done = run_cli(*args, env=env)
        assert done.returncode == 2
        assert "a corpus FILE or --tools FILE" in done.stderr.decode()
