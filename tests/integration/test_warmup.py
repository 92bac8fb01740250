"""The workers' warm-up reaches every compiled path, so no pool child compiles on a job."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rookhaven.core.compiled import AVAILABLE

# Every top-level compiled function (the inlined helpers compile inside these).
KERNELS = {
    "rookhaven.core.providers.kernel": ["_kernel", "_union"],
    "rookhaven.core.providers.feedback": ["_tally_kernel", "_fill_kernel", "_bo1_kernel"],
    "rookhaven.core.providers.lookup": ["_compiled"],
    "rookhaven.core.select": ["_CUT_AND_RANK"],
    "rookhaven.core.rng": ["_COMPILED"],
}

PROBE = f"""
import importlib, json
from rookhaven.pipeline.warmup import warm_up
warm_up(["bm25@3"])
kernels = {KERNELS!r}
print(json.dumps({{f"{{m}}.{{n}}": len(getattr(importlib.import_module(m), n).signatures)
                  for m, names in kernels.items() for n in names}}))
"""


@pytest.mark.skipif(not AVAILABLE, reason="numba is not installed")
def test_a_fresh_process_warmed_up_holds_every_kernel_compiled() -> None:
    # A process of its own: in this one, earlier tests may have compiled them already.
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         check=True, timeout=600)
    signatures = json.loads(out.stdout.strip().splitlines()[-1])
    assert signatures and all(signatures.values()), signatures
