"""Print the sha256 of every golden case's bytes, one per line; run by other interpreters.

Used by the reproducibility tests: the same cases rendered under another PYTHONHASHSEED or
another CPython must print the same lines.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.golden.cases import runs
from tests.golden.render import render


def digests() -> str:
    """One line per golden (engine, case): their names and the sha256 of its bytes."""
    return "".join(f"{engine} {case.name} {hashlib.sha256(render(case, engine)).hexdigest()}\n"
                   for engine, case in runs())


def run_in(python: str, hash_seed: str) -> str:
    """What this script prints when run by ``python`` with PYTHONHASHSEED=``hash_seed``."""
    script = Path(__file__).resolve()
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(script.parent.parent)}
    done = subprocess.run([python, str(script)], capture_output=True, text=True, env=env,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def main() -> None:
    sys.stdout.write(digests())


if __name__ == "__main__":
    main()
