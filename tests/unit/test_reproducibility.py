"""Bit-reproducibility across processes, hash seeds and CPython versions."""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.golden.cases import CASES
from tests.golden.render import render

SCRIPT = ROOT / "tests" / "replay_script.py"
RUNTIME_DEPS = ("pydantic>=2.6", "orjson>=3.9", "numpy>=1.26", "PyStemmer>=2.2")
VENV_CACHE = ROOT / ".cache" / "pyvenvs"


def _run(python: str, hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([python, str(SCRIPT)], capture_output=True, text=True, env=env,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _in_process() -> str:
    import hashlib

    return "".join(f"{c.name} {hashlib.sha256(render(c)[0]).hexdigest()}\n" for c in CASES)


def test_the_same_request_gives_the_same_bytes_twice_in_one_process() -> None:
    assert _in_process() == _in_process()


def test_two_processes_with_different_hash_seeds_give_the_same_bytes() -> None:
    first = _run(sys.executable, "1")
    assert first == _run(sys.executable, "4242") == _in_process()


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


def _venv_python(python: str) -> str:
    """A cached venv for ``python`` holding only the runtime dependencies of the core."""
    version = "{}.{}".format(*(_version(python) or (0, 0)))
    venv = VENV_CACHE / version
    bin_python = venv / "bin" / "python"
    if not bin_python.exists():
        subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=300)
        subprocess.run([str(bin_python), "-m", "pip", "install", "--quiet", *RUNTIME_DEPS],
                       check=True, timeout=900)
    return str(bin_python)


@pytest.mark.slow
def test_another_cpython_version_gives_the_same_bytes() -> None:
    other = newest_other_cpython()
    if other is None:
        pytest.skip(f"no CPython other than {sys.version_info[0]}.{sys.version_info[1]} "
                    "is installed on this machine")
    assert _run(_venv_python(other), "7") == _in_process()
