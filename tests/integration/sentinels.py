"""A real Sentinel-managed Redis for tests: a primary, a replica and three Sentinels.

Every process is a ``redis-server`` of the test's own, on free ports, in its own directory
(a Sentinel rewrites its config file). The primary can be SIGKILLed like a lost host; the
Sentinels then promote the replica, and ``url`` keeps naming the service wherever it is.
With ``tls``, every process (data nodes and Sentinels) listens over TLS only, replicates
and monitors over TLS, and ``url`` is a ``sentinels://`` URL naming the CA.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import redis

from rookhaven.errors import StoreUnavailableError
from tests.conftest import free_port, start_redis_server, wait_until
from tests.integration.tls import TlsFiles

if TYPE_CHECKING:
    from rookhaven import RetrievalRequest
    from rookhaven.pipeline import JobRef, Pipeline

SERVICE = "rookhaven"
# Fast enough for a test, slow enough that a loaded 2-core machine is not taken for dead.
DOWN_AFTER_MS = 1500


class SentinelTopology:
    """Starts, kills and stops the five processes of one test."""

    def __init__(self, directory: Path, tls: TlsFiles | None = None) -> None:
        self.directory = directory
        self.tls = tls
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.ports: dict[str, int] = {}

    @property
    def url(self) -> str:
        """The ``sentinel://`` URL of the service, db 0 (``sentinels://`` with the CA, if TLS)."""
        hosts = ",".join(f"127.0.0.1:{self.ports[f'sentinel{i}']}" for i in range(3))
        if self.tls is None:
            return f"sentinel://{hosts}/{SERVICE}/0"
        return f"sentinels://{hosts}/{SERVICE}/0?ssl_ca_certs={quote(str(self.tls.ca))}"

    def node(self, name: str) -> redis.Redis:
        """A plain client of one node (``primary``, ``replica`` or ``sentinelN``)."""
        tls = {} if self.tls is None else self.tls.client_kwargs()
        return redis.Redis(port=self.ports[name], socket_connect_timeout=2, socket_timeout=2,
                           **tls)  # type: ignore[arg-type]

    def start(self) -> None:
        """Start the primary, its replica and three Sentinels; return once the Sentinels
        agree on the primary, see the replica in sync and see each other."""
        self._redis("primary")
        self._redis("replica", "--replicaof", "127.0.0.1", str(self.ports["primary"]))
        wait_until(lambda: self._in_sync("replica"), 30, what="the replica to sync")
        for i in range(3):
            self._sentinel(f"sentinel{i}")
        wait_until(self._sentinels_ready, 60, what="three Sentinels to see each other")

    def primary_port(self) -> int | None:
        """The primary's port as the first Sentinel that answers says, or None."""
        for i in range(3):
            try:
                address = self.node(f"sentinel{i}").execute_command(
                    "SENTINEL", "get-master-addr-by-name", SERVICE)
            except redis.RedisError:
                continue
            if address:
                return int(address[1])
        return None

    def kill(self, name: str) -> float:
        """SIGKILL one node, as a lost host; returns the monotonic time of the kill."""
        proc = self.procs.pop(name)
        proc.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        proc.wait(timeout=10)
        return killed

    def restart(self, name: str, *extra: str) -> None:
        """Start a killed node again on its port, empty, as a replaced host; the Sentinels
        make it a replica of whichever node is primary now (or ``extra`` says so)."""
        lives = len(list((self.directory / name).glob("again*")))
        directory = self.directory / name / f"again{lives or ''}"  # a directory each life
        directory.mkdir(parents=True)
        self.procs[name] = start_redis_server(directory, self.ports[name], "--appendonly", "no",
                                              "--repl-diskless-sync-delay", "0", *extra,
                                              tls=self.tls)

    def replica_of_primary(self, name: str) -> bool:
        """Whether ``name`` replicates the current primary with its link up."""
        try:
            info = self.node(name).info("replication")
        except redis.RedisError:
            return False
        return (info.get("role") == "slave" and info.get("master_port") == self.primary_port()
                and info.get("master_link_status") == "up")

    def stop(self) -> None:
        for proc in self.procs.values():
            proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        self.procs.clear()

    def _redis(self, name: str, *extra: str) -> None:
        directory = self.directory / name
        directory.mkdir(parents=True)
        self.ports[name] = port = free_port()
        # A replica syncs at once (not after diskless sync's default 5 s wait): a test
        # waits for it after every failover.
        self.procs[name] = start_redis_server(directory, port, "--appendonly", "no",
                                              "--repl-diskless-sync-delay", "0", *extra,
                                              tls=self.tls)

    def _sentinel(self, name: str) -> None:
        directory = self.directory / name
        directory.mkdir(parents=True)
        self.ports[name] = port = free_port()
        config = directory / "sentinel.conf"
        listen = f"port {port}\n" if self.tls is None else (
            f"port 0\ntls-port {port}\ntls-cert-file {self.tls.cert}\n"
            f"tls-key-file {self.tls.key}\ntls-ca-cert-file {self.tls.ca}\n"
            "tls-auth-clients no\ntls-replication yes\n")
        config.write_text(
            f"{listen}bind 127.0.0.1\ndir {directory}\n"
            f"logfile {directory / 'sentinel.log'}\n"
            f"sentinel monitor {SERVICE} 127.0.0.1 {self.ports['primary']} 2\n"
            f"sentinel down-after-milliseconds {SERVICE} {DOWN_AFTER_MS}\n"
            f"sentinel failover-timeout {SERVICE} 20000\n"
            f"sentinel parallel-syncs {SERVICE} 1\n")
        self.procs[name] = subprocess.Popen(
            ["redis-server", str(config), "--sentinel"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: self._answers(name), 20, what=f"{name} to answer")

    def _answers(self, name: str) -> bool:
        try:
            return bool(self.node(name).ping())
        except redis.RedisError:
            return False

    def _in_sync(self, name: str) -> bool:
        try:
            info = self.node(name).info("replication")
        except redis.RedisError:
            return False
        return info.get("master_link_status") == "up"

    def settled(self) -> bool:
        """Whether every Sentinel names the same primary, flagged only as one, and one
        replica of it, flagged only as one, its link up: no failover or reconfiguration
        under way. A failover asked for before that can race a Sentinel still converting
        a node: it promotes the node another Sentinel then points back at the old primary,
        and the two wait out ``failover-timeout`` before anything converges."""
        primary = self.primary_port()
        try:
            for i in range(3):
                sentinel = self.node(f"sentinel{i}")
                master = _fields(sentinel.execute_command("SENTINEL", "master", SERVICE))
                replicas = [_fields(r) for r in
                            sentinel.execute_command("SENTINEL", "replicas", SERVICE)]
                if (master.get("port") != str(primary) or master.get("flags") != "master"
                        or len(replicas) != 1 or replicas[0].get("flags") != "slave"
                        or replicas[0].get("master-link-status") != "ok"
                        or replicas[0].get("master-port") != str(primary)):
                    return False
        except redis.RedisError:
            return False
        return True

    def _sentinels_ready(self) -> bool:
        try:
            for i in range(3):
                sentinel = self.node(f"sentinel{i}")
                replicas = sentinel.execute_command("SENTINEL", "replicas", SERVICE)
                others = sentinel.execute_command("SENTINEL", "sentinels", SERVICE)
                if len(replicas) != 1 or len(others) != 2:
                    return False
        except redis.RedisError:
            return False
        return True


def _fields(reply: dict[bytes, bytes] | list[bytes]) -> dict[str, str]:
    """A Sentinel's description of a node (a map, or alternating names and values), as
    text."""
    pairs = (reply.items() if isinstance(reply, dict)
             else zip(reply[::2], reply[1::2], strict=True))
    return {_text(name): _text(value) for name, value in pairs}


def _text(item: bytes | str | int) -> str:
    return item.decode() if isinstance(item, bytes) else str(item)


def topology(directory: Path, tls: TlsFiles | None = None) -> Iterator[SentinelTopology]:
    """A started topology, stopped afterwards (for a fixture)."""
    nodes = SentinelTopology(directory, tls)
    try:
        nodes.start()
        yield nodes
    finally:
        nodes.stop()


def submitted(pipe: Pipeline, batch: list[RetrievalRequest],
              corpus: str = "port") -> list[JobRef] | None:
    """``batch`` submitted, or None while the Sentinels still name a dead primary (for
    ``wait_until`` around a failover)."""
    try:
        return pipe.submit_many(batch, corpus)
    except StoreUnavailableError:
        return None
