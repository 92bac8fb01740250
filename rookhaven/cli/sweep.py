"""``rookhaven sweep``: enqueue again every job with no result; fail those out of attempts;
recompute every done job whose result was lost (``healed``).

The beat schedule runs the same sweep every ROOKHAVEN_SWEEP_INTERVAL seconds and the healing
scan (a scan of every job record) every ROOKHAVEN_HEAL_INTERVAL; run this by hand after an
outage or a restore, with ``--older-than 0`` to take every queued job now.
"""

from __future__ import annotations

import argparse
from typing import Any

import orjson

from ..config import Settings
from ..pipeline import open_pipeline
from .options import seconds, write_line

YEAR = 365 * 24 * 3600


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("sweep", help="re-enqueue jobs that have no result",
                                   description=__doc__)
    # Up to a year: 0 takes every queued job now, and no job waits longer than that.
    parser.add_argument("--older-than", type=seconds(zero=True, maximum=YEAR),
                        metavar="SECONDS",
                        help="sweep queued jobs this old (default: ROOKHAVEN_SWEEP_AFTER)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    pipeline = open_pipeline(settings)
    report = pipeline.sweep(older_than=args.older_than)
    healed = pipeline.heal()
    write_line(orjson.dumps({**report.model_dump(), "healed": healed}))
    return 0
