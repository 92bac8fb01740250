"""``rookhaven result KEY [--audit]``: print the stored canonical result (or audit) bytes."""

from __future__ import annotations

import argparse
from typing import Any

from ..config import Settings
from ..store import Store
from .options import write_line


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("result", help="print a stored result", description=__doc__)
    parser.add_argument("key", help="the result key (sha256:...)")
    parser.add_argument("--audit", action="store_true", help="print the audit record instead")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    results = Store.from_settings(settings).results
    write_line(results.audit(args.key) if args.audit else results.get(args.key))
    return 0
