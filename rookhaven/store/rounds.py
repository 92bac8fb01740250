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
from redis.exceptions import NoScriptError

from .connection import translated
from .context import StoreContext

T = TypeVar("T")
_UNSET: Any = object()


class Reply(Generic[T]):
    """The answer to one queued call, parsed; available once its round was sent."""

    def __init__(self, parse: Callable[[Any], T]) -> None:
        self._parse = parse
        self._value: Any = _UNSET

    def _resolve(self, raw: Any) -> None:
        self._value = raw

    def get(self) -> T:
        """The parsed answer (a parser's error, such as IntegrityError, is raised here)."""
        if self._value is _UNSET:
            raise RuntimeError("Reply.get() before its Round was sent")  # a bug, not input
        return self._parse(self._value)


@dataclass(frozen=True)
class _Call:
    script: Script
    keys: Sequence[Any]
    args: Sequence[Any]


class Round:
    """Script calls queued on one pipeline and sent in one round trip."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx
        self._calls: list[_Call] = []
        self._replies: list[Reply[Any]] = []

    def call(self, script: Script, keys: Sequence[Any], args: Sequence[Any],
             parse: Callable[[Any], T]) -> Reply[T]:
        """Queue ``script`` with ``keys`` and ``args``; its answer goes through ``parse``."""
        reply: Reply[T] = Reply(parse)
        self._calls.append(_Call(script, keys, args))
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
                    client.script_load(script.script)
                for i, answer in zip(refused, self._execute(refused), strict=True):
                    answers[i] = answer
            for answer in answers:
                if isinstance(answer, Exception):
                    raise answer
        for reply, answer in zip(self._replies, answers, strict=True):
            reply._resolve(answer)

    def _execute(self, which: Sequence[int] | range) -> list[Any]:
        pipe = self._ctx.client.pipeline(transaction=False)
        for i in which:
            call = self._calls[i]
            pipe.evalsha(call.script.sha, len(call.keys), *call.keys, *call.args)
        return list(pipe.execute(raise_on_error=False))
