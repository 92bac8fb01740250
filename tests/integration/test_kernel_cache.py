"""numba's on-disk cache of the kernels is stale once any core source changes.

numba checks only a cached function's own file, so a kernel whose callee or constant in
another module changed would load old machine code; ``core.compiled`` adds the digest of
every core source to each cache index (ADR 0046). Here a copy of the package compiles a
kernel, loads it from the cache, and compiles it again after an edit to another module.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rookhaven.core.compiled import AVAILABLE
from tests.conftest import ROOT

# Ranks nothing: it writes two ids' JSON strings, through one cached kernel of hitlists.
PROBE = """
import json, sys
from rookhaven.core import hitlists
strings = hitlists.IdStrings(["a", "b"])
kernel = hitlists._STRING_OFFSETS  # numba's dispatcher since the first call
stats = (kernel.dispatcher() if hasattr(kernel, "dispatcher") else kernel).stats
print(json.dumps({"hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values()),
                  "offsets": strings.offsets.tolist(), "file": hitlists.__file__}))
"""


@pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")
def test_a_cached_kernel_is_compiled_again_when_another_core_module_changes(
        tmp_path: Path) -> None:
    shutil.copytree(ROOT / "rookhaven", tmp_path / "rookhaven",
                    ignore=shutil.ignore_patterns("__pycache__"))

    def probe() -> dict[str, object]:
        ran = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True,
                             text=True, timeout=300, check=False,
                             env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
        assert ran.returncode == 0, ran.stderr[-2000:]
        found: dict[str, object] = json.loads(ran.stdout.strip().splitlines()[-1])
        assert found["file"] == str(tmp_path / "rookhaven" / "core" / "hitlists.py")
        return found

    first = probe()
    assert (first["hits"], first["misses"]) == (0, 1) and first["offsets"] == [1, 5, 9]
    again = probe()
    assert (again["hits"], again["misses"]) == (1, 0)  # from the cache
    # Not hitlists.py, whose own stamp numba checks: a module it does not even import.
    other = tmp_path / "rookhaven" / "core" / "select.py"
    other.write_text(other.read_text() + "\n# an edit in another module\n")
    changed = probe()
    assert (changed["hits"], changed["misses"]) == (0, 1)
    assert probe()["hits"] == 1
