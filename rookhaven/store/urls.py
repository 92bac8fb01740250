"""Store URLs: every form Rookhaven accepts, checked and parsed once, and their redaction.

- ``redis://[user[:password]@]host[:port][/db]``, ``rediss://`` (TLS; certificate options as
  query parameters such as ``ssl_cert_reqs=required``) and ``unix:///path/redis.sock?db=N``:
  redis-py's own forms, read by redis-py.
- ``sentinel://[user:password@]HOST[:PORT][,HOST[:PORT]...]/SERVICE[/DB][?OPTIONS]`` names the
  Sentinels to ask (port 26379 when none is given), the monitored service whose primary the
  store and the broker use, and the database. ``sentinels://`` is the same over TLS, to the
  Sentinels and to the data nodes alike. The user and password are the data nodes';
  Sentinels that require their own login take ``sentinel_username`` and
  ``sentinel_password`` options (docs/adr/0017-sentinel.md).
- ``redis+cluster://[user:password@]HOST[:PORT][,HOST[:PORT]...][/]`` names some of a Redis
  Cluster's nodes (port 6379 when none is given; the client learns the rest from them);
  ``rediss+cluster://`` is the same over TLS. A cluster has one database, so the URL names
  none, and it cannot be the Celery broker.

TLS certificate options (``ssl_cert_reqs``, ``ssl_ca_certs``, ``ssl_certfile``,
``ssl_keyfile``) apply to every node. A password never appears in an error or a log line:
messages name a URL by ``redact``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from ..errors import ConfigError

SENTINEL_SCHEMES = ("sentinel", "sentinels")
CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")
SCHEMES = ("redis", "rediss", "unix", *SENTINEL_SCHEMES, *CLUSTER_SCHEMES)
SENTINEL_PORT, CLUSTER_PORT = 26379, 6379
TLS_OPTIONS = ("ssl_cert_reqs", "ssl_ca_certs", "ssl_certfile", "ssl_keyfile")
LOGIN_OPTIONS = ("sentinel_username", "sentinel_password")
SENTINEL_OPTIONS = TLS_OPTIONS + LOGIN_OPTIONS
SENTINEL_FORM = "sentinel://[user:password@]HOST:PORT[,HOST:PORT...]/SERVICE[/DB]"
CLUSTER_FORM = "redis+cluster://[user:password@]HOST:PORT[,HOST:PORT...]"
_HOST = re.compile(r"^(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9_.-]+))(?::(?P<port>\d+))?$")
_SERVICE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
# The password of a URL's user part, and any password option in its query.
_SECRETS = (re.compile(r"(?<=://)([^/@?#]*?):[^/@?#]*@"), re.compile(r"(password=)[^&#]*"))
# kombu's Redis transport cannot work across slots at all.
_NO_CLUSTER_BROKER = (
    "{setting} {url!r} names a Redis Cluster, which cannot be the Celery broker: kombu's "
    "Redis transport moves each message between its queue list and its unacked hash in one "
    "MULTI, and a cluster puts those keys in different slots; {fix}")


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***``, safe to print."""
    user_part, query_part = _SECRETS
    return query_part.sub(r"\1***", user_part.sub(r"\1:***@", url, count=1))


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
        return login(self.username, self.password)

    def sentinel_login(self) -> dict[str, str]:
        """username/password keyword arguments for the Sentinels (only those given)."""
        return login(self.sentinel_username, self.sentinel_password)

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


@dataclass(frozen=True)
class ClusterURL:
    """A parsed cluster URL (the password kept out of repr)."""

    nodes: tuple[tuple[str, int], ...]
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    tls: bool = False
    tls_options: tuple[tuple[str, str], ...] = ()

    def hosts(self) -> str:
        """The nodes asked first, as HOST:PORT,... (no credentials)."""
        return ",".join(_hostport(h, p) for h, p in self.nodes)

    def describe(self) -> str:
        """The nodes asked first, without credentials."""
        return f"Redis Cluster via {self.hosts()}"


@dataclass(frozen=True)
class StoreURL:
    """A checked store or broker URL: the text to connect with, its redaction, and for a
    Sentinel or a cluster URL what it names."""

    text: str = field(repr=False)
    shown: str
    sentinel: SentinelURL | None = None
    cluster: ClusterURL | None = None


@functools.lru_cache(maxsize=16)
def parse(url: str | None, setting: str = "ROOKHAVEN_REDIS_URL", *,
          broker: bool = False) -> StoreURL:
    """``url`` (the value of ``setting``) checked and parsed, if it names a Redis server
    Rookhaven can use (as the Celery ``broker``, or as the store), else a ConfigError saying
    why. Remembered: a process that opens many clients on one URL parses it once."""
    if not url:
        raise ConfigError(f"no Redis configured: set {setting}, "
                          "e.g. redis://127.0.0.1:6379/0")
    shown = redact(url)
    scheme = urlsplit(url).scheme
    if broker and scheme in CLUSTER_SCHEMES:
        fix = ("use a standalone or sentinel:// Redis" if setting == "ROOKHAVEN_BROKER_URL"
               else "keep the store there and set ROOKHAVEN_BROKER_URL to a standalone or "
                    "sentinel:// Redis for the broker")
        raise ConfigError(_NO_CLUSTER_BROKER.format(setting=setting, url=shown, fix=fix))
    if scheme not in SCHEMES:
        raise ConfigError(f"{setting} {shown!r} has scheme {scheme!r}; "
                          f"use one of: {', '.join(s + '://' for s in SCHEMES)}")
    database = urlsplit(url).path.strip("/")
    # redis-py reads a path that is not a number as database 0, silently.
    if scheme in ("redis", "rediss") and database and not (database.isascii()
                                                           and database.isdigit()):
        raise ConfigError(f"{setting} {shown!r} has database {database!r}; the database "
                          "is a number, as in redis://127.0.0.1:6379/0")
    if scheme in SENTINEL_SCHEMES:
        return StoreURL(url, shown, sentinel=sentinel_url(url, shown, setting))
    if scheme in CLUSTER_SCHEMES:
        return StoreURL(url, shown, cluster=cluster_url(url, shown, setting))
    return StoreURL(url, shown)


def sentinel_url(url: str, shown: str, setting: str = "ROOKHAVEN_REDIS_URL") -> SentinelURL:
    """A ``sentinel://`` URL parsed, or a ConfigError naming ``setting``, ``shown`` (the
    redacted URL) and the fault."""
    scheme, _, rest = url.partition("://")
    rest, _, query = rest.partition("?")
    netloc, _, path = rest.partition("/")
    userinfo, at, hosts = netloc.rpartition("@")
    if not at:
        userinfo, hosts = "", netloc
    username, password = _userinfo(userinfo) if at else (None, None)
    sentinels = tuple(_address(each, shown, setting, SENTINEL_FORM, "Sentinel address",
                               SENTINEL_PORT) for each in hosts.split(","))
    service, _, db_text = path.strip("/").partition("/")
    if not _SERVICE.match(service):
        raise ConfigError(f"{setting} {shown!r} names no service (or a malformed "
                          f"one) after the Sentinels; write it as {SENTINEL_FORM}")
    if db_text and not (db_text.isascii() and db_text.isdigit() and int(db_text) < 1 << 16):
        raise ConfigError(f"{setting} {shown!r} has database {db_text!r}; the "
                          f"database is a number, as in {SENTINEL_FORM}")
    options = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    unknown = sorted(set(options) - set(SENTINEL_OPTIONS))
    if unknown:
        raise ConfigError(f"{setting} {shown!r} has unknown option(s) "
                          f"{', '.join(unknown)}; accepted: {', '.join(SENTINEL_OPTIONS)}")
    tls = scheme.lower() == "sentinels"
    given_tls = tuple((k, options[k]) for k in TLS_OPTIONS if k in options)
    if given_tls and not tls:
        raise ConfigError(f"{setting} {shown!r} gives TLS options without TLS; "
                          "use the sentinels:// scheme for TLS")
    return SentinelURL(sentinels=sentinels, service=service, db=int(db_text or 0),
                       username=username, password=password, tls=tls, tls_options=given_tls,
                       sentinel_username=options.get("sentinel_username"),
                       sentinel_password=options.get("sentinel_password"))


def cluster_url(url: str, shown: str, setting: str = "ROOKHAVEN_REDIS_URL") -> ClusterURL:
    """A ``redis+cluster://`` URL parsed, or a ConfigError naming ``setting``, ``shown`` (the
    redacted URL) and the fault."""
    scheme, _, rest = url.partition("://")
    rest, _, query = rest.partition("?")
    netloc, _, path = rest.partition("/")
    if path.strip("/") not in ("", "0"):
        raise ConfigError(f"{setting} {shown!r} names database {path!r}; a "
                          f"cluster has only database 0: write it as {CLUSTER_FORM}")
    userinfo, at, hosts = netloc.rpartition("@")
    if not at:
        hosts = netloc
    username, password = _userinfo(userinfo) if at else (None, None)
    nodes = tuple(_address(each, shown, setting, CLUSTER_FORM, "node address", CLUSTER_PORT)
                  for each in hosts.split(","))
    options = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
    unknown = sorted(set(options) - set(TLS_OPTIONS))
    tls = scheme.lower() == "rediss+cluster"
    if unknown or (options and not tls):
        raise ConfigError(f"{setting} {shown!r} has option(s) "
                          f"{', '.join(sorted(options))}; a cluster URL takes only the TLS "
                          f"options ({', '.join(TLS_OPTIONS)}), with rediss+cluster://")
    return ClusterURL(nodes=nodes, username=username, password=password, tls=tls,
                      tls_options=tuple(sorted(options.items())))


def _userinfo(text: str) -> tuple[str | None, str | None]:
    user, colon, password = text.partition(":")
    return (unquote(user) or None), (unquote(password) if colon else None)


def _hostport(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def login(username: str | None, password: str | None) -> dict[str, str]:
    """redis-py's username/password keyword arguments (only those given)."""
    given = {"username": username, "password": password}
    return {k: v for k, v in given.items() if v is not None}


def _address(text: str, shown: str, setting: str, form: str, what: str,
             default_port: int) -> tuple[str, int]:
    """One HOST[:PORT] of a Sentinel or cluster URL."""
    match = _HOST.match(text)
    port = int(match["port"]) if match and match["port"] else default_port
    if match is None or not 0 < port < 65536:
        raise ConfigError(f"{setting} {shown!r} has {what} {text!r}; give each as "
                          f"HOST:PORT, comma-separated, as in {form}")
    return (match["v6"] or match["name"]), port
