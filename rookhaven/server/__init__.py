"""The MCP front end: tools over a backend, served on stdio or streamable HTTP.

Named ``server`` rather than ``mcp`` so it never shadows the SDK package.
"""

from .app import build_server
from .backend import open_backend
from .inline import InlineBackend
from .ports import Backend

__all__ = ["Backend", "InlineBackend", "build_server", "open_backend"]
