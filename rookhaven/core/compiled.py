"""Optional numba compilation for the core's hot loops: ``njit`` if numba is installed.

Speed only: every compiled function computes the same integers as its pure-Python
reference (integer arithmetic has no rounding), and tests compare the two paths, so no
output byte depends on whether numba is present, or on whether this process uses it yet.

``live()`` is that second question. A process whose kernels are compiled elsewhere first (a
worker's first start on a machine, the demo) calls ``hold()``: until ``release()``, every
call site takes its reference path, so nothing is compiled on the request's time. Like the
compiled code itself, this is state of the process, which is why it lives here and not in
an argument threaded through every index.
"""

from __future__ import annotations

from typing import Any


def _load_njit() -> Any:
    try:
        from numba import njit as compiler
    except ImportError:  # pragma: no cover - exercised where numba is absent
        return None
    return compiler


njit: Any = _load_njit()
AVAILABLE = njit is not None
_held = False


def live() -> bool:
    """Whether the compiled kernels are to be called now (numba present, not held)."""
    return AVAILABLE and not _held


def hold() -> None:
    """Take the reference paths until ``release``: the kernels are being compiled elsewhere."""
    global _held
    _held = True


def release() -> None:
    """Call the compiled kernels again (compiled by now, or loaded from numba's cache)."""
    global _held
    _held = False
