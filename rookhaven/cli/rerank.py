"""``rookhaven rerank``: replay historical queries against a new corpus and/or engine, and
report what changed per query (JSON lines) and in all (a short summary).

Historical queries come from stored results (``--corpus``, ``--since``, ``--until``,
``--limit``) or from a JSON-lines file of requests (``--requests FILE --baseline REF``).
Work goes through the workers in chunks (``--inline`` runs it here, through the same
pipeline). A stopped run resumes with ``--resume RUN_ID`` without redoing finished chunks.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from ..config import Settings
from ..core.canonical import canonical_bytes
from ..errors import InputError
from ..pipeline import Pipeline, open_pipeline
from ..pipeline.inline import inline_pipeline
from ..reports import page_for
from ..reports.written import made_now, write_page
from ..rerank import Reranker, RerankSpec, RerankSummary, check_target, summarize
from ..rerank.models import CHUNK
from ..store import Store
from .options import moment, output_file, positive_int, positive_seconds
from .requestfile import Defaults, read_requests


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("rerank", help="re-run historical queries and report changes",
                                   description=__doc__)
    parser.add_argument("--corpus", help="only results over this corpus (name, digest, latest)")
    parser.add_argument("--since", type=moment, help="stored at or after (ISO 8601 or Unix s)")
    parser.add_argument("--until", type=moment, help="stored at or before (default: now)")
    parser.add_argument("--limit", type=positive_int, help="at most N historical queries")
    parser.add_argument("--requests", type=Path, help="JSON-lines file of requests instead")
    parser.add_argument("--baseline", help="with --requests: the corpus they first ran on")
    parser.add_argument("--to-corpus", help="target corpus (default: each query's own)")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--to-engine", dest="target_provider", metavar="NAME@VERSION",
                        help="target engine (default: each query's own); see rookhaven engines")
    target.add_argument("--provider", dest="target_provider", metavar="NAME",
                        help="target: the newest engine version of provider NAME")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="target provider parameter, VALUE as JSON (repeatable)")
    parser.add_argument("--chunk", type=positive_int, default=CHUNK,
                        help=f"queries per chunk (default {CHUNK})")
    parser.add_argument("--inline", action="store_true", help="compute here, not on workers")
    parser.add_argument("--out", type=output_file, help="report file (default: RUN_ID.jsonl; with "
                        "--resume, the file the run started with)")
    parser.add_argument("--html", type=output_file, metavar="FILE.html",
                        help="also write the run as a page people read (rookhaven report)")
    parser.add_argument("--resume", metavar="RUN_ID", help="continue a stopped run")
    parser.add_argument("--wait-timeout", type=positive_seconds, default=600.0,
                        help="seconds to wait for one chunk's jobs")
    parser.set_defaults(run=run)




def _param(raw: str) -> tuple[str, Any]:
    name, sep, value = raw.partition("=")
    if not sep or not name:
        raise InputError(f"--param takes NAME=VALUE, got {raw!r}")
    try:
        return name, orjson.loads(value)
    except orjson.JSONDecodeError:
        return name, value


def spec_from(args: argparse.Namespace, pipeline: Pipeline) -> RerankSpec:
    store = pipeline.store
    params = dict(_param(p) for p in args.param)
    provider = args.target_provider
    # Checked before the run is recorded: the caller's one-line error, not a run that fails.
    check_target(provider, params, args.since, args.until,
                 names=("--to-engine or --provider", "--param"))
    target = store.corpora.resolve(args.to_corpus) if args.to_corpus else None
    common = {"target_corpus": target, "provider": provider, "params": params,
              "chunk": args.chunk}
    if args.requests is not None:
        # The file is read as ``submit --requests`` reads it (every line checked first); a
        # line's engine is the one it was first run with, else ROOKHAVEN_ENGINE.
        settings = pipeline.settings
        found = read_requests(args.requests, settings, Defaults(
            recall_budget=None, seed=None, decompose=True, engine=settings.engine))
        requests = [{**request.model_dump(mode="json", by_alias=True), "engine": engine}
                    for request, engine in found]
        return RerankSpec(source="file", requests=requests, baseline=args.baseline, **common)
    if target is None and args.target_provider is None:
        raise InputError("nothing to compare against: give --to-corpus and/or --to-engine")
    return RerankSpec(source="audits",
                      corpus=store.corpora.resolve(args.corpus) if args.corpus else None,
                      since=args.since, until=args.until if args.until else store.now(),
                      limit=args.limit, **common)


class ProgressLine:
    """done / total, rate and ETA on stderr."""

    def __init__(self) -> None:
        self.started = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = done / elapsed
        eta = (total - done) / rate if rate else float("inf")
        print(f"rerank: {done}/{total} queries, {rate:.0f} q/s, ETA {eta:.0f} s",
              file=sys.stderr, flush=True)


def summary_text(summary: RerankSummary, out: Path) -> str:
    def show(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"
    return "\n".join([
        f"re-ranking {summary.run_id}: {summary.queries} queries, {summary.compared} compared, "
        f"{summary.failed} failed",
        f"  unchanged {summary.unchanged}, changed {summary.changed}; mean overlap@k "
        f"{show(summary.mean_overlap_at_k)}, Kendall's tau {show(summary.mean_kendall_tau)}, "
        f"RBO {show(summary.mean_rbo)}",
        f"  documents gained {summary.documents_gained}, lost {summary.documents_lost}; "
        f"largest rank displacement {summary.max_displacement}",
        f"  report: {out}",
    ])


def run(args: argparse.Namespace, settings: Settings) -> int:
    # --inline needs no broker: no Celery producer is built.
    pipeline = (inline_pipeline(Store.from_settings(settings), settings) if args.inline
                else open_pipeline(settings))
    reranker = Reranker(pipeline, wait_timeout=args.wait_timeout)
    reranks = pipeline.store.reranks
    if args.resume:
        reranks.spec(args.resume)  # an unknown run is refused before anything is recorded
    run_id = args.resume or reranker.start(spec_from(args, pipeline))
    # The report goes where the run started writing it, unless --out names another file
    # (absolute: a resume from another directory writes the same file).
    reranks.set_out(run_id, str((args.out or Path(f"{run_id}.jsonl")).resolve()),
                    replace=args.out is not None)
    out = Path(reranks.out(run_id) or f"{run_id}.jsonl")
    print(f"rerank: run {run_id}", file=sys.stderr, flush=True)
    rows = reranker.run(run_id, progress=ProgressLine())
    summary = summarize(run_id, rows)
    pipeline.store.reranks.set_summary(run_id, canonical_bytes(summary))
    try:
        with out.open("wb") as handle:
            for row in rows:
                handle.write(canonical_bytes(row) + b"\n")
    except OSError as exc:
        raise InputError(f"{out}: cannot write the report ({exc.strerror}); the run's rows "
                         f"are stored: `rookhaven rerank --resume {run_id} --out FILE` "
                         "writes them elsewhere") from None
    print(summary_text(summary, out))
    if args.html is not None:
        store = pipeline.store
        write_page(args.html, page_for(store, run_id, made_now(store.now())))
        print(f"  page: {args.html.resolve()}")
    return 0 if summary.failed == 0 else 1
