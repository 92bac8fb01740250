"""How long a Redis command waits out a lost connection: up to ROOKHAVEN_REDIS_TIMEOUT.

A Sentinel failover leaves no primary for a few seconds (the Sentinels agree the old one is
down, then promote a replica); a standalone Redis restarting refuses connections, then
answers LOADING. redis-py retries a failed command a fixed number of times, which on a fast
refusal is over in milliseconds and on a black-holed host takes a socket timeout each.
``Patience`` retries connection errors (MasterNotFoundError and LOADING among them) with a
growing pause until the deadline the setting gives, so a CLI command, the MCP server and a
worker ride through a failover instead of failing at its first moment.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

T = TypeVar("T")

# Pauses between attempts: 50 ms doubling to 1 s, so a promotion is noticed within ~1 s.
FIRST_PAUSE, LONGEST_PAUSE = 0.05, 1.0


class Patience(Retry):
    """A redis-py Retry of connection errors (and the ``more`` a caller names, such as a
    cluster's CLUSTERDOWN) until ``seconds`` after the first attempt."""

    def __init__(self, seconds: float, *more: type[Exception]) -> None:
        super().__init__(ExponentialBackoff(cap=LONGEST_PAUSE, base=FIRST_PAUSE), retries=-1,
                         supported_errors=(RedisConnectionError, RedisTimeoutError,
                                           ConnectionError, TimeoutError, *more))
        self.seconds = seconds

    def call_with_retry(self, do: Callable[[], T], fail: Callable[..., Any],
                        *args: Any, **kwargs: Any) -> T:
        deadline = time.monotonic() + self.seconds

        def failed(error: Exception, *more: Any) -> None:
            fail(error, *more)
            if time.monotonic() >= deadline:
                raise error

        return super().call_with_retry(do, failed, *args, **kwargs)
