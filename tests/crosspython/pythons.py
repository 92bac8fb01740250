"""Finding another CPython on this machine, and a cached venv for it holding the core's
runtime dependencies (built with pip on first use, under .cache/pyvenvs).

A venv counts as built only once pip has installed every dependency into it (a stamp file
names them): one left half-made by an interrupted or failed install is built again, and
concurrent test runs take a lock instead of racing on one directory.
"""

from __future__ import annotations

import fcntl
import glob
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

# No stemmer library: the engines carry their own (ADR 0011), so none may be needed here.
# orjson as pyproject.toml pins it: its encoding is part of the bytes (ADR 0038).
RUNTIME_DEPS = ("pydantic>=2.6", "orjson>=3.11.7", "numpy>=1.26")
# hybrid@1's model files, from the wheel alone: the engine reads its files and never imports
# the package, so none of its dependencies (tokenizers among them) is wanted here.
MODEL_WHEELS = ("wordllama==0.4.0.post1",)
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


def other_cpython_venv() -> str:
    """The python of a cached venv for the newest other CPython; the test is skipped, in
    one line saying so, when this machine has no other CPython."""
    other = newest_other_cpython()
    if other is None:
        pytest.skip(f"no CPython other than {sys.version_info[0]}.{sys.version_info[1]} "
                    "is installed on this machine")
    return venv_python(other)


def venv_python(python: str) -> str:
    """A cached venv for ``python`` holding only the runtime dependencies of the core; the
    test is skipped, in one line saying how to build it by hand, if pip cannot."""
    version = "{}.{}".format(*(_version(python) or (0, 0)))
    venv = VENV_CACHE / version
    bin_python = venv / "bin" / "python"
    stamp = venv / "rookhaven-deps.txt"
    wanted = "\n".join(RUNTIME_DEPS + MODEL_WHEELS) + "\n"
    VENV_CACHE.mkdir(parents=True, exist_ok=True)
    with (VENV_CACHE / f"{version}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists() and stamp.read_text() == wanted and bin_python.exists():
            return str(bin_python)
        for step in ([python, "-m", "venv", "--clear", str(venv)],
                     [str(bin_python), "-m", "pip", "install", "--quiet", *RUNTIME_DEPS],
                     [str(bin_python), "-m", "pip", "install", "--quiet", "--no-deps",
                      *MODEL_WHEELS]):
            done = subprocess.run(step, capture_output=True, text=True, timeout=900,
                                  check=False)
            if done.returncode != 0:
                last = (done.stderr.strip().splitlines() or ["no output"])[-1]
                pytest.skip(
                    f"could not build a CPython {version} venv with {' '.join(RUNTIME_DEPS)} "
                    f"({last}); build it by hand: {python} -m venv {venv} && "
                    f"{bin_python} -m pip install {' '.join(RUNTIME_DEPS)} && "
                    f"printf '%s\\n' {' '.join(repr(d) for d in RUNTIME_DEPS)} > {stamp}")
        stamp.write_text(wanted)
    return str(bin_python)


def run_script(python: str, script: str) -> str:
    """What ``script`` prints when ``python`` runs it from the repository's root."""
    return subprocess.run([python, "-c", script], cwd=ROOT, capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "")},
                          check=True, timeout=300).stdout
