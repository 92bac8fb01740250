"""Commands load what they use: numba only at a kernel's first call, the MCP SDK only for
``rookhaven mcp`` (every command's parser registers them all, so an eager import in one
subcommand's module slows every command)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _imported(command: list[str]) -> list[str]:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "rookhaven.cli.main",
                           *command], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
            if line.startswith("import time:")]


@pytest.mark.parametrize("command", [["log", "checkpoint", "--help"], ["store", "info", "--help"],
                                     ["engines"]])
def test_a_command_that_never_ranks_does_not_import_numba(command: list[str]) -> None:
    imported = _imported(command)
    assert "rookhaven.core.compiled" in imported  # the walk saw the core
    assert not [m for m in imported if m == "numba" or m.startswith("numba.")]


@pytest.mark.parametrize("command", [["engines"], ["token", "--help"], ["rerank", "--help"],
                                     ["submit", "--help"]])
def test_a_command_that_serves_no_mcp_does_not_import_the_sdk(command: list[str]) -> None:
    imported = _imported(command)
    assert "rookhaven.server.tokens" in imported  # the token command was registered
    assert not [m for m in imported if m == "mcp" or m.startswith(("mcp.", "mcp_types"))]
