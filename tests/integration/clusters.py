"""A real Redis Cluster for tests: primaries and replicas started, created, killed, resharded."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis

from tests.conftest import free_port, start_redis_server, wait_until


@dataclass
class ClusterNodes:
    """The cluster's redis-server processes by port."""

    directory: Path
    procs: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)
    # Each node's options beyond cluster mode: a fast failover, no persistence by default.
    options: tuple[str, ...] = ("--cluster-node-timeout", "1000", "--appendonly", "no")

    @property
    def url(self) -> str:
        """The store URL, naming two of the nodes (the client learns the rest)."""
        first, second = sorted(self.procs)[:2]
        return f"redis+cluster://127.0.0.1:{first},127.0.0.1:{second}"

    def client(self, port: int) -> redis.Redis:
        return redis.Redis(port=port, socket_connect_timeout=2, socket_timeout=5)

    def alive(self) -> list[int]:
        return [port for port, proc in self.procs.items() if proc.poll() is None]

    def primaries(self) -> dict[int, str]:
        """Port -> node id of each live primary that serves slots."""
        found = {}
        for port in self.alive():
            info = self.client(port).execute_command("CLUSTER", "MYID")
            role = self.client(port).execute_command("ROLE")[0]
            if role == b"master" and self.slots_of(port):
                found[port] = info.decode()
        return found

    def slots_of(self, port: int) -> int:
        """How many slots the node on ``port`` serves as primary, as it sees itself."""
        me = self.client(port).execute_command("CLUSTER", "MYID").decode()
        total = 0
        for line in self.client(port).execute_command("CLUSTER", "NODES").decode().splitlines():
            node_id, *_, = line.split()
            if node_id != me:
                continue
            for part in line.split()[8:]:
                if part.startswith("["):
                    continue
                low, _, high = part.partition("-")
                total += int(high or low) - int(low) + 1
        return total

    def healthy(self) -> bool:
        """Every live node says the cluster is ok and sees every slot served."""
        try:
            for port in self.alive():
                info = self.client(port).execute_command("CLUSTER", "INFO").decode()
                if "cluster_state:ok" not in info or "cluster_slots_ok:16384" not in info:
                    return False
            return True
        except redis.RedisError:
            return False

    def kill(self, port: int) -> None:
        """SIGKILL the node on ``port``."""
        os.kill(self.procs[port].pid, signal.SIGKILL)
        self.procs[port].wait(timeout=10)

    def cut_replication(self, primary: int) -> int:
        """Freeze the replica of ``primary`` (SIGSTOP) and drop its link, so the writes the
        primary accepts from now on reach no replica (lost if it dies before ``resume``):
        the replica's port."""
        info = self.client(primary).info("replication")
        replica = int(info["slave0"]["port"])
        os.kill(self.procs[replica].pid, signal.SIGSTOP)
        self.client(primary).execute_command("CLIENT", "KILL", "TYPE", "replica")
        return replica

    def resume(self, port: int) -> None:
        """Let a node frozen by ``cut_replication`` run again."""
        os.kill(self.procs[port].pid, signal.SIGCONT)

    def offset(self, port: int) -> int:
        """The replication offset of the primary on ``port`` (grows with every write)."""
        return int(self.client(port).info("replication")["master_repl_offset"])

    def start(self, port: int) -> None:
        """Start a cluster node on ``port``, knowing no cluster yet."""
        home = self.directory / str(port)
        home.mkdir(parents=True, exist_ok=True)
        (home / "nodes.conf").unlink(missing_ok=True)
        self.procs[port] = start_redis_server(
            home, port, "--cluster-enabled", "yes", "--cluster-config-file",
            str(home / "nodes.conf"), *self.options)

    def replace(self, dead: int) -> int:
        """The operator's step after a failover: a new, empty node joins as the replica of
        the primary that lost its own (the dead node never comes back with a stale view of
        the slots it served). Its port."""
        orphan = next(port for port in self.primaries() if not self.replicas_of(port))
        # add-node refuses while the nodes' views of the failover still differ (gossip
        # spreads it over a node timeout or two; longer on a loaded machine).
        wait_until(lambda: self.agree(orphan), 60, what="every node to agree on the failover")
        port = _node_port()
        self.start(port)
        added = subprocess.run(
            ["redis-cli", "--cluster", "add-node", f"127.0.0.1:{port}", f"127.0.0.1:{orphan}",
             "--cluster-slave", "--cluster-master-id", self.primaries()[orphan]],
            capture_output=True, text=True, timeout=120, check=False)
        assert added.returncode == 0, added.stdout[-2000:] + added.stderr[-2000:]
        del self.procs[dead]
        return port

    def forget(self, node_id: str) -> None:
        """Every live node forgets the node ``node_id`` (the dead one, once its replica is
        promoted: forgetting it earlier leaves that replica following an unknown node)."""
        for port in self.alive():
            try:
                self.client(port).execute_command("CLUSTER", "FORGET", node_id)
            except redis.ResponseError as exc:  # a node that never knew it, or is it
                if "Unknown node" not in str(exc) and "myself" not in str(exc):
                    raise

    def agree(self, port: int) -> bool:
        """Whether every node reachable from ``port`` holds the same slot configuration
        (the check ``redis-cli --cluster add-node`` makes before it adds one)."""
        check = subprocess.run(["redis-cli", "--cluster", "check", f"127.0.0.1:{port}"],
                               capture_output=True, text=True, timeout=60, check=False)
        return "don't agree" not in check.stdout + check.stderr

    def replicas_of(self, port: int) -> int:
        """How many replicas of the primary on ``port`` are online (synced, streaming)."""
        info = self.client(port).info("replication")
        return sum(1 for name, value in info.items()
                   if name.startswith("slave") and isinstance(value, dict)
                   and value.get("state") == "online")

    def begin_moving(self, slot: int, source: int, target: int) -> None:
        """Mark ``slot`` as moving from the primary on port ``source`` to ``target`` (keys
        still where they were: the source sends a missing key's command on with ASK)."""
        ids = self.primaries()
        self.client(target).execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING",
                                            ids[source])
        self.client(source).execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING",
                                            ids[target])

    def finish_moving(self, slot: int, source: int, target: int) -> None:
        """Move ``slot``'s keys from ``source`` to ``target`` and give every primary the
        slot's new owner (after ``begin_moving``)."""
        ids = self.primaries()
        for name in self.client(source).execute_command("CLUSTER", "GETKEYSINSLOT", slot,
                                                        1000):
            self.client(source).migrate("127.0.0.1", target, name, 0, 5000)
        for port in ids:
            self.client(port).execute_command("CLUSTER", "SETSLOT", slot, "NODE", ids[target])

    def reshard(self, source: str, target: str, slots: int) -> subprocess.CompletedProcess[str]:
        """Move ``slots`` slots (and their keys) from node ``source`` to ``target``."""
        port = self.alive()[0]
        return subprocess.run(
            ["redis-cli", "--cluster", "reshard", f"127.0.0.1:{port}", "--cluster-from",
             source, "--cluster-to", target, "--cluster-slots", str(slots), "--cluster-yes",
             "--cluster-pipeline", "100"],
            capture_output=True, text=True, timeout=600, check=False)


def _node_port() -> int:
    """A free port whose cluster bus port (port + 10000) is a port too, and free."""
    while True:
        port = free_port()
        if port + 10000 < 65536:
            with socket.socket() as sock:
                try:
                    sock.bind(("127.0.0.1", port + 10000))
                except OSError:
                    continue
            return port


def cluster(directory: Path, primaries: int = 3,
            options: tuple[str, ...] | None = None) -> Iterator[ClusterNodes]:
    """``primaries`` primaries with a replica each, created with ``redis-cli --cluster``;
    each node started with ``options`` (default: ``ClusterNodes.options``)."""
    if shutil.which("redis-cli") is None:
        pytest.skip("redis-cli is not installed (apt-get install redis-tools)")
    nodes = ClusterNodes(directory) if options is None else ClusterNodes(directory,
                                                                         options=options)
    try:
        for _ in range(2 * primaries):
            nodes.start(_node_port())
        created = subprocess.run(
            ["redis-cli", "--cluster", "create",
             *(f"127.0.0.1:{port}" for port in nodes.procs), "--cluster-replicas", "1",
             "--cluster-yes"], capture_output=True, text=True, timeout=120, check=False)
        assert created.returncode == 0, created.stdout[-2000:] + created.stderr[-2000:]
        wait_until(nodes.healthy, 60, what="the cluster to agree on every slot")
        wait_until(lambda: all(nodes.replicas_of(p) for p in nodes.primaries()), 60,
                   what="every primary's replica to sync")
        yield nodes
    finally:
        for proc in nodes.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in nodes.procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
