"""Messages to the client: the level a connection set with ``logging/setLevel``, log
notifications that honour it, and progress for calls that carry a progress token.

On 2025-era connections the SDK sends every log message it is given and leaves filtering to
the server's setLevel handler, so the level is kept per connection (in the SDK's
per-connection state) and checked here. On 2026-era connections the SDK filters by the
request's own opt-in, and messages pass through it unchanged.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any, Final, get_args

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import EmptyResult, LoggingLevel, SetLevelRequestParams

log = logging.getLogger(__name__)

LEVELS: Final[tuple[LoggingLevel, ...]] = get_args(LoggingLevel)  # least severe first
DEFAULT_LEVEL: LoggingLevel = "info"
STATE_KEY = "rookhaven.log_level"
LOGGER = "rookhaven"


def _state(session: ServerSession) -> dict[str, Any]:
    # The connection's scratch state is public on Connection; the session reaches it only
    # through its private attribute (the mcp<3 pin guards the name).
    connection = getattr(session, "_connection", None)
    return getattr(connection, "state", {})


async def set_level(ctx: ServerRequestContext[Any], params: SetLevelRequestParams) -> EmptyResult:
    """``logging/setLevel``: messages below ``params.level`` are no longer sent on this
    connection."""
    _state(ctx.session)[STATE_KEY] = params.level
    return EmptyResult()


def wanted(session: ServerSession, level: LoggingLevel) -> bool:
    """Whether this connection asked for messages at ``level``."""
    threshold = _state(session).get(STATE_KEY, DEFAULT_LEVEL)
    return LEVELS.index(level) >= LEVELS.index(threshold)


async def tell(session: ServerSession, level: LoggingLevel, data: dict[str, Any]) -> None:
    """Send ``data`` as a log message when the connection wants that level; a connection
    that has gone away is not an error."""
    if not wanted(session, level):
        return
    # Logging is deprecated only from protocol 2026-07-28 on; 2025-11-25 clients rely on
    # it, and on the newer protocol the SDK applies the request's own opt-in. The warning
    # comes when the coroutine is made, so nothing else runs while it is silenced.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        sending = session.send_log_message(level=level, data=data, logger=LOGGER)
    try:
        await sending
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, RuntimeError) as exc:
        log.debug("could not send a log message to a client", extra={"error": str(exc)})
