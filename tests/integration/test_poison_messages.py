"""Malformed broker messages against a real worker: each is dropped and recorded in the
rejected-messages stream, the worker keeps running, and the jobs queued behind it are done.

The messages are raw ``LPUSH``es onto the Celery queue, as anything with write access to the
broker could send: envelopes kombu cannot decode, Celery messages with impossible headers,
bodies no task can take, and well-formed messages that name no job.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import orjson
from celery import Celery

from rookhaven.config import Settings
from rookhaven.pipeline import TASK_JOB, Pipeline, celery_config
from tests.conftest import wait_until
from tests.integration.workerfarm import WorkerFarm, all_done, documents, pipeline, requests

UNKNOWN_JOB = "sha256:" + "0" * 64


def envelope(settings: Settings, client: Any, queue: str, args: list[Any]) -> dict[str, Any]:
    """The raw envelope Celery's own client would push for ``rookhaven.job(*args)``."""
    rogue = Celery("rogue", set_as_current=False)
    rogue.conf.update(celery_config(settings))
    rogue.send_task(TASK_JOB, args=args)
    return dict(orjson.loads(client.lpop(queue)))


def _body(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _edit(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], bytes]:
    def make(good: dict[str, Any]) -> bytes:
        copy = orjson.loads(orjson.dumps(good))
        change(copy)
        return orjson.dumps(copy)
    return make


def _header(name: str, value: Any) -> Callable[[dict[str, Any]], bytes]:
    return _edit(lambda m: m["headers"].__setitem__(name, value))


def _without_header(name: str) -> Callable[[dict[str, Any]], bytes]:
    return _edit(lambda m: m["headers"].pop(name))


def _property(name: str, value: Any) -> Callable[[dict[str, Any]], bytes]:
    return _edit(lambda m: m["properties"].__setitem__(name, value))


def _field(name: str, value: Any) -> Callable[[dict[str, Any]], bytes]:
    return _edit(lambda m: m.__setitem__(name, value))


def _without_field(name: str) -> Callable[[dict[str, Any]], bytes]:
    return _edit(lambda m: m.pop(name))


def _raw(data: bytes) -> Callable[[dict[str, Any]], bytes]:
    return lambda _good: data


# name -> the bytes pushed, made from a well-formed envelope for a job that exists.
POISONS: dict[str, Callable[[dict[str, Any]], bytes]] = {
    "not json": _raw(b"not json"),
    "empty": _raw(b""),
    "a json list": _raw(b"[1,2,3]"),
    "a json string": _raw(b'"rookhaven"'),
    "json null": _raw(b"null"),
    "an empty object": _raw(b"{}"),
    "not utf-8": _raw(b"\xff\xfe{\x00"),
    "nested 50,000 deep": _raw(b"[" * 50_000 + b"]" * 50_000),
    "body not base64": _field("body", "%%% not base64 %%%"),
    "body a number": _field("body", 42),
    "no body": _without_field("body"),
    "properties a list": _field("properties", [1, 2]),
    "headers a list": _field("headers", ["task"]),
    "no delivery tag": _edit(lambda m: m["properties"].pop("delivery_tag")),
    "body not json": _field("body", _body(b"not json")),
    "body a json object": _field("body", _body(b'{"job": 1}')),
    "args empty": _field("body", _body(b"[[], {}, {}]")),
    "args not strings": _field("body", _body(b"[[1, 2], {}, {}]")),
    "kwargs unknown": _field("body", _body(b'[[], {"nope": 1}, {}]')),
    "pickle": _field("content-type", "application/x-python-serialize"),
    "yaml": _field("content-type", "application/x-yaml"),
    "no content type": _without_field("content-type"),
    "unknown content encoding": _field("content-encoding", "rot13"),
    "timelimit of strings": _header("timelimit", ["a", "b"]),
    "timelimit a string": _header("timelimit", "soon"),
    "timelimit negative": _header("timelimit", [-1, -5]),
    "eta not a date": _header("eta", "tomorrow-ish"),
    "expires not a date": _header("expires", "never"),
    "retries a string": _header("retries", "many"),
    "no task header": _without_header("task"),
    "unknown task": _header("task", "rookhaven.nope"),
    "no id header": _without_header("id"),
    "body encoding unknown": _property("body_encoding", "rot13"),
    "unknown job": _edit(lambda m: None),
    "20 MB body": _field("body", _body(b"[" + b'"x",' * 5_000_000 + b'"x"], {}, {}]')),
}


def test_every_poison_kind_is_dropped_and_recorded_and_the_jobs_behind_it_are_done(
        env: dict[str, str], workers: WorkerFarm) -> None:
    pipe = pipeline(env)
    pipe.add_corpus(documents(50), "port")
    queue = f"{env['ROOKHAVEN_KEY_PREFIX']}:celery:rookhaven"
    client = pipe.store.client
    good = envelope(pipe.settings, client, queue, [UNKNOWN_JOB])
    worker = workers.start("w1", 2)
    behind: list[str] = []
    # Each kind alone, then real jobs: a dead worker or a stuck queue shows at the first.
    for n, (kind, make) in enumerate(POISONS.items()):
        client.lpush(queue, make(good))
        refs = pipe.submit_many(requests(2, tag=f"behind-{n}-"), "port")
        behind += [r.job_id for r in refs]
        wait_until(lambda ids=list(behind): worker.poll() is not None or all_done(pipe, ids), 60,
                   what=f"the jobs behind {kind!r}")
        assert worker.poll() is None, f"{kind!r} stopped the worker"
        wait_until(lambda n=n: _rejected(pipe) > n, 10, what=f"{kind!r} to be recorded")
    # A mixed run: every kind at once among real jobs.
    mixed = _mixed(pipe, client, queue, good)
    wait_until(lambda: worker.poll() is not None or all_done(pipe, mixed), 120,
               what="the jobs of the mixed run")
    assert worker.poll() is None
    wait_until(lambda: client.llen(queue) == 0, 30, what="the queue to drain")
    wait_until(lambda: _rejected(pipe) == 2 * len(POISONS), 30,
               what="every poison of the mixed run to be recorded")
    assert all(r["reason"] for r in pipe.store.ledger.rejected())
    unacked = f"{env['ROOKHAVEN_KEY_PREFIX']}:celery:unacked"
    # Nothing left for a restore to hand out again. A job is done before its message is
    # acknowledged (the task returns after storing), so the last ack may trail the records.
    wait_until(lambda: client.hlen(unacked) == 0, 10, what="every message to be acknowledged")


def _rejected(pipe: Pipeline) -> int:
    return sum(1 for _ in pipe.store.ledger.rejected())


def _mixed(pipe: Pipeline, client: Any, queue: str, good: dict[str, Any]) -> list[str]:
    ids: list[str] = []
    for n, make in enumerate(POISONS.values()):
        ids += [r.job_id for r in pipe.submit_many(requests(3, tag=f"mixed-{n}-"), "port")]
        client.lpush(queue, make(good))
    return ids
