"""``rookhaven demo``: the whole pipeline in one process, with no services installed.

An embedded Redis-compatible server (fakeredis over TCP on loopback), a Celery worker on a
thread consuming from it, the shipped port-operations corpus, a handful of submitted jobs,
a bulk re-rank against the corpus's edited next version, verification runs (one after a
stored byte is changed), and the transparency log catching an erased result. The embedded
store lives in memory: it is not durable, and it is gone when the command ends.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
from celery.contrib.testing.worker import start_worker

from rookhaven.cli.options import add_engine_options, count, output_file
from rookhaven.cli.tables import audit_summary, hits_table, score_scale, short, table
from rookhaven.cli.verify import summary as verification_summary
from rookhaven.config import Settings
from rookhaven.models import RetrievalResult
from rookhaven.pipeline import Pipeline, open_pipeline
from rookhaven.reports import page_for
from rookhaven.reports.written import made_now, write_page
from rookhaven.rerank import Reranker, RerankSpec, summarize
from rookhaven.sampledata import sample_corpus, sample_requests
from rookhaven.store.embedded import embedded_redis
from rookhaven.store.tamperer import tamperer as tamperer_of
from rookhaven.transparency import checkpoints
from rookhaven.transparency.note import generate_key
from rookhaven.verification import Selection, Verifier
from rookhaven.verification.logcheck import PinnedCheckpoint

from .application import create_app

# Where the demo writes its re-rank's page: outside the working tree, which it leaves as found.
DEMO_PAGE = Path(tempfile.gettempdir()) / "rookhaven-demo-rerank.html"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("demo", help="run the whole pipeline in-process, no services",
                                   description=__doc__)
    add_engine_options(parser)
    parser.add_argument("--queries", type=count, default=4, help="sample queries to show in full")
    parser.add_argument("--page", type=output_file, default=DEMO_PAGE, metavar="FILE.html",
                        help=f"where the re-rank's page is written (default {DEMO_PAGE})")
    parser.set_defaults(run=run)


def _section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 76 - len(title)))


HOW_TO_READ = """\
How to read a result: the query is split into subqueries at connectors and punctuation
(listed under its table, numbered from 0); each gets a share of the budget in proportion
to its weight (its number of distinct terms). `via` is the number of the subquery whose
share picked the hit, or `backfill` when the whole query filled a place no subquery did.
`score` is the engine's exact integer, in units of 1/{scale}; the result's JSON carries it
as units / {scale} ({example} is {decimal!r}). Integers make every tie and replay exact."""


class _HeldBack(logging.Handler):
    """Keeps the records of a staged tamper instead of printing them."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def _staged_alarms() -> Iterator[_HeldBack]:
    """Hold back the verifier's alarm log lines while the demo tampers on purpose.

    In a deployment each alarm is a JSON line at ERROR on stderr (and an entry in the alerts
    stream); here the tamper is staged, so its line would read as the demo failing. Only
    the verifier's logger, and only for the staged run: any other error still shows.
    """
    logger = logging.getLogger("rookhaven.verify")
    held = _HeldBack()
    logger.addHandler(held)
    propagate, logger.propagate = logger.propagate, False
    try:
        yield held
    finally:
        logger.propagate = propagate
        logger.removeHandler(held)


def _held_note(held: _HeldBack) -> str:
    count = len(held.records)
    return (f"  (the verifier also logged {count} alarm line{'s' * (count != 1)} at ERROR: in "
            "a deployment each is a JSON line on stderr\n   and an entry in the alerts "
            "stream; held back here because this tamper is staged)")


def _show_jobs(pipe: Pipeline, count: int) -> int:
    documents = {d.id: d for d in sample_corpus()}
    requests = sample_requests()
    refs = pipe.submit_many(requests, "port-ops")
    shown = min(count, len(refs))
    print(f"submitted {len(refs)} jobs, one per shipped auditor query; the in-process worker "
          f"runs them.\nThe first {shown} are shown in full (--queries N shows more); the "
          f"re-ranking below uses all {len(refs)}.")
    for n, (request, ref) in enumerate(list(zip(requests, refs, strict=True))[:count]):
        record = pipe.wait(ref.job_id, timeout=120)
        result = RetrievalResult.model_validate_json(pipe.result(ref.result_key))
        if n == 0:
            print()
            print(_how_to_read(result))
        print(f"\nquery {n + 1} of {len(refs)}: {request.query!r}  "
              f"(job {record.state}, attempt {record.attempts})")
        print(hits_table(result, documents))
        tie = _first_tie(result)
        if tie:
            print(tie)
        print(audit_summary(result))
        print(f"  result key {ref.result_key[:23]}…")
    for ref in refs[count:]:
        pipe.wait(ref.job_id, timeout=120)
    if shown < len(refs):
        print(f"\n(the other {len(refs) - shown} jobs are done too)")
    again = pipe.submit(requests[0], "port-ops")
    print(f"\nsubmitting the first query again: cached={again.cached}, same key="
          f"{again.result_key == refs[0].result_key} (answered from the store, not enqueued)")
    return len(refs)


def _how_to_read(result: RetrievalResult) -> str:
    scale = score_scale(result)
    hit = result.hits[0] if result.hits else None
    if scale is None or hit is None:
        return HOW_TO_READ.split("\n`score`")[0]
    return HOW_TO_READ.format(scale=_power_of_two(scale), example=int(hit.score * scale),
                              decimal=hit.score)


def _first_tie(result: RetrievalResult) -> str | None:
    """A line on the first two neighbours with the same score, if any."""
    for a, b in zip(result.hits, result.hits[1:], strict=False):
        if a.score == b.score:
            return (f"(ranks {a.rank} and {b.rank} score exactly the same; the seed orders "
                    "them, the same way in every replay)")
    return None


def _power_of_two(scale: int) -> str:
    bits = scale.bit_length() - 1
    return f"2^{bits}" if scale == 1 << bits else str(scale)


def _rerank(pipe: Pipeline) -> str:
    store = pipe.store
    spec = RerankSpec(source="audits", corpus=store.corpora.resolve("port-ops@1"),
                      target_corpus=store.corpora.resolve("port-ops@2"), until=store.now(),
                      chunk=5)
    reranker = Reranker(pipe, wait_timeout=120)
    run_id = reranker.start(spec)
    rows = reranker.run(run_id)
    summary = summarize("demo", rows)
    print(f"{summary.queries} historical queries re-run on the edited corpus through the "
          f"worker: {summary.changed} changed, {summary.unchanged} unchanged, "
          f"{summary.documents_gained} documents gained, {summary.documents_lost} lost")
    print("(k: the recall budget; overlap: documents in both rankings; tau: Kendall's tau of "
          "the shared\n documents' order; RBO: rank-biased overlap, 1.00 = the same ranking)")
    print(table(("query", "k", "overlap", "gained", "lost", "tau", "RBO"), [
        (short(row.query, 40), row.recall_budget, row.change["overlap"], len(row.change["gained"]),
         len(row.change["lost"]),
         "n/a" if row.change["kendall_tau"] is None else f"{row.change['kendall_tau']:.2f}",
         f"{row.change['rbo']:.2f}")
        for row in rows if row.change is not None]))
    return run_id


def _page(pipe: Pipeline, run_id: str, path: Path) -> None:
    """The re-rank as the page an auditor reads (rookhaven report)."""
    write_page(path, page_for(pipe.store, run_id, made_now(pipe.store.now())))
    print(f"the re-rank as a page people read (pictures, the queries that moved most, side "
          f"by side):\n  {path.resolve()}")


def _verify(pipe: Pipeline, settings: Settings) -> bool:
    verifier = Verifier(pipe.store, settings)
    print("the verifier replays every stored result (the jobs' and the re-rank's) with the "
          "engine its\naudit names, and compares the bytes:")
    clean = verifier.run(Selection(all=True))
    print(verification_summary(clean))
    key = next(pipe.store.audits.scan())[0]
    redis_key = pipe.store.keys.result(key)
    stored = pipe.store.results.get(key)
    at = stored.index(b'"rank":1')
    # A tamperer's own connection: Rookhaven's store never writes a key twice.
    tamperer = tamperer_of(settings)
    tamperer.set(redis_key, stored[:at] + b'"rank":9' + stored[at + 8:])
    print("\nnow one byte of one stored result is changed, as a tamperer would:")
    with _staged_alarms() as held:
        caught = verifier.run(Selection(keys=[key]))
    print(verification_summary(caught))
    print(_held_note(held))
    tamperer.set(redis_key, stored)
    tamperer.close()
    return clean.clean and not caught.clean


def _log(pipe: Pipeline, settings: Settings) -> bool:
    # A key made for this run only: in a deployment it lives in ROOKHAVEN_LOG_KEY_FILE.
    private, verifier_key = generate_key("rookhaven-demo/log", os.urandom(32))
    note = checkpoints.sign_now(pipe.store, private)
    print(f"every stored result is a leaf of an append-only Merkle log (RFC 6962); a signed "
          f"checkpoint of it\n(origin, number of leaves, root hash, then the signature), which "
          f"an auditor keeps outside Redis:\n\n{note}")
    pinned = PinnedCheckpoint(note=note, verifier_key=verifier_key)
    verifier = Verifier(pipe.store, settings)
    key, stored_at = next(pipe.store.audits.scan())
    k = pipe.store.keys.shard(key)
    names = [k.result(key)]  # the result frames its audit
    job = [k.job_specs, k.job_states]  # the job's record: a field of each
    tamperer = tamperer_of(settings)
    saved = [tamperer.dump(name) for name in names]
    record = [tamperer.hget(name, key) for name in job]
    digest = orjson.loads(pipe.store.results.audit(key))["corpus_digest"]
    tamperer.delete(*names)
    for name in job:
        tamperer.hdel(name, key)
    tamperer.zrem(k.audits_by_time, key)
    tamperer.zrem(k.audits_by_corpus(digest), key)
    print("now one result is erased with every index entry naming it, as a tamperer with "
          "write access to Redis would (replay alone cannot see a result that is gone):")
    with _staged_alarms() as held:
        caught = verifier.run(Selection(all=True), pinned=pinned)
    print(verification_summary(caught))
    print(_held_note(held))
    for name, data in zip(names, saved, strict=True):
        if data is not None:
            tamperer.restore(name, 0, data)
    for name, field_ in zip(job, record, strict=True):
        if field_ is not None:
            tamperer.hset(name, key, field_)
    tamperer.zadd(k.audits_by_time, {key: stored_at})
    tamperer.zadd(k.audits_by_corpus(digest), {key: stored_at})
    tamperer.close()
    return any(v.outcome == "erased" and v.key == key for v in caught.verdicts)


def run(args: argparse.Namespace, settings: Settings) -> int:
    with embedded_redis() as url:
        # Broker and store are the embedded server, whatever ROOKHAVEN_BROKER_URL says.
        demo = dataclasses.replace(settings.with_overrides(
            redis_url=url, key_prefix="rookhaven-demo", log_level="warning"), broker_url=None)
        print(f"Rookhaven demo: embedded Redis-compatible server (fakeredis) at {url}.\n"
              "It keeps everything in memory: NOT durable; it is all gone when this command "
              "ends.\nA Celery worker runs in this process (solo pool) and consumes from it.")
        app = create_app(demo, compile_kernels=False)  # 300 documents: no kernel pays
        with start_worker(app, pool="solo", perform_ping_check=False, loglevel="ERROR",
                          shutdown_timeout=10):
            pipe = open_pipeline(demo)
            _section("corpus")
            first = pipe.add_corpus(sample_corpus(), "port-ops")
            print(f"port-ops v1: {first.documents} documents, {first.digest[:23]}…")
            _section("jobs")
            submitted = _show_jobs(pipe, args.queries)
            _section("bulk re-ranking")
            edited = pipe.add_corpus(sample_corpus("port_ops_edited.jsonl"), "port-ops")
            print(f"port-ops v2 (edited): {edited.documents} documents, {edited.digest[:23]}…")
            _page(pipe, _rerank(pipe), args.page)
            _section("verification")
            ok = _verify(pipe, demo)
            _section("transparency log")
            ok = _log(pipe, demo) and ok
            pipe.store.close()
        print(f"\n{submitted} jobs, a re-rank and three verification runs; nothing was written "
              f"to disk but the re-rank's page,\n{args.page.resolve()}.\nThe same on a real "
              "Redis and Celery workers: docs/pipeline.md;\na durable deployment: "
              "docs/deployment.md.")
    return 0 if ok else 1
