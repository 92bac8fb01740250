"""``rookhaven result KEY [--audit]``: print the stored canonical result (or audit) bytes.

The bytes are checked against the leaf the transparency log holds for them first; bytes
that disagree with it are refused (exit 1), never printed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..config import Settings
from ..errors import IntegrityError
from ..store import Store
from ..transparency.checkpoints import logged_leaf
from .options import result_key, write_line


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("result", help="print a stored result", description=__doc__)
    parser.add_argument("key", type=result_key, help="the result key (sha256:...)")
    parser.add_argument("--audit", action="store_true", help="print the audit record instead")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    store = Store.from_settings(settings)
    result, audit = store.results.get(args.key), store.results.audit(args.key)
    leaf = logged_leaf(store, args.key)
    if leaf is None:
        print(f"rookhaven: warning: {args.key} is not in the transparency log; its bytes "
              "cannot be checked (`rookhaven log backfill` logs older results)",
              file=sys.stderr)
    elif not leaf.matches(result, audit):
        raise IntegrityError(f"the stored bytes of {args.key} are not the ones logged on "
                             f"{leaf.stored} (leaf hashes differ): not printing them; run "
                             f"`rookhaven verify --key {args.key}`")
    write_line(audit if args.audit else result)
    return 0
