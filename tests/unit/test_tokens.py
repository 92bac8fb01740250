"""Named, scoped tokens: the file holds hashes only, a presented token is compared with every
one in constant time, a change to the file is seen at the next request."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rookhaven.errors import ConfigError, InputError
from rookhaven.server import tokens
from rookhaven.server.tokens import ENV_NAME, SCOPES, Grant, Keyring, add, digest, revoke


def test_the_file_holds_names_scopes_and_hashes_never_a_secret(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    secret = add(path, "agent-a", frozenset({"read", "submit"}))
    stored = path.read_text()
    assert secret not in stored and digest(secret).decode() in stored
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert json.loads(stored)["tokens"] == [
        {"name": "agent-a", "sha256": digest(secret).decode(), "scopes": ["read", "submit"]}]
    with pytest.raises(InputError, match="a token named 'agent-a' exists"):
        add(path, "agent-a", frozenset({"read"}))
    assert Keyring(None, path).listed() == [{"name": "agent-a", "scopes": ["read", "submit"]}]


def test_a_grant_names_its_token_and_allows_its_scopes_tools_only(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    reader = add(path, "reader", frozenset({"read"}))
    keys = Keyring("env-secret", path)
    grant = keys.grant(reader.encode())
    assert grant == Grant("reader", frozenset({"read"}))
    assert grant.allows("retrieve") and grant.allows("get_run")
    assert not grant.allows("submit_retrieval") and not grant.allows("start_rerank")
    assert keys.grant(b"env-secret") == Grant(ENV_NAME, frozenset(SCOPES))
    assert keys.grant(reader[:-1].encode()) is None and keys.grant(b"") is None


def test_every_stored_hash_is_compared_whichever_matches(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "tokens.json"
    first = add(path, "a", frozenset({"read"}))
    add(path, "b", frozenset({"read"}))
    keys = Keyring(None, path)
    compared: list[tuple[bytes, bytes]] = []
    real = tokens.hmac.compare_digest

    def spy(given: bytes, stored: bytes) -> bool:
        compared.append((given, stored))
        return real(given, stored)

    monkeypatch.setattr(tokens.hmac, "compare_digest", spy)
    for presented in (first.encode(), b"x" * 43, first[:5].encode()):
        compared.clear()
        keys.grant(presented)
        # Two comparisons of two 64-hex digests each time: the time does not depend on how
        # much of the secret matched, nor on which entry it is.
        assert len(compared) == 2 and all(len(g) == len(s) == 64 for g, s in compared)
        assert compared[0][0] == digest(presented)


def test_a_revoked_or_added_token_is_seen_at_the_next_request(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    secret = add(path, "a", frozenset({"read"}))
    keys = Keyring(None, path)
    assert keys.grant(secret.encode()) is not None
    revoke(path, "a")
    assert keys.grant(secret.encode()) is None
    later = add(path, "b", frozenset({"operate"}))
    assert keys.grant(later.encode()) == Grant("b", frozenset({"operate"}))
    with pytest.raises(InputError, match="no token named 'a'"):
        revoke(path, "a")


@pytest.mark.parametrize(("body", "fault"), [
    ("not json", "not a readable token file"),
    ('{"tokens": {}}', "a token file is"),
    ('{"tokens": [{"name": "a", "sha256": "00", "scopes": ["read"]}]}', "64-hex sha256"),
    ('{"tokens": [{"name": "a", "sha256": "' + "0" * 64 + '", "scopes": ["write"]}]}',
     "scopes must be some of read, submit, operate, got write"),
])
def test_a_malformed_token_file_is_refused_saying_what_is_wrong(
        tmp_path: Path, body: str, fault: str) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(body)
    with pytest.raises(ConfigError, match=fault):
        Keyring(None, path)


@pytest.mark.parametrize("name", ["", "a,b", "two words", "x" * 65, "naïve", "line\nbreak"])
def test_a_name_the_trail_cannot_hold_is_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / "tokens.json"
    with pytest.raises(ConfigError, match="a token's name is 1-64 letters"):
        add(path, name, frozenset({"read"}))
    assert not path.exists()
    path.write_text(json.dumps({"tokens": [{"name": name, "sha256": "0" * 64,
                                            "scopes": ["read"]}]}))
    with pytest.raises(ConfigError, match="token 1: a token's name"):
        tokens.read_file(path)


def test_names_the_trail_can_hold_are_taken(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    for name in ("agent-a", "ci.bot_2", "ops@harbour", "team:audit", ENV_NAME):
        add(path, name, frozenset({"read"}))
    assert len(tokens.read_file(path)) == 5
