"""Rewrite tests/golden/expected from the current engine: ``python -m tests.golden.regenerate``.

It refuses to change the bytes of a case whose engine version did not change: bump
CORE_VERSION (rookhaven/core/identity.py) or the provider's ``version`` first, so that
old audits are recognisably from another engine. ``--force`` overrides, for new cases only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

from .cases import CASES, EXPECTED, MANIFEST
from .render import render


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--force", action="store_true",
                        help="rewrite changed bytes even without an engine version bump")
    args = parser.parse_args()
    old = json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {}
    EXPECTED.mkdir(exist_ok=True)
    manifest: dict[str, dict[str, str]] = {}
    refused = []
    for case in CASES:
        data, engine_version = render(case)
        digest = hashlib.sha256(data).hexdigest()
        before = old.get(case.name)
        if (before and before["sha256"] != digest and before["engine"] == engine_version
                and not args.force):
            refused.append(case.name)
            manifest[case.name] = before
            continue
        (EXPECTED / f"{case.name}.json").write_bytes(data)
        manifest[case.name] = {"engine": engine_version, "sha256": digest}
    MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    if refused:
        print(f"refused to rewrite {len(refused)} case(s) whose bytes changed under the same "
              f"engine version: {', '.join(refused)}. Bump the engine version first.",
              file=sys.stderr)
        return 1
    print(f"wrote {len(CASES)} golden case(s) to {EXPECTED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
