"""The prefork pool's edge through Celery's own code: a result pipe read with a real pipe
and a real process, and the watch on processes' exits with kombu's event loop."""

from __future__ import annotations

import errno
import os
import pickle
import struct
import subprocess
import sys
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from celery.concurrency import asynpool
from kombu.asynchronous import Hub

from workers import pool


@pytest.fixture
def child() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.kill()
    proc.wait(timeout=10)


def framed(body: bytes) -> bytes:
    """One message as a pool process writes it: a 4-byte big-endian length, then the body."""
    return struct.pack(">i", len(body)) + body


def read_one(payload: bytes, proc: subprocess.Popen[bytes]) -> tuple[Any, list[Any]]:
    """Celery's reader (guarded) over a pipe holding ``payload``, ``proc`` its writer."""
    pool.guard()
    read, write = os.pipe()
    try:
        os.write(write, payload)
        handler = SimpleNamespace(fileno_to_outq={read: SimpleNamespace(pid=proc.pid)},
                                  handle_event=None)
        got: list[Any] = []
        reader = asynpool.ResultHandler._recv_message(handler, lambda *_: None, read, got.append)
        return reader, got
    finally:
        os.close(write)


def test_a_message_that_decodes_reaches_celery(child: subprocess.Popen[bytes]) -> None:
    reader, got = read_one(framed(pickle.dumps((2, ("job", 0, (True, {"done": 3}))))), child)
    with pytest.raises(StopIteration):
        next(reader)
    assert got == [(2, ("job", 0, (True, {"done": 3})))]
    assert child.poll() is None


@pytest.mark.parametrize("body", [b"\x01garbled", pickle.dumps({"a": 1})[:-3], b""])
def test_a_garbled_message_ends_its_process_not_the_worker(
        child: subprocess.Popen[bytes], body: bytes) -> None:
    reader, got = read_one(framed(body), child)
    with pytest.raises(OSError) as raised:  # both of Celery's callers drop such a reader
        next(reader)
    assert raised.value.errno == errno.EBADF
    assert got == []
    assert child.wait(timeout=10) == -9  # killed, so the pool replaces it


def test_a_process_that_exited_is_not_watched_again() -> None:
    pool.guard()
    hub = Hub()
    read, write = os.pipe()
    try:
        gone = SimpleNamespace(_sentinel_poll=None)  # as Celery's _untrack_child_process leaves it
        alive = SimpleNamespace(_sentinel_poll=read)
        watcher = SimpleNamespace(_event_process_exit=lambda *_: None)
        for process in (gone, alive):
            # Celery 5.7 handed the gone one's None to the loop: ValueError, the worker's end.
            asynpool.AsynPool._track_child_process(watcher, process, hub)
        assert read in hub.readers and None not in hub.readers
    finally:
        hub.close()
        os.close(read)
        os.close(write)
