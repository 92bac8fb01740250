"""What every store component shares: the client, the key layout, the clock and the scripts."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from redis.commands.core import Script

from ..errors import ConfigError
from . import layout, scripts
from .cluster import is_cluster
from .connection import translated
from .keys import Keys, ShardKeys

# The ledger stream is trimmed (approximately) to this many events: months of jobs at the
# rates measured here, and a bound on memory if nobody ever reads it.
LEDGER_MAXLEN = 10_000_000


@dataclass
class StoreContext:
    """A Redis client and key layout, with the job scripts registered on that client.

    The layout is read from the store (store.layout) at the first key asked for, not when
    the context is made: opening a store does no I/O."""

    # Any, not redis.Redis: redis-py types every reply as a sync/async union.
    client: Any
    prefix: str
    clock: Callable[[], float]
    shards: int | None = None  # wanted for a new store; None: flat
    ledger_maxlen: int = LEDGER_MAXLEN
    _keys: Keys | None = field(default=None, init=False)
    create: Script = field(init=False)
    start: Script = field(init=False)
    begin: Script = field(init=False)
    reopen: Script = field(init=False)
    complete: Script = field(init=False)
    fail: Script = field(init=False)
    requeue: Script = field(init=False)
    deliver: Script = field(init=False)
    violation: Script = field(init=False)
    put: Script = field(init=False)
    claim: Script = field(init=False)
    settle: Script = field(init=False)
    release: Script = field(init=False)

    def __post_init__(self) -> None:
        # register_script does no I/O: EVALSHA is tried first and EVAL on NOSCRIPT.
        self.create = self.client.register_script(scripts.CREATE)
        self.start = self.client.register_script(scripts.START)
        self.begin = self.client.register_script(scripts.BEGIN)
        self.reopen = self.client.register_script(scripts.REOPEN)
        self.complete = self.client.register_script(scripts.COMPLETE)
        self.fail = self.client.register_script(scripts.FAIL)
        self.requeue = self.client.register_script(scripts.REQUEUE)
        self.deliver = self.client.register_script(scripts.DELIVER)
        self.violation = self.client.register_script(scripts.VIOLATION)
        self.put = self.client.register_script(scripts.PUT)
        self.name = self.client.register_script(scripts.NAME)
        self.claim = self.client.register_script(scripts.CLAIM)
        self.settle = self.client.register_script(scripts.SETTLE)
        self.release = self.client.register_script(scripts.RELEASE)

    @property
    def keys(self) -> Keys:
        """The store's key layout (read, or recorded, on first use)."""
        if self._keys is None:
            with translated(self.client, "reading the store's layout"):
                self._keys = layout.resolve(self.client, self.prefix, self.shards)
        return self._keys

    def require_jobs(self) -> None:
        """ConfigError unless the store's job records are of the form this release reads."""
        if self.keys.jobs_form < layout.CURRENT:
            raise ConfigError(
                f"the store under prefix {self.prefix!r} keeps its job records in an earlier "
                "Rookhaven's form: stop its workers and MCP servers, then run `rookhaven store "
                "migrate` once (ops/runbook.md, Upgrading)")

    def forget_layout(self) -> None:
        """Read the layout again at the next key (it was just changed: a migration)."""
        self._keys = None

    def get_many(self, names: list[str]) -> list[Any]:
        """GET of each key in one round trip: MGET, or on a cluster one MGET per slot."""
        if is_cluster(self.client):
            return list(self.client.mget_nonatomic(names))
        return list(self.client.mget(names))

    def now(self) -> str:
        """The clock as the fixed-point text every stored time uses (milliseconds).

        Truncated, not rounded: a rounded-up stamp would lie up to 0.5 ms in the future, and
        a sweep in that same millisecond would not see the job as old enough.
        """
        return f"{math.floor(self.clock() * 1000) / 1000:.3f}"

    def job_keys(self, shard: ShardKeys) -> list[str]:
        """The leading KEYS of every job script (see store.scripts), in ``shard``. A job
        is in the shard of its id, its result key."""
        self.require_jobs()
        return [shard.job_specs, shard.job_states, shard.job_errors, shard.jobs_queued,
                shard.jobs_running, shard.jobs_delivered, shard.ledger, shard.counters,
                shard.log_index]

    def shard(self, key: str) -> ShardKeys:
        """The keys of the shard holding result (and job) ``key``."""
        return self.keys.shard(key)

    def job_args(self, now: str) -> list[Any]:
        """The leading ARGV of every job script (see store.scripts)."""
        return [now, self.ledger_maxlen]


def text(value: Any) -> str:
    """A Redis reply (bytes, since responses are not decoded) as text."""
    return value.decode() if isinstance(value, bytes) else str(value)
