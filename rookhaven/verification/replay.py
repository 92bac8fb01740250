"""Replay one stored result with the same Executor the workers run, and classify the outcome.

The recipe (engine, request, corpus digest, parameters) comes from the stored audit itself
(``core.recipe``): every released engine stays installed, so each result is replayed by the
engine that made it, and the key its recipe gives must be the key it is stored under.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from itertools import islice
from typing import Any

import orjson

from ..collector import collector_paused
from ..config import Settings
from ..core.canonical import audit_of, embeds
from ..core.engine import Retriever
from ..core.engines import engine_of, engine_ref
from ..core.identity import result_key
from ..core.jsondiff import hits_first
from ..core.recipe import Recipe, recipe_of
from ..errors import ModelUnavailableError, NotFoundError
from ..pipeline import Executor, RetrieverCache
from ..store import Store
from ..store.results import audits_in
from .frames import Frames
from .models import Verdict
from .provenance import attributed


def _parse(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def where_bytes_differ(stored: bytes, replayed: bytes) -> str:
    """The first differing field, or the byte offset when the stored bytes are not JSON."""
    a, b = _parse(stored), _parse(replayed)
    if isinstance(a, dict) and isinstance(b, dict):
        found = hits_first(a, b)
        if found:
            return found
    offset = next((i for i, (x, y) in enumerate(zip(stored, replayed, strict=False)) if x != y),
                  min(len(stored), len(replayed)))
    return f"byte {offset} (stored bytes are {'not JSON' if a is None else 'reordered'})"


class Replayer:
    """Replays stored results by key against one store."""

    def __init__(self, store: Store, settings: Settings,
                 cache: RetrieverCache | None = None) -> None:
        self.store = store
        self.executor = Executor(store, settings, cache=cache)
        self._corpora: set[str] = set()  # digests seen stored (a missing one is asked again)
        self._frames = Frames()

    def _completed(self, key: str, found: Recipe) -> Recipe | None:
        """``found`` with the parameters its job record holds (None without the record)."""
        try:
            return replace(found, params=self.store.jobs.get(key).params)
        except NotFoundError:
            return None

    def replay_many(self, keys: Iterable[str], page: int = 500) -> Iterator[Verdict]:
        """``replay`` of each key, in order, reading results a page at a time;
        the next page is asked for before this one is replayed, so Redis prepares it while
        the engine runs (``store.ahead``). ``keys`` is consumed a page ahead, so it may be a
        scan of any length.

        A page is replayed in three passes: every recipe is read, then every engine call
        runs, back to back, then every comparison. The engine is the most of a replay, and
        it ran 15-25% slower with an audit's parsing and a comparison between two of its
        calls than in a loop of calls alone (ADR 0035)."""
        remaining = iter(keys)
        pages = iter(lambda: list(islice(remaining, page)), [])
        chunk = next(pages, None)
        pending = None if chunk is None else self.store.results.read_ahead(chunk)
        try:
            while chunk is not None:
                assert pending is not None  # asked for with its page
                (results,) = pending.replies()
                following = next(pages, None)
                pending = None if following is None else self.store.results.read_ahead(following)
                with collector_paused():
                    verdicts = self._replay_page(chunk, results, audits_in(results))
                yield from verdicts
                chunk = following
        finally:
            if pending is not None:
                pending.cancel()

    def _replay_page(self, chunk: list[str], results: list[bytes | None],
                     audits: list[bytes | None]) -> list[Verdict]:
        prepared: list[Verdict | _Ready] = []
        for key, result, audit in zip(chunk, results, audits, strict=True):
            ready = self._quick(key, result, audit) or self._prepare(
                key, None if result is None or audit is None else (result, audit))
            if isinstance(ready, _Ready) and ready.label is not None:  # read the full way
                self._frames.learn(ready.label, ready.recipe, ready.retriever.config,
                                   ready.retriever.config_digest)
            prepared.append(ready)
        replayed = {i: p.retriever.result_bytes(p.recipe.request)[0]
                    for i, p in enumerate(prepared) if not isinstance(p, Verdict)}
        verdicts = [ready if isinstance(ready, Verdict) else _judge(ready, replayed[i])
                    for i, ready in enumerate(prepared)]
        # A quick recipe decides matches only; anything else is replayed the full way, for
        # the verdict and the message a lone replay gives.
        return attributed(self.store, [
            self._replay_one(v.key, (p.stored, p.stored_audit))
            if v.outcome != "match" and isinstance(p, _Ready) and p.quick else v
            for p, v in zip(prepared, verdicts, strict=True)])

    def _quick(self, key: str, stored: bytes | None, stored_audit: bytes | None
               ) -> _Ready | None:
        """What ``_prepare`` gives, for a result framed as Rookhaven frames one whose
        configuration was met before (``frames``); None sends it the full way."""
        if stored is None or stored_audit is None or not embeds(stored, stored_audit):
            return None
        found = self._frames.recipe(stored_audit)
        if found is None:
            return None
        recipe, config_digest = found
        retriever = self.executor.cache.peek(recipe.corpus_digest, config_digest)
        if retriever is None or result_key(recipe.request, recipe.corpus_digest,
                                           retriever.identity) != key:
            return None
        return _Ready(key, stored, stored_audit, recipe.engine.ref, recipe, retriever,
                      quick=True)

    def replay(self, key: str, stored_bytes: tuple[bytes, bytes] | None = None) -> Verdict:
        """Replay the result stored under ``key`` with the engine its audit names
        (``stored_bytes``: the result and the audit it frames, if already read); an alarm
        about the stored bytes says who stored them (``provenance``)."""
        return attributed(self.store, [self._replay_one(key, stored_bytes)])[0]

    def _replay_one(self, key: str, stored_bytes: tuple[bytes, bytes] | None) -> Verdict:
        ready = self._prepare(key, stored_bytes)
        if isinstance(ready, Verdict):
            return ready
        return _judge(ready, ready.retriever.result_bytes(ready.recipe.request)[0])

    def _prepare(self, key: str, stored_bytes: tuple[bytes, bytes] | None) -> Verdict | _Ready:
        """Everything before the engine call: the verdict when there is nothing to replay
        (or the recipe is not this key's), else what the call and the comparison need."""
        if stored_bytes is None:
            try:
                stored = self.store.results.get(key)
            except NotFoundError as exc:
                return Verdict(key=key, outcome="missing-result", detail=str(exc))
            found_audit = audit_of(stored)
            if found_audit is None:
                return Verdict(key=key, outcome="mismatch", where="audit",
                               detail="the stored bytes hold no audit record: they are not a "
                                      "result Rookhaven wrote")
            stored_bytes = (stored, found_audit)
        stored, stored_audit = stored_bytes
        audit = _parse(stored_audit)
        if not isinstance(audit, dict) or "engine" not in audit:  # every audit names one
            return Verdict(key=key, outcome="mismatch", where="audit.engine",
                           detail="the stored result's audit names no engine: it is not a "
                                  "result Rookhaven wrote")
        engine = engine_of(audit.get("engine"))
        stored_engine = engine.ref if engine is not None else _engine(audit)
        if engine is None:
            return Verdict(key=key, outcome="unreplayable", stored_engine=stored_engine,
                           detail=f"made by engine {stored_engine}, which this install does not "
                                  "have; run the verifier from a Rookhaven release that has it")
        found = recipe_of(audit, engine)
        recipe = found if found is None or found.params is not None else self._completed(
            key, found)
        if recipe is None or recipe.params is None:
            return Verdict(key=key, outcome="no-recipe", stored_engine=stored_engine,
                           detail="the audit cannot rebuild the request or the parameters, "
                                  "and no job record holds them")
        digest, ref = recipe.corpus_digest, recipe.engine.ref
        try:
            if digest not in self._corpora:  # stored by digest: immutable
                self.store.corpora.entry(digest)
                self._corpora.add(digest)
        except NotFoundError as exc:
            return Verdict(key=key, outcome="missing-corpus", corpus_digest=digest,
                           stored_engine=stored_engine, detail=str(exc))
        try:
            retriever = self.executor.cache.get(digest, ref, recipe.params)
        except ModelUnavailableError as exc:  # never a mismatch: this install cannot tell
            return Verdict(key=key, outcome="unreplayable", corpus_digest=digest,
                           stored_engine=stored_engine, detail=str(exc))
        recomputed = result_key(recipe.request, digest, retriever.identity)
        if recomputed != key:
            return Verdict(key=key, outcome="wrong-key", corpus_digest=digest,
                           stored_engine=stored_engine, current_engine=ref,
                           where="result key",
                           detail=f"its recipe gives the key {recomputed}: these bytes were "
                                  "stored under another result's key")
        # A recipe completed from its job record must not teach ``frames``: another key
        # with the same configuration has a record of its own (or none).
        return _Ready(key, stored, stored_audit, stored_engine, recipe, retriever,
                      label=audit.get("engine") if recipe is found else None)


@dataclass(frozen=True, slots=True)
class _Ready:
    """A stored result whose recipe checked out: what its replay needs."""

    key: str
    stored: bytes
    stored_audit: bytes
    stored_engine: str | None
    recipe: Recipe
    retriever: Retriever
    quick: bool = False  # the recipe came from ``frames``: it decides a match only
    label: Any = None  # the audit's engine, where all its recipe came from the audit


def _judge(ready: _Ready, result: bytes) -> Verdict:
    """The verdict on ``ready`` replayed as ``result`` (whose bytes frame its audit's, as
    the stored result's frame the stored audit: equal results, equal audits)."""
    key, digest, ref = ready.key, ready.recipe.corpus_digest, ready.recipe.engine.ref
    if result == ready.stored:
        # Validated, not model_construct: pydantic-core checks these five strings in
        # 1.5 us, model_construct's Python loop 6 (a replay spends ~70 us beside the engine).
        return Verdict(key=key, outcome="match", corpus_digest=digest,
                       stored_engine=ready.stored_engine, current_engine=ref)
    return Verdict(key=key, corpus_digest=digest, stored_engine=ready.stored_engine,
                   current_engine=ref, outcome="mismatch",
                   where=where_bytes_differ(ready.stored, result))


def _engine(audit: Any) -> str | None:
    label = audit.get("engine") if isinstance(audit, dict) else None
    return engine_ref(label) if isinstance(label, dict) else None
