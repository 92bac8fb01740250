"""Connection losses and failovers on demand, for one Redis, a Sentinel service or a cluster.

Each topology offers the events an operator meets on it: a blip (every client connection
dropped, the servers answer on), a planned failover (the primary hands over to its replica:
SENTINEL FAILOVER, CLUSTER FAILOVER), and a lost primary (SIGKILL; its replica promoted, then
the host back as a replica, or a new node in its place). ``fire`` returns once clients can
reach a primary again, ``ready`` once it has its replicas in sync: from then on the store
acknowledges writes, the moment the recovery bound counts from.
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Iterator
from pathlib import Path

import redis

from tests.conftest import free_port, start_redis_server, wait_until
from tests.integration.clusters import ClusterNodes, cluster
from tests.integration.sentinels import SERVICE, SentinelTopology, topology

HEARTBEAT, SWEEP_INTERVAL = 2.0, 2.0
# The runbook's bound on handing back dropped work, after the connection is back.
BOUND = HEARTBEAT + SWEEP_INTERVAL + 10.0
# Settings under which recovery is timed: a task time limit of a minute, so a job left to
# the time-limit rule blows the bound many times over.
RECOVERY = {
    "ROOKHAVEN_TASK_TIME_LIMIT": "60",
    "ROOKHAVEN_VISIBILITY_TIMEOUT": "90",
    "ROOKHAVEN_SWEEP_AFTER": "20",
    "ROOKHAVEN_SWEEP_INTERVAL": f"{SWEEP_INTERVAL:g}",
    "ROOKHAVEN_WORKER_HEARTBEAT": f"{HEARTBEAT:g}",
    "ROOKHAVEN_REDIS_TIMEOUT": "20",  # above a promotion here, as the runbook asks
    "ROOKHAVEN_BATCH_SIZE": "50",
}


def _drop_clients(*nodes: redis.Redis) -> None:
    """Every normal and pub/sub connection of each node closed (not the caller's own)."""
    for node in nodes:
        try:
            node.client_kill_filter(_type="normal", skipme=True)
            node.client_kill_filter(_type="pubsub", skipme=True)
        finally:
            node.close()


class Topology:
    """One store's servers, and the events that can be fired at them."""

    url: str
    broker: str | None = None  # a broker apart from the store (a cluster's)
    events: tuple[str, ...] = ("blip",)
    # Replicas confirm every write (ROOKHAVEN_REDIS_MIN_REPLICAS) where there are replicas:
    # without, a failover may take acknowledged writes with it (ops/runbook.md).
    min_replicas = 0

    def fire(self, event: str) -> None:
        raise NotImplementedError

    def ready(self) -> None:
        """Return once every primary has its replicas in sync: a write can be acknowledged
        again, and the next event can be fired."""


class OneRedis(Topology):
    """One Redis, AOF fsynced at every write: blips, and restarts (a new replication id)."""

    events = ("blip", "restart")

    def __init__(self, directory: Path) -> None:
        self.directory, self.port = directory, free_port()
        directory.mkdir(parents=True, exist_ok=True)
        self.proc = self._start()
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def _start(self) -> subprocess.Popen[bytes]:
        # Each start replays the AOF the last one left in the same directory.
        return start_redis_server(self.directory, self.port, "--appendonly", "yes",
                                  "--appendfsync", "always")

    def fire(self, event: str) -> None:
        if event == "blip":
            _drop_clients(redis.Redis(port=self.port))
            return
        self.stop()
        self.proc = self._start()

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


class Sentinels(Topology):
    """A primary, its replica and three Sentinels: blips, planned failovers, a lost primary."""

    events = ("blip", "failover", "kill")
    min_replicas = 1

    def __init__(self, nodes: SentinelTopology) -> None:
        self.nodes = nodes
        self.url = nodes.url

    def _primary(self) -> str:
        port = self.nodes.primary_port()
        return next(name for name, p in self.nodes.ports.items() if p == port)

    def fire(self, event: str) -> None:
        nodes, primary = self.nodes, self._primary()
        if event == "blip":
            _drop_clients(nodes.node(primary))
            return
        if event == "failover":
            nodes.node("sentinel0").execute_command("SENTINEL", "FAILOVER", SERVICE)
        else:
            nodes.kill(primary)
        wait_until(lambda: nodes.primary_port() not in (None, nodes.ports[primary])
                   and self._answers(self._primary()), 60, what="a promoted primary")
        if event == "kill":
            nodes.restart(primary)  # empty; the Sentinels make it the replica

    def _answers(self, name: str) -> bool:
        try:
            return self.nodes.node(name).info("replication")["role"] == "master"
        except redis.RedisError:
            return False

    def ready(self) -> None:
        replica = next(name for name in ("primary", "replica") if name != self._primary())
        wait_until(lambda: self.nodes.replica_of_primary(replica) and self.nodes.settled(),
                   60, what="the replica back in sync, as every Sentinel sees it")


class Cluster(Topology):
    """Three primaries with a replica each, the broker on a Redis apart: blips (every node
    and the broker), planned failovers, a lost primary replaced by a new node."""

    events = ("blip", "failover", "kill")
    min_replicas = 1

    def __init__(self, nodes: ClusterNodes, broker: str, rng: random.Random) -> None:
        self.nodes, self.broker, self.rng = nodes, broker, rng
        self.url = nodes.url

    def fire(self, event: str) -> None:
        nodes = self.nodes
        if event == "blip":
            _drop_clients(*(nodes.client(port) for port in nodes.alive()),
                          redis.Redis.from_url(self.broker))
            return
        # Not a node the clients' URL names (fixed when they started; ``nodes.url`` follows
        # the nodes as they are replaced): a new client would have no node to learn from.
        named = {int(part.rsplit(":", 1)[1]) for part in self.url.split("//")[1].split(",")}
        primaries = nodes.primaries()
        victim = self.rng.choice(sorted(set(primaries) - named) or sorted(primaries))
        if event == "failover":
            replica = int(nodes.client(victim).info("replication")["slave0"]["port"])
            nodes.client(replica).execute_command("CLUSTER", "FAILOVER")
            wait_until(lambda: replica in nodes.primaries() and nodes.healthy(), 60,
                       what="the replica to take over")
            return
        victim_id = primaries[victim]
        nodes.kill(victim)
        wait_until(lambda: [p for p in nodes.primaries() if not nodes.replicas_of(p)]
                   and nodes.healthy(), 60, what="the killed primary's replica promoted")
        nodes.replace(victim)
        nodes.forget(victim_id)

    def ready(self) -> None:
        nodes = self.nodes
        wait_until(lambda: nodes.healthy()
                   and all(nodes.replicas_of(p) for p in nodes.primaries()), 60,
                   what="every primary to have a replica in sync")


def one_redis(directory: Path) -> Iterator[OneRedis]:
    servers = OneRedis(directory)
    try:
        yield servers
    finally:
        servers.stop()


def sentinels(directory: Path) -> Iterator[Sentinels]:
    for nodes in topology(directory):
        yield Sentinels(nodes)


def redis_cluster(directory: Path, rng: random.Random) -> Iterator[Cluster]:
    port = free_port()
    (directory / "broker").mkdir(parents=True)
    broker = start_redis_server(directory / "broker", port)
    try:
        for nodes in cluster(directory / "cluster"):
            yield Cluster(nodes, f"redis://127.0.0.1:{port}/0", rng)
    finally:
        broker.kill()
        broker.wait(timeout=10)
