"""Per-process state of a worker: its instance name, store, executor and pipeline.

Built lazily in the process that uses them, so a forked pool child never shares the
parent's Redis sockets. ``INSTANCE`` is fixed at import in the worker's main process and
inherited by its pool children, so the jobs a child runs carry the name the main
process's heartbeat keeps alive.
"""

from __future__ import annotations

import os
import socket
import uuid
from typing import Any

from rookhaven.config import Settings
from rookhaven.pipeline import Executor, Pipeline, open_pipeline
from rookhaven.store import Store

INSTANCE = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

_state: dict[str, Any] = {}


def reset() -> None:
    """Forget every connection (called in each new pool child)."""
    _state.clear()


def store(settings: Settings) -> Store:
    if "store" not in _state:
        _state["store"] = Store.from_settings(settings)
    found: Store = _state["store"]
    return found


def executor(settings: Settings, fatal: tuple[type[BaseException], ...]) -> Executor:
    if "executor" not in _state:
        _state["executor"] = Executor(store(settings), settings, fatal)
    found: Executor = _state["executor"]
    return found


def pipeline(settings: Settings) -> Pipeline:
    if "pipeline" not in _state:
        _state["pipeline"] = open_pipeline(settings)
    found: Pipeline = _state["pipeline"]
    return found
