"""``rookhaven store info``: what the store holds and what it costs.

    rookhaven store info [--sample N] [--json]

Counts per kind from the store's indexes; bytes per stored result (result, audit, job
record, index entries) and per log leaf from Redis's MEMORY USAGE over a sample of the
most recent results; and what 10^9 results would take.
"""

from __future__ import annotations

import argparse
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
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    usage = Store.from_settings(settings).usage.measure(args.sample)
    if args.json:
        write_line(orjson.dumps({**usage.as_json(), "bytes_for_1e9": usage.bytes_for(10**9)},
                                option=orjson.OPT_INDENT_2))
    else:
        print(describe(usage))
    return 0
