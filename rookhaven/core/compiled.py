"""Optional numba compilation for the core's hot loops: ``njit`` if numba is installed.

Speed only: every compiled function computes the same integers as its pure-Python
reference (integer arithmetic has no rounding), and tests compare the two paths, so no
output byte depends on whether numba is present.
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
