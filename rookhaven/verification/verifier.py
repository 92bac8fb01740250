"""Verification runs: choose stored results, replay each, record the run, raise alarms.

A sample is drawn with a recorded seed from the audit index (optionally stratified by
corpus or by month stored), so the same run can be drawn again. Alarms are logged at
ERROR, appended to the alerts stream and counted.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime

from ..config import Settings
from ..core.sampling import sample_keys, stratified_sample
from ..errors import NotFoundError
from ..store import Store
from ..transparency.mirror import Mirror
from .logcheck import PinnedCheckpoint, check_log
from .models import Selection, Verdict, VerificationRun
from .replay import Replayer

log = logging.getLogger("rookhaven.verify")
STORE = "store"  # the key a verdict about the whole store is filed under


def _month(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m")


def run_id_at(started: float) -> str:
    """The id of a verification run started at ``started`` (Unix seconds)."""
    return f"verify-{datetime.fromtimestamp(started, UTC):%Y%m%dT%H%M%S.%fZ}"


def check_keys(store: Store, keys: Sequence[str]) -> None:
    """NotFoundError for the first of ``keys`` that nothing was ever stored under (no
    result, audit, job record or log leaf): a mistyped key is bad input, not an alarm that
    pages someone. An erased result keeps its log leaf, so it still alarms."""
    for key in keys:
        if not store.ever_stored(key):
            raise NotFoundError(f"nothing was ever stored under {key} (no result, audit, job "
                                "record or log leaf): check the key")


class Verifier:
    """Runs verifications against one store with the workers' engine."""

    def __init__(self, store: Store, settings: Settings,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.replayer = Replayer(store, settings)
        self.clock = clock
        # The log's copy outside Redis, if there is one: the log checks then read it.
        self.mirror = (Mirror(settings.log_mirror_dir) if settings.log_mirror_dir is not None
                       else None)

    def choose(self, selection: Selection) -> tuple[list[str], str | None]:
        """The keys ``selection`` names, and the sample seed used (None if not sampled)."""
        if selection.keys:
            return list(dict.fromkeys(selection.keys)), None
        if selection.everything or selection.sample is None:  # (the second for the type)
            return list(self._everything(selection)[0]), None
        corpus = (self.store.corpora.resolve(selection.corpus)
                  if selection.corpus is not None else None)
        rows = list(self.store.audits.scan(corpus=corpus))
        seed = selection.seed or f"verify-{self.clock():.0f}"
        if selection.stratify == "none":
            return sample_keys([k for k, _ in rows], selection.sample, seed), seed
        strata: dict[str, list[str]] = {}
        if selection.stratify == "age":
            for key, stored in rows:
                strata.setdefault(_month(stored), []).append(key)
        else:
            # From the registry, not the entries: a corpus whose data is gone still has
            # audits, and those must be drawn so the missing corpus raises its alarm.
            for digest in self.store.corpora.digests():
                if corpus is None or digest == corpus:
                    strata[digest] = [k for k, _ in self.store.audits.scan(corpus=digest)]
        return stratified_sample(strata, selection.sample, seed), seed

    def _population(self, selection: Selection) -> list[Verdict]:
        """An alarm when there is nothing to check, or fewer results than were stored."""
        # Stored first: a result stored between the two reads (workers run on) then counts
        # in both, and only a result gone since makes ``held`` fall short.
        stored = max(self.store.verifications.counters().get("results_stored", 0),
                     sum(log.size() for log in self.store.logs))
        held = self.store.audits.count()
        if held == 0:
            detail = ("the store holds no result to verify" + (
                f", though {stored} were stored: they are gone (a Redis restarted empty?)"
                if stored else "; if results were stored here before, they are gone "
                "(a Redis restarted empty?), and a pinned checkpoint would say how many"))
            return [Verdict(key=STORE, outcome="nothing-checked", detail=detail)]
        if held < stored and selection.corpus is None:
            return [Verdict(key=STORE, outcome="results-missing",
                            detail=f"the store holds {held} results, fewer than the {stored} "
                                   "its counters and its log say were stored: "
                                   f"{stored - held} {'is' if stored - held == 1 else 'are'} "
                                   "gone")]
        return []

    def _everything(self, selection: Selection) -> tuple[Iterator[str], int]:
        """The keys of every result ``selection`` covers (all, or one corpus's) that was
        stored when the run began, oldest first, as a scan; and how many there are (a
        result stored in that same millisecond may be checked beyond the count)."""
        corpus = (self.store.corpora.resolve(selection.corpus)
                  if selection.corpus is not None else None)
        newest = self.store.audits.newest(corpus=corpus)
        if newest is None:
            return iter(()), 0
        return ((key for key, _ in self.store.audits.scan(corpus=corpus, until=newest)),
                self.store.audits.count(corpus=corpus, until=newest))

    def run(self, selection: Selection,
            progress: Callable[[int, int], None] | None = None,
            pinned: PinnedCheckpoint | None = None,
            run_id: str | None = None, asked_by: str | None = None) -> VerificationRun:
        """Check the chosen results (and, with a ``pinned`` checkpoint or a mirror, the log
        first), record the run in the store under ``run_id`` (default: one made from the
        start time, as ``run_id_at`` makes it) with the token that ``asked_by`` it, and
        return it."""
        started = self.clock()
        if selection.everything:
            # Streamed a page at a time and not listed in the record (ADR 0031): a run over
            # the whole history holds one page of keys, whatever the history's size.
            keys, total = self._everything(selection)
            listed: list[str] = []
            seed: str | None = None
        else:
            listed, seed = self.choose(selection)
            keys, total = iter(listed), len(listed)
        # Counted before the check reads it: beat may grow the mirror while the run goes on.
        mirror_leaves = (self.mirror.size_all() if self.mirror is not None
                         and self.mirror.directory.is_dir() else None)
        verdicts: list[Verdict] = (check_log(self.store, pinned, mirror=self.mirror)
                                   if pinned is not None or self.mirror is not None else [])
        if not selection.keys:
            # Store-wide alarms (nothing to check, results gone) are alarms like any other:
            # each gets its line at ERROR, so the log agrees with the run's alarm count.
            verdicts += self._population(selection)
        for verdict in verdicts:
            log.error("verification alarm: %s for %s: %s", verdict.outcome, verdict.key,
                      verdict.detail, extra={"key": verdict.key, "outcome": verdict.outcome})
        matched: dict[str, int] = {}
        checked = 0
        for verdict in self.replayer.replay_many(keys):
            checked += 1
            key = verdict.key
            if verdict.outcome == "match":
                engine = verdict.current_engine or "-"
                matched[engine] = matched.get(engine, 0) + 1
            else:
                verdicts.append(verdict)
            if verdict.alarm:
                log.error("verification alarm: %s for %s at %s", verdict.outcome, key,
                          verdict.where or "-", extra={"key": key, "outcome": verdict.outcome,
                                                      "where": verdict.where})
            if progress:
                progress(checked, max(total, checked))
        count = {o: sum(v.outcome == o for v in verdicts) for o in ("mismatch", "drift")}
        run = VerificationRun(
            run_id=run_id or run_id_at(started),
            started=started, finished=self.clock(), selection=selection, asked_by=asked_by,
            sample_seed=seed,
            keys=listed, checked=checked, matched=sum(matched.values()),
            mismatched=count["mismatch"], drift=count["drift"],
            missing=sum(v.outcome.startswith("missing")
                        or v.outcome in ("no-recipe", "unreplayable") for v in verdicts),
            alarms=sum(v.alarm for v in verdicts), verdicts=verdicts,
            matched_by_engine=dict(sorted(matched.items())),
            mirror_leaves=mirror_leaves,
        )
        self.store.verifications.record(run)
        log.info("verification run %s: %d checked, %d matched, %d alarms, %d drift",
                 run.run_id, run.checked, run.matched, run.alarms, run.drift,
                 extra={"run": run.run_id, "alarms": run.alarms})
        return run
