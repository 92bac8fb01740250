"""Replay one stored result with the same Executor the workers run, and classify the outcome.

The recipe (request, corpus digest, provider, params) comes from the job record; the stored
audit says which engine made the bytes. A result made by another engine version is drift,
not an alarm: its key was computed for that engine, so the bytes are not expected to match.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..config import Settings
from ..core.canonical import canonical_bytes
from ..core.jsondiff import hits_first
from ..errors import NotFoundError
from ..models import RetrievalRequest
from ..pipeline import Executor, RetrieverCache
from ..store import JobSpec, Store
from .models import Verdict


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

    def recipe(self, key: str, audit: dict[str, Any]) -> JobSpec | None:
        """How ``key`` was made: its job record, else what the audit alone can tell."""
        try:
            job = self.store.jobs.get(key)
        except NotFoundError:
            job = None
        if job is not None:
            return JobSpec(key=key, request=job.request, corpus_digest=job.corpus_digest,
                           provider=job.provider, params=job.params)
        try:
            request = RetrievalRequest(query=audit["query"], recall_budget=audit["recall_budget"],
                                       seed=audit["seed"], decompose=audit["decompose"])
            provider = audit["config"]["provider"]
            _, identity = self.executor.cache.provider(provider, {})
        except (KeyError, TypeError, ValueError):
            return None
        if identity.config_digest != audit.get("config_digest"):
            return None  # made with non-default parameters that only the job record held
        return JobSpec(key=key, request=request, corpus_digest=audit["corpus_digest"],
                       provider=provider, params={})

    def replay(self, key: str) -> Verdict:
        """Replay the result stored under ``key`` and say how it compares."""
        try:
            stored = self.store.results.get(key)
            stored_audit = self.store.results.audit(key)
        except NotFoundError as exc:
            return Verdict(key=key, outcome="missing-result", detail=str(exc))
        audit = _parse(stored_audit)
        embedded = _parse(stored)
        # The result embeds its audit: both copies must agree before the audit is trusted,
        # or an edited engine version could pass tampering off as drift.
        if not isinstance(embedded, dict) or canonical_bytes(embedded.get("audit")) != stored_audit:
            where = (where_bytes_differ(canonical_bytes(embedded.get("audit")), stored_audit)
                     if isinstance(embedded, dict) else where_bytes_differ(stored, b""))
            return Verdict(key=key, outcome="mismatch", stored_engine=_engine(audit),
                           where=f"audit copies disagree at {where}",
                           detail="the result's embedded audit differs from the stored audit")
        spec = self.recipe(key, audit if isinstance(audit, dict) else {})
        if spec is None:
            return Verdict(key=key, outcome="no-recipe",
                           detail="no job record, and the audit alone cannot rebuild the request")
        stored_engine = _engine(audit)
        try:
            self.store.corpora.entry(spec.corpus_digest)
        except NotFoundError as exc:
            return Verdict(key=key, outcome="missing-corpus", corpus_digest=spec.corpus_digest,
                           stored_engine=stored_engine, detail=str(exc))
        _, identity = self.executor.cache.provider(spec.provider, spec.params)
        current = f"{identity.engine.name} {identity.engine.version}"
        base = {"key": key, "corpus_digest": spec.corpus_digest, "stored_engine": stored_engine,
                "current_engine": current}
        if stored_engine != current or (isinstance(audit, dict)
                                        and audit.get("config_digest") != identity.config_digest):
            retriever = self.executor.cache.get(spec.corpus_digest, spec.provider, spec.params)
            replayed = canonical_bytes(retriever.result_data(spec.request))
            changed = replayed != stored
            return Verdict(**base, outcome="drift", changed=changed,
                           where=where_bytes_differ(stored, replayed) if changed else None)
        result, replayed_audit = self.executor.compute(spec)
        if result == stored and replayed_audit == stored_audit:
            return Verdict(**base, outcome="match")
        if result != stored:
            return Verdict(**base, outcome="mismatch", where=where_bytes_differ(stored, result))
        return Verdict(**base, outcome="mismatch",
                       where="audit record: " + where_bytes_differ(stored_audit, replayed_audit))


def _engine(audit: Any) -> str | None:
    try:
        return f"{audit['engine']['name']} {audit['engine']['version']}"
    except (KeyError, TypeError):
        return None
