"""``rookhaven job ID``: print a job record (state, attempts, times, error, who asked) as JSON."""

from __future__ import annotations

import argparse
from typing import Any

from ..config import Settings
from ..store import Store
from .options import result_key, write_line


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("job", help="show a job's state", description=__doc__)
    parser.add_argument("id", type=result_key,
                        help="the job id `rookhaven submit` printed (its result key)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    # The store alone: reading a record needs no broker (none is set with a cluster store).
    record = Store.from_settings(settings).jobs.get(args.id)
    write_line(record.model_dump_json().encode())
    return 0 if record.state != "failed" else 1
