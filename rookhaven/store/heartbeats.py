"""Worker liveness, and what each live worker holds: a key with a time-to-live that a live
worker keeps refreshing with the messages it holds.

The sweeper re-enqueues a running job at once when its worker's key has expired, instead
of waiting for the broker's visibility timeout (long, because it must outlast any task).
A worker that lives on but dropped a message (Celery terminates the tasks it can no longer
acknowledge after a connection loss and forgets the ones it had reserved; a pool child
killed; a revoke) stops naming it at its next heartbeat, and the sweeper hands that
message's jobs back then (docs/adr/0052-a-heartbeat-names-what-its-worker-holds.md).

A message is named by a token of its task id (``delivery``): a job delivered or claimed
under it carries the token in its claim, ``<worker>/<token>...``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import orjson

from .connection import translated
from .context import StoreContext

# Hex digits of a delivery's token: 48 bits, so two messages one worker holds at once
# share a token with odds of about 1 in 10^14.
TOKEN = 12


def delivery(task_id: str) -> str:
    """The token naming the message whose task id is ``task_id`` in claims and heartbeats."""
    return hashlib.blake2b(task_id.encode(), digest_size=TOKEN // 2).hexdigest()


def claim_delivery(claim: str) -> str:
    """The delivery token a job's claim carries ('' for a claim made outside a worker's
    message, as by an inline run, or by a Rookhaven before tokens)."""
    _, _, tail = claim.rpartition("/")
    return tail[:TOKEN]


@dataclass(frozen=True)
class Holding:
    """What a live worker said it holds at its last heartbeat: when (its own clock, the one
    its jobs' times come from) and the tokens of its messages, or None where it does not
    say (a worker of a Rookhaven before this)."""

    at: float
    deliveries: frozenset[str] | None

    def dropped(self, claim: str, since: str) -> bool:
        """Whether a job delivered or claimed under ``claim`` at ``since`` was dropped: the
        worker said what it holds after ``since`` and did not name the job's message."""
        return (self.deliveries is not None and float(since) < self.at
                and claim_delivery(claim) not in self.deliveries)


class Heartbeats:
    """Which worker instances are alive, and what each holds."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def beat(self, instance: str, ttl: float,
             holds: Callable[[], Iterable[str]] | None = None) -> None:
        """Say ``instance`` is alive for the next ``ttl`` seconds, holding the messages whose
        tokens ``holds()`` gives. The time is taken before ``holds()`` is asked: a job
        stamped before it whose message is not named was dropped, never one whose message
        arrived meanwhile."""
        at = self._ctx.now()
        value: bytes | str = at
        if holds is not None:
            value = orjson.dumps({"at": at, "holds": sorted(holds())})
        with translated(self._ctx.client, "refreshing a worker heartbeat"):
            self._ctx.client.set(self._ctx.keys.worker(instance), value,
                                 px=max(1, int(ttl * 1000)))

    def stop(self, instance: str) -> None:
        """Say ``instance`` has stopped (a clean shutdown)."""
        with translated(self._ctx.client, "clearing a worker heartbeat"):
            self._ctx.client.delete(self._ctx.keys.worker(instance))

    def any_alive(self) -> bool:
        """Whether any worker's heartbeat has not expired."""
        with translated(self._ctx.client, "looking for live workers"):
            found = self._ctx.client.scan_iter(match=self._ctx.keys.worker("*"), count=100)
            return next(iter(found), None) is not None

    def alive(self, instances: set[str]) -> set[str]:
        """The members of ``instances`` whose heartbeat has not expired."""
        return set(self.holding(instances))

    def holding(self, instances: set[str]) -> dict[str, Holding]:
        """What each member of ``instances`` whose heartbeat has not expired holds."""
        names = sorted(instances)
        if not names:
            return {}
        with translated(self._ctx.client, "reading worker heartbeats"):
            pipe = self._ctx.client.pipeline(transaction=False)
            for name in names:
                pipe.get(self._ctx.keys.worker(name))
            values = pipe.execute()
        return {name: _holding(value)
                for name, value in zip(names, values, strict=True) if value is not None}


def _holding(value: bytes) -> Holding:
    """A heartbeat's value read: the time alone (an earlier Rookhaven's) or what it holds."""
    try:
        said = orjson.loads(value)
    except orjson.JSONDecodeError:
        said = None
    if isinstance(said, dict) and isinstance(said.get("holds"), list):
        return Holding(float(said.get("at", 0)), frozenset(map(str, said["holds"])))
    return Holding(float(said) if isinstance(said, (int, float)) else 0.0, None)
