"""``rookhaven store``: what the store holds and what it costs; moving an older store's jobs.

    rookhaven store info [--sample N] [--json]
    rookhaven store migrate [--force]

``info``: counts per kind from the store's indexes; bytes per stored result (result, audit,
job record, index entries) and per log leaf from Redis's MEMORY USAGE over a sample of the
most recent results; and what 10^9 results would take.

``migrate``: a store made by an earlier Rookhaven keeps each job as a hash
of its own; jobs cannot be submitted or run there until this moves them into today's form
(results, audits, the log and the ledger are read as they are). Stop its workers and MCP
servers first; it is safe to run again if interrupted.
"""

from __future__ import annotations

import argparse
import sys
import time
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
    if store.keys.jobs_form >= 2:
        print(f"the store under prefix {settings.key_prefix!r} keeps its job records in "
              "today's form: nothing to migrate")
        return 0
    said = [time.monotonic()]

    def progress(moved: int) -> None:  # a line every 5 s on a long migration
        if time.monotonic() - said[0] >= 5:
            said[0] = time.monotonic()
            print(f"moved {moved:,} job record(s) so far", file=sys.stderr, flush=True)

    moved = store.migrate(force=args.force, progress=progress)
    print(f"moved {moved:,} job record(s); the store under prefix {settings.key_prefix!r} keeps "
          "its job records in today's form")
    return 0
