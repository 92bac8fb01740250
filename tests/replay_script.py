"""Print the sha256 of every golden case's bytes, one per line; run by other interpreters.

Used by the reproducibility tests: the same cases rendered under another PYTHONHASHSEED or
another CPython must print the same lines.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.golden.cases import CASES
from tests.golden.render import render


def main() -> None:
    for case in CASES:
        data, _ = render(case)
        print(case.name, hashlib.sha256(data).hexdigest())


if __name__ == "__main__":
    main()
