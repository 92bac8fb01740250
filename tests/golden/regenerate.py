"""Write the golden files of new cases and new engines: ``python -m tests.golden.regenerate``.

It never rewrites a golden that exists: a released engine is frozen, so bytes that differ
from its goldens are a regression to fix, or a new engine version to add in
rookhaven/core/engines.py (whose goldens this then writes).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

from .cases import engine_dir, manifest_path, runs
from .render import render


def main() -> int:
    argparse.ArgumentParser(description=__doc__).parse_args()
    manifests: dict[str, dict[str, str]] = {}
    written, refused = [], []
    for engine, case in runs():
        path = manifest_path(engine)
        manifest = manifests.setdefault(
            engine, json.loads(path.read_text()) if path.exists() else {})
        data = render(case, engine)
        digest = hashlib.sha256(data).hexdigest()
        if case.name in manifest:
            if manifest[case.name] != digest:
                refused.append(f"{engine}/{case.name}")
            continue
        engine_dir(engine).mkdir(exist_ok=True)
        (engine_dir(engine) / f"{case.name}.json").write_bytes(data)
        manifest[case.name] = digest
        written.append(f"{engine}/{case.name}")
    for engine, manifest in manifests.items():
        manifest_path(engine).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(written)} new golden file(s){': ' if written else ''}"
          f"{', '.join(written)}")
    if refused:
        print(f"refused to rewrite {len(refused)} golden(s) of released engines whose bytes "
              f"changed: {', '.join(refused)}. A released engine never changes: fix the "
              "regression, or add a new engine version and pin its goldens.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
