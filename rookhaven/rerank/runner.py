"""Run a bulk re-ranking: submit the historical queries against the target in chunks, wait
for the results through the pipeline, and compare each new ranking with the old one.

A finished chunk's rows are stored at once, so a stopped run resumes without redoing it;
results are content-addressed, so even a redone job costs a lookup, not a ranking.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from ..core.canonical import RESULT_HITS, canonical_bytes
from ..core.compare import compare_rankings
from ..core.engines import engine_spec
from ..errors import InputError, RerankError
from ..pipeline import JobRef, Pipeline
from .models import RerankRow, RerankSpec, RerankSummary
from .sources import Historical, from_audits, from_requests

Progress = Callable[[int, int], None]
# A chunk's jobs: on the target, and for its baseline (None where a result is stored).
_Submitted = tuple[list[JobRef | None], list[JobRef | None]]
# Chunks submitted ahead of the one waited for: enough to keep two workers ranking while
# this process compares and stores a chunk, few enough that a stop leaves little in flight.
AHEAD = 4
# Seconds between looks at a chunk's jobs while it runs.
POLL = 0.01
# A result is stored in the transaction that closes its job, so while a chunk's results are
# missing, their count (one integer back) says as much as its jobs' states; the states are
# read at every STATES_EVERY-th look, and once every result is there, to see a job that
# failed (it never has one) or a result that is gone.
STATES_EVERY = 10



def check_target(provider: str | None, params: dict[str, Any], since: float | None,
                 until: float | None, *, names: tuple[str, str]) -> None:
    """InputError for a run that cannot do what it is asked, before it is recorded: an
    unknown target engine or a parameter it cannot take, parameters with no target engine
    (they would be ignored), or a window that ends before it starts. ``names``: how the
    caller spells the engine and the parameters."""
    if provider is not None:
        engine_spec(provider).build(**params)
    elif params:
        raise InputError(f"{names[1]} sets the target engine's parameters; name the engine "
                         f"with {names[0]}")
    if since is not None and until is not None and since > until:
        raise InputError("the window ends before it starts: since is later than until")


def run_id_for(spec: RerankSpec) -> str:
    """A run id derived from the spec: the same invocation resumes the same run."""
    return "rerank-" + hashlib.sha256(canonical_bytes(spec)).hexdigest()[:16]


def hit_ids(data: bytes | None) -> list[str] | None:
    """The ranked ids of a stored result. Only its hits are parsed: a result is its audit
    then its hits (core.canonical.result_bytes), and no hit holds the hits' key, so the
    key's last place begins them (a fifth of the bytes to read)."""
    if data is None:
        return None
    at = data.rfind(RESULT_HITS)
    hits = (orjson.loads(data[at + len(RESULT_HITS):-1]) if at > 0 and data.endswith(b"]}")
            else orjson.loads(data)["hits"])
    return [hit["id"] for hit in hits]


class Reranker:
    """Bulk re-ranking over one pipeline (workers, or inline with an InlineDispatcher)."""

    def __init__(self, pipeline: Pipeline, wait_timeout: float = 600.0) -> None:
        self.pipeline = pipeline
        self.store = pipeline.store
        self.wait_timeout = wait_timeout

    def queries(self, spec: RerankSpec) -> list[Historical]:
        if spec.source == "audits":
            return from_audits(self.store, spec)[0]
        return from_requests(self.store, spec, self.pipeline.settings.engine)

    def start(self, spec: RerankSpec) -> str:
        """Record the run (or find it, if this spec already ran) and return its id."""
        run_id = run_id_for(spec)
        total = len(self.queries(spec))
        self.store.reranks.create(run_id, canonical_bytes(spec), total,
                                  math.ceil(total / spec.chunk))
        return run_id

    def run(self, run_id: str, progress: Progress | None = None) -> list[RerankRow]:
        """Process every chunk not yet finished; return all rows in query order.

        Up to ``AHEAD`` chunks are submitted before the oldest is waited for, so the workers
        rank the next chunks while this process compares and stores the last one."""
        spec = RerankSpec.model_validate_json(self.store.reranks.spec(run_id))
        items = self.queries(spec)
        finished = self.store.reranks.finished(run_id)
        done = sum(len(rows.splitlines()) for rows in finished.values())
        todo = [(index, at) for index, at in enumerate(range(0, len(items), spec.chunk))
                if index not in finished]
        submitted: deque[_Submitted] = deque()  # the chunks of todo from ``position`` on
        for position, (index, at) in enumerate(todo):
            for _, start in todo[position + len(submitted): position + AHEAD]:
                submitted.append(self._submit_chunk(spec, items[start: start + spec.chunk]))
            rows = self._finish_chunk(items[at: at + spec.chunk], at, submitted.popleft())
            encoded = b"".join(canonical_bytes(row) + b"\n" for row in rows)
            self.store.reranks.finish_chunk(run_id, index, encoded)
            finished[index] = encoded
            done += len(rows)
            if progress:
                progress(done, len(items))
        return [RerankRow.model_validate_json(line) for index in sorted(finished)
                for line in finished[index].splitlines()]

    def _submit(self, spec: RerankSpec, items: Sequence[Historical],
                target: bool) -> list[JobRef | None]:
        """Jobs for ``items`` on the target (or their baseline), grouped by corpus and engine."""
        refs: list[JobRef | None] = [None] * len(items)
        groups: dict[tuple[str, str, bytes], list[int]] = {}
        for i, item in enumerate(items):
            if not target and item.old_key is not None:
                continue  # a stored result is the baseline
            corpus = (spec.target_corpus or item.corpus_digest) if target else item.corpus_digest
            provider = (spec.provider or item.provider) if target else item.provider
            chosen = (spec.params if spec.provider else item.params) if target else item.params
            groups.setdefault((corpus, provider, canonical_bytes(chosen)), []).append(i)
        for (corpus, provider, encoded), members in groups.items():
            made = self.pipeline.submit_many([items[i].request for i in members], corpus,
                                             provider, orjson.loads(encoded), rerank=True)
            for i, ref in zip(members, made, strict=True):
                refs[i] = ref
        return refs

    def _wait(self, refs: Sequence[JobRef | None]) -> None:
        pending = sorted({r.job_id for r in refs if r is not None and r.state != "done"})
        deadline = time.monotonic() + self.wait_timeout
        look = 0
        while pending:
            if look % STATES_EVERY == 0 or self.store.results.count(pending) == len(pending):
                states = self.store.jobs.states_many(pending)  # no spec read
                pending = [j for j, state in zip(pending, states, strict=True)
                           if state is not None and state not in ("done", "failed")]
            look += 1
            if pending and time.monotonic() > deadline:
                raise RerankError(f"{len(pending)} job(s) not finished after "
                                  f"{self.wait_timeout:g} s (e.g. {pending[0]}); check that "
                                  "workers run, then resume the run with --resume")
            if pending:
                time.sleep(POLL)

    def _submit_chunk(self, spec: RerankSpec, items: Sequence[Historical]) -> _Submitted:
        """The jobs of a chunk on the target and, where no result is stored, its baseline."""
        return self._submit(spec, items, target=True), self._submit(spec, items, target=False)

    def _finish_chunk(self, items: Sequence[Historical], offset: int, jobs: _Submitted,
                      ) -> list[RerankRow]:
        """A submitted chunk's rows, once its jobs are done."""
        new_refs, old_refs = jobs
        self._wait([*new_refs, *old_refs])
        old_keys = [item.old_key or ref.job_id  # type: ignore[union-attr]
                    for item, ref in zip(items, old_refs, strict=True)]
        new_keys = [ref.job_id for ref in new_refs if ref is not None]
        old_bytes = self.store.results.get_many(old_keys)
        new_bytes = self.store.results.get_many(new_keys)
        rows = []
        for i, item in enumerate(items):
            old_ids, new_ids = hit_ids(old_bytes[i]), hit_ids(new_bytes[i])
            new_ref = new_refs[i]
            change: dict[str, Any] | None = None
            if old_ids is None or new_ids is None:
                status = "failed: " + ("no stored result for the old ranking" if old_ids is None
                                       else "the new job failed (see `rookhaven job KEY`)")
            else:
                status = "ok"
                change = compare_rankings(old_ids, new_ids, item.request.recall_budget).as_dict()
            rows.append(RerankRow(
                index=offset + i, query=item.request.query, seed=item.request.seed,
                recall_budget=item.request.recall_budget, old_key=old_keys[i],
                new_key=new_ref.job_id if new_ref else None, old_corpus=item.corpus_digest,
                new_corpus=new_ref.corpus_digest if new_ref else item.corpus_digest,
                status=status, change=change))
        return rows


def summarize(run_id: str, rows: Sequence[RerankRow]) -> RerankSummary:
    """Counts and means over the rows (means over the queries where each is defined)."""
    changes = [r.change for r in rows if r.change is not None]
    taus = [c["kendall_tau"] for c in changes if c["kendall_tau"] is not None]

    def mean(values: list[float]) -> float | None:
        return math.fsum(values) / len(values) if values else None

    unchanged = sum(bool(c["unchanged"]) for c in changes)
    return RerankSummary(
        run_id=run_id, queries=len(rows), compared=len(changes),
        failed=len(rows) - len(changes), unchanged=unchanged, changed=len(changes) - unchanged,
        mean_overlap_at_k=mean([c["overlap_at_k"] for c in changes]),
        mean_kendall_tau=mean(taus), mean_rbo=mean([c["rbo"] for c in changes]),
        documents_gained=sum(len(c["gained"]) for c in changes),
        documents_lost=sum(len(c["lost"]) for c in changes),
        max_displacement=max((c["max_displacement"] for c in changes), default=0),
    )
