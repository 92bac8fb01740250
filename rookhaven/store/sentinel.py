"""Redis Sentinel addresses: the ``sentinel://`` URL and what it says about nodes and TLS.

``sentinel://[user:password@]HOST[:PORT][,HOST[:PORT]...]/SERVICE[/DB][?OPTIONS]`` names the
Sentinels to ask (port 26379 when none is given), the monitored service whose primary the
store and the broker use, and the database. ``sentinels://`` is the same over TLS, to the
Sentinels and to the data nodes alike. The user and password are the data nodes'; Sentinels
that require their own login take ``sentinel_username`` and ``sentinel_password`` options.
TLS certificate options (``ssl_cert_reqs``, ``ssl_ca_certs``, ``ssl_certfile``,
``ssl_keyfile``) apply to both. See docs/adr/0017-sentinel.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, quote, unquote

from ..errors import ConfigError

SCHEMES = ("sentinel", "sentinels")
DEFAULT_PORT = 26379
TLS_OPTIONS = ("ssl_cert_reqs", "ssl_ca_certs", "ssl_certfile", "ssl_keyfile")
LOGIN_OPTIONS = ("sentinel_username", "sentinel_password")
OPTIONS = TLS_OPTIONS + LOGIN_OPTIONS
FORM = "sentinel://[user:password@]HOST:PORT[,HOST:PORT...]/SERVICE[/DB]"
_HOST = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9_.-]+))(?::(?P<port>\d+))?$")
_SERVICE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


@dataclass(frozen=True)
class SentinelURL:
    """A parsed ``sentinel://`` URL (``password`` fields kept out of repr)."""

    sentinels: tuple[tuple[str, int], ...]
    service: str
    db: int = 0
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    tls: bool = False
    tls_options: tuple[tuple[str, str], ...] = ()
    sentinel_username: str | None = None
    sentinel_password: str | None = field(default=None, repr=False)

    def data_login(self) -> dict[str, str]:
        """username/password keyword arguments for the data nodes (only those given)."""
        return _login(self.username, self.password)

    def sentinel_login(self) -> dict[str, str]:
        """username/password keyword arguments for the Sentinels (only those given)."""
        return _login(self.sentinel_username, self.sentinel_password)

    def tls_kwargs(self) -> dict[str, object]:
        """redis-py's TLS keyword arguments: ``ssl`` and the certificate options."""
        return {"ssl": True, **dict(self.tls_options)} if self.tls else {}

    def describe(self) -> str:
        """The service, database and Sentinels, without credentials."""
        hosts = ",".join(_hostport(h, p) for h, p in self.sentinels)
        return f"Sentinel service {self.service!r} (db {self.db}) via {hosts}"

    def kombu_url(self) -> str:
        """The broker URL kombu's Sentinel transport reads: one ``sentinel://`` per node,
        joined by ``;``, the data nodes' login and the database on the first."""
        login = ""
        if self.password is not None or self.username is not None:
            login = (quote(self.username or "", safe="") + ":"
                     + quote(self.password or "", safe="") + "@")
        first, *rest = self.sentinels
        urls = [f"sentinel://{login}{_hostport(*first)}/{self.db}"]
        urls += [f"sentinel://{_hostport(h, p)}" for h, p in rest]
        return ";".join(urls)


def is_sentinel(url: str) -> bool:
    """Whether ``url`` is a Sentinel URL (by scheme)."""
    return url.partition("://")[0].lower() in SCHEMES


def parse(url: str, shown: str) -> SentinelURL:
    """``url`` parsed, or a ConfigError naming ``shown`` (the redacted URL) and the fault."""
    scheme, _, rest = url.partition("://")
    rest, _, query = rest.partition("?")
    netloc, _, path = rest.partition("/")
    userinfo, at, hosts = netloc.rpartition("@")
    if not at:
        userinfo, hosts = "", netloc
    username, password = _userinfo(userinfo) if at else (None, None)
    sentinels = tuple(_sentinel(each, shown) for each in hosts.split(","))
    service, _, db_text = path.strip("/").partition("/")
    if not _SERVICE.match(service):
        raise ConfigError(f"ROOKHAVEN_REDIS_URL {shown!r} names no service (or a malformed "
                          f"one) after the Sentinels; write it as {FORM}")
    if db_text and not (db_text.isascii() and db_text.isdigit() and int(db_text) < 1 << 16):
        raise ConfigError(f"ROOKHAVEN_REDIS_URL {shown!r} has database {db_text!r}; the "
                          f"database is a number, as in {FORM}")
    options = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ConfigError(f"ROOKHAVEN_REDIS_URL {shown!r} has unknown option(s) "
                          f"{', '.join(unknown)}; accepted: {', '.join(OPTIONS)}")
    tls = scheme.lower() == "sentinels"
    given_tls = tuple((k, options[k]) for k in TLS_OPTIONS if k in options)
    if given_tls and not tls:
        raise ConfigError(f"ROOKHAVEN_REDIS_URL {shown!r} gives TLS options without TLS; "
                          "use the sentinels:// scheme for TLS")
    return SentinelURL(sentinels=sentinels, service=service, db=int(db_text or 0),
                       username=username, password=password, tls=tls, tls_options=given_tls,
                       sentinel_username=options.get("sentinel_username"),
                       sentinel_password=options.get("sentinel_password"))


def _userinfo(text: str) -> tuple[str | None, str | None]:
    user, colon, password = text.partition(":")
    return (unquote(user) or None), (unquote(password) if colon else None)


def _sentinel(text: str, shown: str) -> tuple[str, int]:
    match = _HOST.match(text)
    port = int(match["port"]) if match and match["port"] else DEFAULT_PORT
    if match is None or not 0 < port < 65536:
        raise ConfigError(f"ROOKHAVEN_REDIS_URL {shown!r} has Sentinel address {text!r}; "
                          f"give each as HOST:PORT, comma-separated, as in {FORM}")
    return (match["v6"] or match["name"]), port


def _hostport(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _login(username: str | None, password: str | None) -> dict[str, str]:
    given = {"username": username, "password": password}
    return {k: v for k, v in given.items() if v is not None}
