"""A small MCP server for the tests, over stdio: its tool list is TOOL_SERVER_VARIANT's.

    python tests/tool_server.py        # variant 1: two tools; TOOL_SERVER_VARIANT=2: three
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("rookhaven-test-tools")


@server.tool()
def send_push_notification(device_id: str, message: str) -> str:
    """Send a push notification to a mobile device."""
    return f"sent to {device_id}"


@server.tool()
def send_email(to: str, subject: str) -> str:
    """Send an email message to an address."""
    return f"mailed {to}"


if os.environ.get("TOOL_SERVER_VARIANT") == "2":
    @server.tool()
    def schedule_crane(berth: int) -> str:
        """Book a gantry crane for a berth window."""
        return f"crane at berth {berth}"


if __name__ == "__main__":
    server.run("stdio")
