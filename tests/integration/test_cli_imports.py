"""Commands that never rank load no kernels: numba is imported at a kernel's first call."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("command", [["log", "checkpoint", "--help"], ["store", "info", "--help"],
                                     ["engines"]])
def test_a_command_that_never_ranks_does_not_import_numba(command: list[str]) -> None:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "rookhaven.cli.main",
                           *command], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")]
    assert "rookhaven.core.compiled" in imported  # the walk saw the core
    assert not [m for m in imported if m == "numba" or m.startswith("numba.")]
