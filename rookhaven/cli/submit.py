"""``rookhaven submit``: record a retrieval job and enqueue it; prints the job id.

The job id is the result key. With ``--wait``, waits for the workers and prints the
canonical result bytes instead (exit 1 if the job failed).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..config import Settings
from ..pipeline import open_pipeline
from .options import (
    add_engine_options,
    add_request_options,
    positive_seconds,
    request_from,
    write_line,
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("submit", help="submit a retrieval job to the workers",
                                   description=__doc__)
    parser.add_argument("--corpus", default="latest",
                        help="stored corpus: a digest, a name, NAME@VERSION or 'latest' "
                             "(default: latest)")
    add_request_options(parser)
    add_engine_options(parser)
    parser.add_argument("--wait", action="store_true",
                        help="wait for the result and print its canonical bytes")
    parser.add_argument("--timeout", type=positive_seconds, default=60.0,
                        help="seconds to wait with --wait (default: 60; at most a week)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    pipeline = open_pipeline(settings)
    job = pipeline.submit(request_from(args, settings), args.corpus)
    if not args.wait:
        print(job.job_id)
        return 0
    record = pipeline.wait(job.job_id, args.timeout) if not job.cached else None
    if record is not None and record.state == "failed":
        print(f"rookhaven: job {record.id} failed after {record.attempts} attempt(s): "
              f"{record.error}", file=sys.stderr)
        return 1
    write_line(pipeline.result(job.result_key))
    return 0
