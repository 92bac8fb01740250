"""One round trip to Redis for several job scripts: queued calls, answered together.

redis-py sends ``SCRIPT EXISTS`` before every pipeline that holds a ``Script``, so a
pipeline of two scripts costs two round trips, the price of calling them one by one. A
``Round`` sends ``EVALSHA`` itself and loads a script only when Redis answers NOSCRIPT
(after a restart, a ``SCRIPT FLUSH`` or a failover to a node that never ran it), re-sending
just the calls that were refused: a script that ran is never run twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from redis.commands.core import Script
from redis.exceptions import (
    AskError,
    ClusterDownError,
    MovedError,
    NoScriptError,
    ResponseError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from . import cluster
from .connection import translated
from .context import StoreContext

T = TypeVar("T")
_UNSET: Any = object()


class Reply(Generic[T]):
    """The answer to one queued call, parsed; available once its round was sent."""

    def __init__(self, parse: Callable[[Any], T]) -> None:
        self._parse = parse
        self._value: Any = _UNSET
        # The parsed answer, once parsed: a many-job call's answer is read once per job.
        self._parsed: Any = _UNSET

    @classmethod
    def known(cls, value: T) -> Reply[T]:
        """A reply whose answer is already known (no call to make): ``get`` gives ``value``."""
        reply: Reply[T] = cls(_same)
        reply._value = reply._parsed = value
        return reply

    def _resolve(self, raw: Any) -> None:
        self._value, self._parsed = raw, _UNSET

    def get(self) -> T:
        """The parsed answer (a parser's error, such as IntegrityError, is raised here, and
        again at every call)."""
        if self._value is _UNSET:
            raise RuntimeError("Reply.get() before its Round was sent")  # a bug, not input
        if self._parsed is _UNSET:
            self._parsed = self._parse(self._value)
        parsed: T = self._parsed
        return parsed


class Item(Reply[T]):
    """One element of a queued call's list answer (a job of a many-job script), parsed."""

    def __init__(self, whole: Reply[Any], index: int, parse: Callable[[Any], T]) -> None:
        super().__init__(parse)
        self._whole, self._index = whole, index

    def get(self) -> T:
        return self._parse(self._whole.get()[self._index])


@dataclass(frozen=True)
class _Call:
    script: Script | None  # None: a plain command, named by ``command``
    keys: Sequence[Any]
    args: Sequence[Any]
    command: str = ""


class Round:
    """Script calls queued on one pipeline and sent in one round trip."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx
        self._calls: list[_Call] = []
        self._replies: list[Reply[Any]] = []

    def call(self, script: Script, keys: Sequence[Any], args: Sequence[Any],
             parse: Callable[[Any], T]) -> Reply[T]:
        """Queue ``script`` with ``keys`` and ``args``; its answer goes through ``parse``."""
        return self._queue(_Call(script, keys, args), parse)

    def command(self, name: str, keys: Sequence[Any], args: Sequence[Any],
                parse: Callable[[Any], T]) -> Reply[T]:
        """Queue the plain command ``name`` (its arguments are ``args``; ``keys`` are the
        keys among them, the first deciding a cluster's node)."""
        return self._queue(_Call(None, keys, args, name), parse)

    def _queue(self, call: _Call, parse: Callable[[Any], T]) -> Reply[T]:
        reply: Reply[T] = Reply(parse)
        self._calls.append(call)
        self._replies.append(reply)
        return reply

    def __len__(self) -> int:
        return len(self._calls)

    def send(self, doing: str) -> None:
        """Send every queued call; a Redis failure is a StoreUnavailableError naming
        ``doing``."""
        if not self._calls:
            return
        client = self._ctx.client
        with translated(client, doing):
            answers = self._execute(range(len(self._calls)))
            refused = [i for i, a in enumerate(answers) if isinstance(a, NoScriptError)]
            if refused:
                for script in {id(self._calls[i].script): self._calls[i].script
                               for i in refused}.values():
                    if script is not None:
                        client.script_load(script.script)
                for i, answer in zip(refused, self._execute(refused), strict=True):
                    answers[i] = answer
            for answer in answers:
                if isinstance(answer, Exception):
                    raise answer
        for reply, answer in zip(self._replies, answers, strict=True):
            reply._resolve(answer)

    def _execute(self, which: Sequence[int] | range) -> list[Any]:
        client = self._ctx.client
        if cluster.is_cluster(client):
            return self._execute_on_cluster(client, which)
        pipe = client.pipeline(transaction=False)
        for i in which:
            _queue(pipe, self._calls[i])
        return list(pipe.execute(raise_on_error=False))

    def _execute_on_cluster(self, client: Any, which: Sequence[int] | range) -> list[Any]:
        """One pipeline per primary, each call to the node its slot is on (redis-py's
        cluster pipeline refuses EVALSHA). A call the node refused unrun because its slot
        moved or is moving (MOVED, ASK, TRYAGAIN, CLUSTERDOWN), or sent to a node that is
        gone, is sent again alone through the cluster client, which follows the
        redirection."""
        by_node: dict[str, tuple[Any, list[int]]] = {}
        for i in which:
            node = client.get_node_from_key(self._calls[i].keys[0])
            by_node.setdefault(node.name, (node, []))[1].append(i)
        answers: dict[int, Any] = {}
        for node, calls in by_node.values():
            pipe = client.get_redis_connection(node).pipeline(transaction=False)
            for i in calls:
                _queue(pipe, self._calls[i])
            try:
                answers.update(zip(calls, pipe.execute(raise_on_error=False), strict=True))
            except (RedisConnectionError, RedisTimeoutError) as exc:
                # The node is gone (a failover under way): each call goes again alone,
                # through the client that relearns the slots and waits for the new primary.
                # A job script that had already run there does no harm run twice.
                answers.update(dict.fromkeys(calls, ClusterDownError(str(exc))))
        for i, answer in answers.items():
            if isinstance(answer, MovedError | AskError | TryAgainError | ClusterDownError):
                try:
                    answers[i] = _queue(client, self._calls[i])
                except ResponseError as exc:  # NOSCRIPT on the slot's new node, a refusal
                    answers[i] = exc
        return [answers[i] for i in which]


def _same(value: Any) -> Any:
    return value


def _queue(target: Any, call: _Call) -> Any:
    """Send ``call`` on ``target`` (a pipeline: queued; a client: answered)."""
    if call.script is None:
        return target.execute_command(call.command, *call.args)
    return target.evalsha(call.script.sha, len(call.keys), *call.keys, *call.args)
