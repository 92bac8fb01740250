"""Python's cyclic garbage collector paused over one bounded piece of work."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while a bounded piece of work runs (as ``timeit`` times
    code): a verifier's page of replays, a worker's message of jobs.

    Such work keeps its objects alive past many of the collector's young passes, so they are
    promoted and set off full passes over the whole heap, indexes included: ~9 us a replay
    of ~160 (NPL, bm25@2), ~10% of a worker's CPU a job. Reference counting still frees what
    the work drops; its cycles wait for the next pass after it. A caller's own choice
    (collector off) is left as it was, and so are other threads' (the MCP server verifies
    on a thread of its own: it is paused on the main thread only)."""
    if not gc.isenabled() or threading.current_thread() is not threading.main_thread():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
