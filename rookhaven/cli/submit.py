"""``rookhaven submit``: record retrieval jobs and enqueue them; prints their job ids.

The job id is the result key. ``--query`` submits one job; with ``--wait`` it waits and
prints the canonical result bytes instead (exit 1 if the job failed). ``--requests FILE``
submits one job per JSON line (every line checked first), prints their ids in file order,
and with ``--wait`` waits for all. ``--wait --out FILE`` prints the ids and writes the
results to FILE, one per line, in input order.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import InputError
from ..models import RetrievalRequest
from ..pipeline import JobRef, Pipeline, open_pipeline
from .options import (
    add_engine_options,
    add_request_options,
    output_file,
    positive_seconds,
    request_from,
    write_line,
)
from .requestfile import Defaults, read_requests

# Requests per round of submission (and per progress line) with --requests.
SUBMIT_CHUNK = 500


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("submit", help="submit retrieval jobs to the workers",
                                   description=__doc__)
    parser.add_argument("--corpus", default="latest",
                        help="stored corpus: a digest, a name, NAME@VERSION or 'latest' "
                             "(default: latest)")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--requests", type=Path, metavar="FILE",
                      help="JSON Lines, one request per line: query, and optionally "
                           "recallBudget, seed, decompose, engine (a field left out takes "
                           "the flag's value, else the setting's)")
    add_request_options(parser, query=what)
    add_engine_options(parser)
    parser.add_argument("--wait", action="store_true",
                        help="wait for the result(s); with --query print its canonical bytes")
    parser.add_argument("--out", type=output_file, metavar="FILE",
                        help="with --wait: write each result's canonical bytes as one line, "
                             "in input order (not written if any job failed)")
    parser.add_argument("--timeout", type=positive_seconds, default=60.0,
                        help="seconds to wait with --wait (default: 60; at most a week)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.out is not None and not args.wait:
        raise InputError("--out writes the results once they are done: add --wait")
    if args.requests is not None:
        return _run_many(args, settings)
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
    if args.out is not None:  # as with --requests: the id here, the result in the file
        print(job.job_id)
        _write_results(pipeline, [job.result_key], args.out)
        return 0
    write_line(pipeline.result(job.result_key))
    return 0


def _run_many(args: argparse.Namespace, settings: Settings) -> int:
    defaults = Defaults(recall_budget=args.budget, seed=args.seed,
                        decompose=not args.no_decompose, engine=settings.engine)
    requests = read_requests(args.requests, settings, defaults)  # all checked before any is sent
    pipeline = open_pipeline(settings)
    # Resolved once, so 'latest' means one corpus for the whole file.
    digest = pipeline.store.corpora.resolve(args.corpus)
    progress = sys.stderr.isatty()
    jobs: list[JobRef] = []
    for at in range(0, len(requests), SUBMIT_CHUNK):
        chunk = _submit(pipeline, requests[at:at + SUBMIT_CHUNK], digest)
        sys.stdout.write("".join(f"{job.job_id}\n" for job in chunk))
        sys.stdout.flush()
        jobs += chunk
        if progress:
            print(f"submitted {len(jobs)}/{len(requests)}", file=sys.stderr, flush=True)
    if not args.wait:
        return 0
    waiting = [job.job_id for job in jobs if not job.cached]
    asked = {job.job_id: each for job, each in zip(jobs, requests, strict=True)}

    def resubmit(lost: list[str]) -> None:  # records a failover lost (MIN_REPLICAS=0)
        print(f"rookhaven: {len(lost)} job record(s) lost in a failover; recording them "
              "again", file=sys.stderr, flush=True)
        _submit(pipeline, [asked[job_id] for job_id in lost], digest)

    records = dict(zip(waiting, pipeline.wait_many(
        waiting, args.timeout, resubmit=resubmit,
        progress=lambda line: print(f"rookhaven: {line}", file=sys.stderr, flush=True)),
        strict=True))
    failed = [r for r in records.values() if r is not None and r.state == "failed"]
    for record in failed:
        print(f"rookhaven: job {record.id} failed after {record.attempts} attempt(s): "
              f"{record.error}", file=sys.stderr)
    if failed:
        print(f"rookhaven: {len(failed)} of {len(records)} job(s) failed", file=sys.stderr)
        return 1
    if args.out is not None:
        _write_results(pipeline, [job.result_key for job in jobs], args.out)
    return 0


def _submit(pipeline: Pipeline, chunk: list[tuple[RetrievalRequest, str]],
            digest: str) -> list[JobRef]:
    """Submit ``chunk`` (one submit_many per engine), the refs in ``chunk``'s order."""
    by_engine: dict[str, list[int]] = {}
    for index, (_, engine) in enumerate(chunk):
        by_engine.setdefault(engine, []).append(index)
    refs: list[JobRef | None] = [None] * len(chunk)
    for engine in sorted(by_engine):
        indices = by_engine[engine]
        for index, ref in zip(indices, pipeline.submit_many(
                [chunk[i][0] for i in indices], digest, engine), strict=True):
            refs[index] = ref
    return [ref for ref in refs if ref is not None]


def _write_results(pipeline: Pipeline, keys: list[str], out: Path) -> None:
    try:
        with out.open("wb") as sink:
            for at in range(0, len(keys), SUBMIT_CHUNK):
                page = keys[at:at + SUBMIT_CHUNK]
                for key, data in zip(page, pipeline.store.results.get_many(page), strict=True):
                    if data is None:  # evicted between done and now: say so, not a short file
                        data = pipeline.result(key)
                    sink.write(data + b"\n")
    except OSError as exc:
        raise InputError(f"{out}: cannot write the results ({exc.strerror}); they are stored: "
                         "`rookhaven result KEY` reads each") from None
