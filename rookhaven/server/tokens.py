"""Who may call: named bearer tokens with scopes, from a file the operator manages.

The file (ROOKHAVEN_MCP_TOKENS_FILE, JSON, mode 0600) holds each token's name, the sha256 of
its secret and its scopes, never a secret: ``{"tokens": [{"name": "agent-a", "sha256":
"<hex>", "scopes": ["read", "submit"]}]}``. ``rookhaven token add`` writes an entry and prints
its secret once; ``revoke`` removes it, and the server stops taking it at its next request
(the file is read again whenever it changes). ROOKHAVEN_MCP_TOKEN stays one token, named
``ROOKHAVEN_MCP_TOKEN``, with every scope.

Scopes: ``read`` (retrieve, search_tools, the get_* tools, verify_result, list_corpora,
resources, run pages), ``submit`` (submit_retrieval), ``operate`` (start_verification,
start_rerank). A presented token is hashed and compared with every stored hash in constant
time, so neither how much of it matched nor which entry it is shows in the response time.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, InputError

SCOPES = ("read", "submit", "operate")
# The scope each tool needs; a tool not named here needs "read".
TOOL_SCOPES = {"submit_retrieval": "submit", "start_verification": "operate",
               "start_rerank": "operate"}
ENV_NAME = "ROOKHAVEN_MCP_TOKEN"
NAME = re.compile(r"[A-Za-z0-9._@:-]{1,64}")


@dataclass(frozen=True)
class Grant:
    """What a presented token may do: its name (for the trail, never its secret) and scopes."""

    name: str
    scopes: frozenset[str]

    def allows(self, tool: str) -> bool:
        return TOOL_SCOPES.get(tool, "read") in self.scopes


@dataclass(frozen=True)
class Entry:
    name: str
    sha256: bytes  # the hex digest's bytes, as compared
    scopes: frozenset[str]


def grant_of(scope: Mapping[str, Any]) -> Grant | None:
    """The grant the token check put with an HTTP request's ASGI scope, if any."""
    state = scope.get("state") if scope.get("type") == "http" else None
    grant = state.get("grant") if isinstance(state, dict) else None
    return grant if isinstance(grant, Grant) else None


def grant_in(context: Any) -> Grant | None:
    """The grant of the token an MCP request over HTTP carried (a tool's or a resource's
    context), None over stdio or without tokens: there every caller is the operator's own
    process."""
    request = getattr(getattr(context, "request_context", None), "request", None)
    scope = getattr(request, "scope", None)
    return grant_of(scope) if isinstance(scope, dict) else None


def asker(context: Any) -> str | None:
    """The name of the token behind a tool call, for the trail (None: no token)."""
    grant = grant_in(context)
    return grant.name if grant is not None else None


def check_name(name: str, where: str) -> None:
    """ConfigError naming ``where`` unless ``name`` can name a token: it is written into
    job records, comma-separated (store.askers), and into key names."""
    if not NAME.fullmatch(name):
        raise ConfigError(f"{where}: a token's name is 1-64 letters, digits and . _ - @ :, "
                          f"got {name!r}")


def digest(secret: str | bytes) -> bytes:
    """The hex sha256 of a token's secret, as the file stores it."""
    raw = secret.encode() if isinstance(secret, str) else secret
    return hashlib.sha256(raw).hexdigest().encode()


def scopes_of(raw: Iterable[str], where: str) -> frozenset[str]:
    """``raw`` as a set of known scopes, or ConfigError naming ``where``."""
    found = frozenset(raw)
    unknown = sorted(found - set(SCOPES))
    if unknown or not found:
        raise ConfigError(f"{where}: scopes must be some of {', '.join(SCOPES)}, got "
                          f"{', '.join(unknown) or 'none'}")
    return found


def read_file(path: Path) -> list[Entry]:
    """The entries of a token file, or ConfigError saying what is wrong with it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not a readable token file ({exc}); `rookhaven token "
                          "add` writes one") from None
    tokens = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(tokens, list):
        raise ConfigError(f'{path}: a token file is {{"tokens": [...]}}')
    entries, names = [], set()
    for at, item in enumerate(tokens):
        where = f"{path}, token {at + 1}"
        if not (isinstance(item, dict) and isinstance(item.get("name"), str)
                and isinstance(item.get("sha256"), str) and len(item["sha256"]) == 64
                and isinstance(item.get("scopes"), list)):
            raise ConfigError(f"{where}: each token has a name, a 64-hex sha256 and scopes")
        check_name(item["name"], where)
        if item["name"] in names:
            raise ConfigError(f"{where}: the name {item['name']!r} is taken by another token")
        names.add(item["name"])
        entries.append(Entry(item["name"], item["sha256"].lower().encode(),
                             scopes_of(item["scopes"], where)))
    return entries


def write_file(path: Path, entries: Sequence[Entry]) -> None:
    """``entries`` as the token file at ``path`` (mode 0600), replaced whole."""
    body = json.dumps({"tokens": [{"name": e.name, "sha256": e.sha256.decode(),
                                   "scopes": sorted(e.scopes)} for e in entries]}, indent=1)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.resolve().parent)
    try:
        os.fchmod(handle, 0o600)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(body + "\n")
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise InputError(f"{path}: cannot write the token file ({exc.strerror})") from None


def add(path: Path, name: str, scopes: frozenset[str]) -> str:
    """A new token named ``name`` in the file at ``path``: its secret (shown once)."""
    check_name(name, "rookhaven token add")
    entries = read_file(path)
    if any(e.name == name for e in entries):
        raise InputError(f"a token named {name!r} exists in {path}; revoke it first or "
                         "choose another name")
    secret = secrets.token_urlsafe(32)
    write_file(path, [*entries, Entry(name, digest(secret), scopes)])
    return secret


def revoke(path: Path, name: str) -> None:
    """Remove the token named ``name`` from the file at ``path``."""
    entries = read_file(path)
    if not any(e.name == name for e in entries):
        raise InputError(f"no token named {name!r} in {path}; `rookhaven token list` "
                         "names them")
    write_file(path, [e for e in entries if e.name != name])


class Keyring:
    """The tokens a server takes: ROOKHAVEN_MCP_TOKEN (every scope) and the token file's,
    the file read again whenever its modification time or size changes."""

    def __init__(self, token: str | None, path: Path | None) -> None:
        self._fixed = ([Entry(ENV_NAME, digest(token), frozenset(SCOPES))]
                       if token is not None else [])
        self._path = path
        self._seen: tuple[int, int] | None = None
        self._entries = list(self._fixed)
        self.refresh()

    @property
    def required(self) -> bool:
        """Whether any token is configured (then every HTTP request must carry one)."""
        return bool(self._fixed) or self._path is not None

    def refresh(self) -> None:
        """Read the file again if it changed since it was last read."""
        if self._path is None:
            return
        try:
            stat = self._path.stat()
            seen: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            seen = None
        if seen != self._seen:  # a file gone since is no tokens: read_file says so
            self._entries = [*self._fixed, *read_file(self._path)]
            self._seen = seen

    def grant(self, presented: bytes) -> Grant | None:
        """The grant of the token whose secret is ``presented``, or None. Every stored hash
        is compared, each in constant time, whichever matches."""
        self.refresh()
        given, found = digest(presented), None
        for entry in self._entries:
            if hmac.compare_digest(given, entry.sha256):
                found = entry
        return None if found is None else Grant(found.name, found.scopes)

    def listed(self) -> list[dict[str, Any]]:
        """Each token's name and scopes (never a secret nor its hash)."""
        self.refresh()
        return [{"name": e.name, "scopes": sorted(e.scopes)} for e in self._entries]
