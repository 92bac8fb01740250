"""Where historical queries come from: stored results (via their job records) or a file."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Any

import orjson
from pydantic import ValidationError

from ..core.engines import engine_spec
from ..core.recipe import recipe_of
from ..errors import InputError
from ..models import RetrievalRequest
from ..store import Store
from .models import RerankSpec


@dataclass(frozen=True)
class Historical:
    """A query as it was first run: its request, corpus and engine, and its stored result."""

    request: RetrievalRequest
    corpus_digest: str
    provider: str
    params: dict[str, Any]
    old_key: str | None


def from_audits(store: Store, spec: RerankSpec) -> tuple[list[Historical], int]:
    """The stored results ``spec`` selects, oldest first, and how many had no complete recipe
    (no job record, and an audit that keeps some parameter only as a digest). Results that
    only a re-ranking run asked for are not history: they were made for its comparison."""
    corpus = store.corpora.resolve(spec.corpus) if spec.corpus else None
    scanned = (k for k, _ in store.audits.scan(corpus=corpus, since=spec.since, until=spec.until))
    found: list[Historical] = []
    skipped = taken = 0
    while page := list(islice(scanned, 1000)):
        page = [k for k, made in zip(page, store.reranks.only_made(page), strict=True)
                if not made]
        if spec.limit is not None:
            page = page[: spec.limit - taken]
        taken += len(page)
        for key, job in zip(page, store.jobs.get_many(page), strict=True):
            if job is not None:
                found.append(Historical(request=job.request, corpus_digest=job.corpus_digest,
                                        provider=job.provider, params=job.params, old_key=key))
                continue
            # No job record: the audit is the recipe, when it holds every parameter.
            recipe = recipe_of(orjson.loads(store.results.audit(key)))
            if recipe is None or recipe.params is None:
                skipped += 1
                continue
            found.append(Historical(request=recipe.request, corpus_digest=recipe.corpus_digest,
                                    provider=recipe.engine.ref, params=recipe.params,
                                    old_key=key))
        if spec.limit is not None and taken >= spec.limit:
            break
    return found, skipped


def from_requests(store: Store, spec: RerankSpec, default_provider: str) -> list[Historical]:
    """The file's requests, each first run over the baseline corpus, by the engine its line
    names (``engine``), else by ``default_provider``."""
    if spec.baseline is None:
        raise InputError("re-ranking requests from a file needs --baseline REF: the corpus "
                         "the requests were first run against")
    digest = store.corpora.resolve(spec.baseline)
    found = []
    for number, raw in enumerate(spec.requests, start=1):
        fields = dict(raw)
        engine = fields.pop("engine", default_provider)
        try:
            request = RetrievalRequest.model_validate(fields)
            provider = engine_spec(str(engine)).ref
        except (ValidationError, InputError) as exc:
            raise InputError(f"request {number}: {exc}") from None
        found.append(Historical(request=request, corpus_digest=digest, provider=provider,
                                params={}, old_key=None))
    return found
