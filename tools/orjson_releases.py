"""Which orjson releases write the same bytes: one venv per release, one wide probe each.

Run by hand (needs the network for pip):

    python3 tools/orjson_releases.py --dir /tmp/orjson-venvs 3.9.0 3.11.6 3.11.7 3.13.0

For each release it makes ``DIR/V`` (once), installs ``orjson==V`` and encodes 233,000
floats over every exponent, 20,000 random strings over all planes, every code point below
U+0800 and 5,000 keys sorted; it prints the release, the sha256 of the output, and, for
releases whose digest differs from the first one's, a few values they write otherwise.
This is the measurement behind docs/adr/0038; ``rookhaven/core/frozen_encoding.py`` is the
check that runs in every install.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import venv
from pathlib import Path

PROBE = r'''
import hashlib, json, random, sys
import orjson
rng = random.Random(7)
vals = [rng.randrange(1, 2**53) * 2.0 ** (e - 53) for e in range(-60, 80) for _ in range(200)]
vals += [u / 2**24 for u in range(1, 5000)]
vals += [rng.randrange(1, 2**40) / 2**24 for _ in range(200000)]
vals += [1e16, 1e15, 1e17, 1e-4, 1e-5, 0.0, -0.0, 1.0, 123456789012345678.0, 5e-324,
         1.7976931348623157e308]
planes = lambda: rng.choice([rng.randrange(0, 0x80), rng.randrange(0x80, 0x800),
                             rng.randrange(0x800, 0xD800), rng.randrange(0xE000, 0x110000)])
strs = ["".join(chr(planes()) for _ in range(20)) for _ in range(20000)]
strs += [chr(c) for c in range(0, 0x800)] + ["\u2028\u2029", "\x7f", "\"\\/"]
keys = {s: i for i, s in enumerate(strs[:5000])}
parts = [orjson.dumps(v) for v in vals] + [orjson.dumps(s) for s in strs]
parts.append(orjson.dumps(keys, option=orjson.OPT_SORT_KEYS))
digest = hashlib.sha256(b"\n".join(parts)).hexdigest()
print(json.dumps({"version": orjson.__version__, "digest": digest,
                  "sample": [p.decode() for p in parts[:len(vals)] if b"e" in p][-3:]}))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="+")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/orjson-venvs"))
    args = parser.parse_args()
    first = None
    for version in args.versions:
        home = args.dir / version
        python = home / "bin" / "python"
        if not python.exists():
            venv.create(home, with_pip=True)
            subprocess.run([str(python), "-m", "pip", "install", "-q", f"orjson=={version}"],
                           check=True)
        out = subprocess.run([str(python), "-c", PROBE], check=True, capture_output=True,
                             text=True).stdout.strip()
        print(out, flush=True)
        digest = out.split('"digest": "')[1][:64]
        first = first or digest
        if digest != first:
            print(f"  {version} differs from {args.versions[0]}", file=sys.stderr)


if __name__ == "__main__":
    main()
