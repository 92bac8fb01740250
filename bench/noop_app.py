"""The workers' app plus a task that only counts: the queue's own floor for bench/pipeline.py.

It lives here, not in ``workers``, so production workers carry no benchmark task.
"""

from __future__ import annotations

import os

import redis

from workers import app, consumer

TASK_NOOP = "bench.noop"
# The consumer takes only the product's tasks (ADR 0027: anything else is recorded as
# rejected); a worker started on this app takes the floor's task too.
consumer.TASKS = consumer.TASKS | {TASK_NOOP}
_clients: dict[int, redis.Redis] = {}  # one connection per pool process, like the store's


@app.task(name=TASK_NOOP)
def noop(counter: str) -> None:
    """Add one to the Redis key ``counter``."""
    pid = os.getpid()
    if pid not in _clients:
        _clients[pid] = redis.Redis.from_url(app.conf.broker_url)
    _clients[pid].incr(counter)
