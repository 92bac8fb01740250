"""The MCP front end: tools over a backend, served on stdio or streamable HTTP.

Named ``server`` rather than ``mcp`` so it never shadows the SDK package. Its names load on
first use: a command that only reads the token file (``rookhaven token``; every command's
parser registers it) imports ``server.tokens`` without the SDK's third of a second.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import build_server
    from .backend import open_backend
    from .inline import InlineBackend
    from .ports import Backend

__all__ = ["Backend", "InlineBackend", "build_server", "open_backend"]
_MODULE_OF = {"build_server": ".app", "open_backend": ".backend", "InlineBackend": ".inline",
              "Backend": ".ports"}


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_MODULE_OF[name], __name__), name)
