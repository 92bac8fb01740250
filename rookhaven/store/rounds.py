"""One round trip to Redis for several job scripts: queued calls, answered together.

redis-py sends ``SCRIPT EXISTS`` before every pipeline that holds a ``Script``, so a
pipeline of two scripts costs two round trips, the price of calling them one by one. A
``Round`` sends ``EVALSHA`` itself and loads a script only when Redis answers NOSCRIPT
(after a restart, a ``SCRIPT FLUSH`` or a failover to a node that never ran it), re-sending
just the calls that were refused: a script that ran is never run twice.

Calls queued inside ``Round.together()`` go as one MULTI/EXEC (they share a slot): a reader,
a replica or an AOF sees all of their writes or none, so a failover that loses the primary's
last writes cannot keep a result and lose its log leaf
(docs/adr/0055-a-result-and-its-leaf-in-one-transaction.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from redis.commands.core import Script
from redis.exceptions import (
    AskError,
    ClusterDownError,
    ExecAbortError,
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
    together: int | None = None  # calls with the same number go in one MULTI/EXEC


class Round:
    """Script calls queued on one pipeline and sent in one round trip."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx
        self._calls: list[_Call] = []
        self._replies: list[Reply[Any]] = []
        self._together: int | None = None

    def call(self, script: Script, keys: Sequence[Any], args: Sequence[Any],
             parse: Callable[[Any], T]) -> Reply[T]:
        """Queue ``script`` with ``keys`` and ``args``; its answer goes through ``parse``."""
        return self._queue(_Call(script, keys, args, together=self._together), parse)

    def command(self, name: str, keys: Sequence[Any], args: Sequence[Any],
                parse: Callable[[Any], T]) -> Reply[T]:
        """Queue the plain command ``name`` (its arguments are ``args``; ``keys`` are the
        keys among them, the first deciding a cluster's node)."""
        return self._queue(_Call(None, keys, args, name, self._together), parse)

    @contextmanager
    def together(self) -> Iterator[None]:
        """The calls queued inside run as one transaction: their keys must share a slot.
        A script refused NOSCRIPT inside it is loaded and its call sent again alone (the
        calls before it in the transaction ran)."""
        if self._together is not None:
            raise RuntimeError("Round.together() inside another")  # a bug, not input
        self._together = len(self._calls)
        try:
            yield
        finally:
            self._together = None

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
        return _pipelined(client.pipeline(transaction=False), [self._calls[i] for i in which])

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
            try:
                answers.update(zip(calls, _pipelined(pipe, [self._calls[i] for i in calls]),
                                   strict=True))
            except (RedisConnectionError, RedisTimeoutError) as exc:
                # The node is gone (a failover under way): each call (each transaction)
                # goes again through the client that relearns the slots and waits for the
                # new primary. A job script that had already run there does no harm run
                # twice.
                answers.update(dict.fromkeys(calls, ClusterDownError(str(exc))))
        moved = {i for i, answer in answers.items()
                 if isinstance(answer, MovedError | AskError | TryAgainError | ClusterDownError)}
        # A transaction with a call refused at queueing ran none of its calls (the others
        # answer EXECABORT): it goes again whole.
        aborted = {self._calls[i].together for i in moved} - {None}
        again = [i for i, answer in answers.items() if i in moved or (
            self._calls[i].together in aborted and isinstance(answer, ExecAbortError))]
        for run in _runs([self._calls[i] for i in again], again):
            if len(run) == 1:
                try:
                    answers[run[0]] = _queue(client, self._calls[run[0]])
                except ResponseError as exc:  # NOSCRIPT on the slot's new node, a refusal
                    answers[run[0]] = exc
                continue
            # A transaction refused unrun (MOVED at queueing aborts it) goes again whole,
            # through redis-py's cluster transaction, which follows the slot.
            pipe = client.pipeline(transaction=True)
            for i in run:
                _queue(pipe, self._calls[i])
            answers.update(zip(run, pipe.execute(raise_on_error=False), strict=True))
        return [answers[i] for i in which]


def _same(value: Any) -> Any:
    return value


def _runs(calls: Sequence[_Call], labels: Sequence[int]) -> Iterator[list[int]]:
    """``labels`` cut into runs: a call alone, or consecutive calls of one transaction."""
    run: list[int] = []
    for at, call in enumerate(calls):
        if run and (call.together is None or calls[at - 1].together != call.together):
            yield run
            run = []
        run.append(labels[at])
    if run:
        yield run


def _pipelined(pipe: Any, calls: list[_Call]) -> list[Any]:
    """Send ``calls`` on the non-transactional ``pipe``, each transaction's between MULTI and
    EXEC: one answer per call (a call refused at queueing keeps its own error; the others of
    its transaction get EXEC's)."""
    runs = list(_runs(calls, range(len(calls))))
    for run in runs:
        if len(run) > 1:
            pipe.execute_command("MULTI")
        for at in run:
            _queue(pipe, calls[at])
        if len(run) > 1:
            pipe.execute_command("EXEC")
    raw = iter(pipe.execute(raise_on_error=False))
    answers: list[Any] = []
    for run in runs:
        if len(run) == 1:
            answers.append(next(raw))
            continue
        opened = next(raw)
        queued = [next(raw) for _ in run]
        done = next(raw)
        if isinstance(opened, Exception):
            done = opened
        for at, answer in enumerate(queued):
            if isinstance(answer, Exception):
                answers.append(answer)
            else:
                answers.append(done[at] if isinstance(done, list) else done)
    return answers


def _queue(target: Any, call: _Call) -> Any:
    """Send ``call`` on ``target`` (a pipeline: queued; a client: answered)."""
    if call.script is None:
        return target.execute_command(call.command, *call.args)
    return target.evalsha(call.script.sha, len(call.keys), *call.keys, *call.args)
