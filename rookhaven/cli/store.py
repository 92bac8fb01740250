"""``rookhaven store``: what the store holds and what it costs; bringing an older store up.

    rookhaven store info [--sample N] [--json]
    rookhaven store migrate [--force]

``info``: counts per kind from the store's indexes; bytes per stored result (the result with
the audit it frames, job record, index entries) and per log leaf from Redis's MEMORY USAGE
over a sample of the most recent results; and what 10^9 results would take.

``migrate``: a store made by an earlier Rookhaven may keep each job as a hash of its own;
jobs cannot be submitted or run there until this moves them into today's form (results, the
log and the ledger are read as they are). Stop its workers and MCP servers first; it is
safe to run again if interrupted. With ``--drop-audit-copies`` it also removes the second
copy of each audit that earlier releases stored under a key of their own beside the result
that frames it (today's releases read the audit from the result, ADR 0064): about 40% of
such a result's bytes. A release before this one reads those copies, so after it an older
release can no longer replay those results (ops/runbook.md, Upgrading, step 10).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson

from ..config import Settings
from ..store import Store
from ..store.usage import describe
from .options import positive_int, write_line


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("store", help="what the store holds and what it costs",
                                   description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    info = verbs.add_parser("info", help="counts per kind, bytes per result and per leaf")
    info.add_argument("--sample", type=positive_int, default=200,
                      help="recent results measured with MEMORY USAGE (default 200)")
    info.add_argument("--json", action="store_true", help="print the numbers as JSON")
    migrate = verbs.add_parser("migrate", help="move an older store's job records into "
                               "today's form (ops/runbook.md, Upgrading)")
    migrate.add_argument("--force", action="store_true",
                         help="migrate although a worker's heartbeat is still alive")
    migrate.add_argument("--drop-audit-copies", action="store_true",
                         help="also remove the audit copies earlier releases stored beside "
                              "their results (older releases can then no longer replay them)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.verb == "migrate":
        return _migrate(args, settings)
    usage = Store.from_settings(settings).usage.measure(args.sample)
    if args.json:
        write_line(orjson.dumps({**usage.as_json(), "bytes_for_1e9": usage.bytes_for(10**9)},
                                option=orjson.OPT_INDENT_2))
    else:
        print(describe(usage))
    return 0


def _migrate(args: argparse.Namespace, settings: Settings) -> int:
    store = Store.from_settings(settings)
    prefix = settings.key_prefix
    said = [time.monotonic()]

    def progress(what: str) -> Callable[[int], None]:
        def told(count: int) -> None:  # a line every 5 s on a long migration
            if time.monotonic() - said[0] >= 5:
                said[0] = time.monotonic()
                print(f"{what} {count:,} so far", file=sys.stderr, flush=True)
        return told

    if store.keys.jobs_form >= 2:
        print(f"the store under prefix {prefix!r} keeps its job records in today's form"
              + ("" if args.drop_audit_copies else ": nothing to migrate"))
    else:
        moved = store.migrate(force=args.force, progress=progress("job records moved:"))
        print(f"moved {moved:,} job record(s); the store under prefix {prefix!r} keeps its "
              "job records in today's form")
    if args.drop_audit_copies:
        dropped, kept = store.drop_audit_copies(progress=progress("audit copies looked at:"))
        print(f"removed {dropped:,} audit copy(ies) an earlier release stored beside their "
              "results (each result frames its audit)" + (
                  f"; kept {kept:,} that differ from their result's or whose result is gone: "
                  "check them with `rookhaven verify --all`" if kept else ""))
    return 0
