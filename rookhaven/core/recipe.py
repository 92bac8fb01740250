"""What an audit record alone says about how its result was made: the recipe to replay it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..models import RetrievalRequest
from .engines import EngineSpec, engine_of


@dataclass(frozen=True)
class Recipe:
    """The engine, request, corpus and parameters an audit records.

    ``params`` is None when the engine recorded some parameter only as a digest (bm25@1's
    synonyms): then only the job record can complete the recipe.
    """

    engine: EngineSpec
    request: RetrievalRequest
    corpus_digest: str
    params: dict[str, Any] | None


def recipe_of(audit: Mapping[str, Any], engine: EngineSpec | None = None) -> Recipe | None:
    """The recipe in ``audit`` (made by ``engine``, when the caller already looked it up),
    or None if it names no installed engine or is malformed."""
    engine = engine or engine_of(audit.get("engine") or {})
    if engine is None:
        return None
    try:
        request = request_of(audit)
        corpus_digest = str(audit["corpus_digest"])
    except (KeyError, TypeError, ValueError):
        return None
    return Recipe(engine, request, corpus_digest,
                  engine.params_from_config(audit.get("config") or {}))


def request_of(audit: Mapping[str, Any]) -> RetrievalRequest:
    """The request ``audit`` records; KeyError, TypeError or ValueError if it records none."""
    return RetrievalRequest(query=audit["query"], recall_budget=audit["recall_budget"],
                            seed=audit["seed"], decompose=audit["decompose"])
