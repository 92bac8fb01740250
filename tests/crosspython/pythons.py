"""Finding another CPython on this machine, and a cached venv for it holding the core's
runtime dependencies (built with pip on first use, under .cache/pyvenvs)."""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

# No stemmer library: the engines carry their own (ADR 0011), so none may be needed here.
RUNTIME_DEPS = ("pydantic>=2.6", "orjson>=3.9", "numpy>=1.26")
VENV_CACHE = ROOT / ".cache" / "pyvenvs"


def _version(python: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    major, minor = out.split()
    return int(major), int(minor)


def newest_other_cpython() -> str | None:
    """The newest CPython >= 3.11 on this machine whose minor version differs from ours."""
    ours = sys.version_info[:2]
    candidates = {p for p in glob.glob(os.path.expanduser("~/.pyenv/versions/*/bin/python3.*"))
                  if re.search(r"python3\.\d+$", p)}
    candidates |= {f"/usr/bin/python3.{m}" for m in range(11, 20)}
    found = [(v, p) for p in sorted(candidates) if Path(p).exists()
             and (v := _version(p)) and v >= (3, 11) and v != ours]
    return max(found)[1] if found else None


def venv_python(python: str) -> str:
    """A cached venv for ``python`` holding only the runtime dependencies of the core."""
    version = "{}.{}".format(*(_version(python) or (0, 0)))
    venv = VENV_CACHE / version
    bin_python = venv / "bin" / "python"
    if not bin_python.exists():
        subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=300)
        subprocess.run([str(bin_python), "-m", "pip", "install", "--quiet", *RUNTIME_DEPS],
                       check=True, timeout=900)
    return str(bin_python)
