"""Produce a golden case's bytes through the public CLI path (file loading included)."""

from __future__ import annotations

from rookhaven import RetrievalRequest, canonical_bytes, retrieve
from rookhaven.corpusfile import load_documents

from .cases import CORPORA, Case


def render(case: Case, engine: str) -> bytes:
    """The canonical result bytes of ``case`` under ``engine``."""
    documents = load_documents(CORPORA / case.corpus, max_docs=100_000)
    request = RetrievalRequest(query=case.query, recall_budget=case.budget, seed=case.seed,
                               decompose=case.decompose)
    return canonical_bytes(retrieve(request, documents, engine))
