"""The broker's edge: the one module that touches kombu's Redis transport.

Everything Rookhaven changes in it lives here, so a kombu upgrade is reviewed in one room
(tests/unit/test_inbound.py pins the kombu read this mirrors): ``harden`` installs the
guarded read below, turns off restore-on-close and makes an acknowledgement on a lost
client a connection error.

kombu's Redis read, guarded: a message whose envelope cannot be decoded is dropped and
recorded instead of ending the worker.

kombu pops a message (BRPOP) and decodes its envelope in the worker's event loop; a message
that is not JSON, not an object or lacks its delivery properties raises there, past every
Celery handler, and the worker's main process exits ("Unrecoverable error") with the jobs
queued behind it left waiting. ``read`` is kombu 5.7's ``Channel._brpop_read`` with the
envelope checked first (``inbound.envelope``); a rejected envelope is announced by Celery's
``task_rejected`` signal, sent for the consumer that owns the connection (see
``consumer.GuardedConsumer``), which the lifecycle hooks record in the store. It is already
off the queue and never acknowledged into ``unacked``, so nothing brings it back.
"""

from __future__ import annotations

import logging
from queue import Empty
from typing import Any

from celery.signals import task_rejected
from kombu.transport import redis as kombu_redis

from rookhaven.errors import MessageError

from .inbound import envelope

log = logging.getLogger("rookhaven.workers")

# The attribute of kombu's Connection naming the consumer a rejection is reported for.
OWNER = "rookhaven_consumer"


def read(self: Any, **options: Any) -> bool:
    """``kombu.transport.redis.Channel._brpop_read``, dropping undecodable envelopes."""
    try:
        try:
            popped = self.client.parse_response(self.client.connection, "BRPOP", **options)
        except self.connection_errors:
            self.client.connection.disconnect()  # the next cycle reconnects
            raise
        if not popped:
            raise Empty()  # what kombu's poller expects of a BRPOP that timed out
        dest, item = popped
        queue = (dest.decode() if isinstance(dest, bytes) else dest).rsplit(self.sep, 1)[0]
        self._queue_cycle.rotate(queue)
        try:
            message = envelope(item)
        except MessageError as exc:
            _reject(self, queue, exc)
            return True
        try:
            self.connection._deliver(message, queue)
        except self.connection_errors:
            raise
        except Exception as exc:  # a body kombu cannot decode: before it is acknowledgeable
            _reject(self, queue, MessageError(f"kombu cannot read the message: "
                                              f"{exc.__class__.__name__}: {str(exc)[:80]}"))
            _forget(self, message)
        return True
    finally:
        self._in_poll = None
        flush = getattr(self, "_flush_brpop_reauth", None)
        if flush is not None:
            flush()


def install() -> None:
    """Guard every kombu Redis (and Sentinel) channel made from now on in this process."""
    kombu_redis.Channel._brpop_read = read  # type: ignore[method-assign]


def harden() -> None:
    """Everything a worker changes in kombu's Redis transport, once its app is set up."""
    # Restoring unacked messages on channel close can end a worker whose broker just
    # died (ADR 0005, "restore on close"); they come back by the periodic restore.
    kombu_redis.Channel.do_restore = False
    # So can an ack on a channel whose client went with the broker: as a connection
    # error Celery logs it and reconnects; the message returns after the visibility
    # timeout and its job, already done, is skipped.
    for name in ("ack", "reject"):
        setattr(kombu_redis.QoS, name,
                _lost_client_is_a_connection_error(getattr(kombu_redis.QoS, name)))
    install()  # a message kombu cannot decode must not end the worker either


def _lost_client_is_a_connection_error(method: Any) -> Any:
    """``method`` (kombu's Redis QoS ack or reject) raising a connection error, not an
    AttributeError, when the broker died and took the channel's client with it."""
    if getattr(method, "rookhaven_guarded", False):
        return method

    def guarded(self: Any, delivery_tag: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, delivery_tag, *args, **kwargs)
        except AttributeError as exc:
            # OSError's ConnectionError: among the transport's connection_errors.
            raise ConnectionError(f"broker connection lost while acknowledging: {exc}") from exc

    guarded.rookhaven_guarded = True  # type: ignore[attr-defined]
    return guarded


def _reject(channel: Any, queue: str, exc: MessageError) -> None:
    consumer = getattr(channel.connection.client, OWNER, None)
    if consumer is None:
        log.error("dropped a message from %s that no worker can read: %s", queue, exc)
        return
    task_rejected.send(sender=consumer, message=None, exc=exc)


def _forget(channel: Any, message: dict[str, Any]) -> None:
    """Acknowledge ``message`` if kombu got as far as holding it unacknowledged."""
    tag = message["properties"]["delivery_tag"]
    try:
        channel.qos.get(tag)
    except KeyError:
        return
    channel.qos.ack(tag)
