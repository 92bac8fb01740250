"""bm25 integer scores are identical under other Python versions (and their numpy builds).

Interpreters come from ROOKHAVEN_TEST_PYTHONS (paths separated by the OS path separator),
else the usual places for 3.12 and 3.13, else the cached venv that tests/crosspython/pythons.py
builds for the newest other CPython on this machine (so CI runs this test, never skips it,
wherever a second CPython is installed). One needs numpy, orjson and pydantic.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.crosspython.pythons import newest_other_cpython, venv_python
from tests.exact_fingerprint import fingerprint

ROOT = Path(__file__).resolve().parents[2]
NEEDS = "import numpy, orjson, pydantic"


def _candidates() -> list[str]:
    configured = os.environ.get("ROOKHAVEN_TEST_PYTHONS")
    if configured:
        return [p for p in configured.split(os.pathsep) if p]
    found = sorted(glob.glob("/tmp/rh-py3.1[2-9]*/bin/python"))
    found += [p for name in ("python3.12", "python3.13") if (p := shutil.which(name))]
    return found


def _usable() -> dict[str, str]:
    """version -> interpreter, for interpreters other than this one that can run the core."""
    found = _probe(_candidates())
    if not found and not os.environ.get("ROOKHAVEN_TEST_PYTHONS"):
        other = newest_other_cpython()
        found = _probe([venv_python(other)]) if other is not None else {}
    return found


def _probe(candidates: list[str]) -> dict[str, str]:
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    usable: dict[str, str] = {}
    for python in candidates:
        probe = subprocess.run([python, "-c", f"{NEEDS}; import sys; print("
                                "f'{sys.version_info.major}.{sys.version_info.minor}')"],
                               capture_output=True, text=True, check=False)
        version = probe.stdout.strip()
        if probe.returncode == 0 and version != here:
            usable.setdefault(version, python)
    return usable


@pytest.mark.slow
def test_scores_are_bit_identical_under_other_python_versions() -> None:
    usable = _usable()
    if not usable:
        pytest.skip("no other Python (3.12+) with numpy, orjson and pydantic found; "
                    "see this module's docstring to make one")
    expected = fingerprint()
    for version, python in sorted(usable.items()):
        out = subprocess.run([python, "-m", "tests.exact_fingerprint"], cwd=ROOT,
                             env={"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "")},
                             capture_output=True, text=True, check=True, timeout=300)
        assert out.stdout.strip() == expected, f"Python {version} ({python}) disagrees"
