"""Rookhaven: seeded, auditable, bit-reproducible retrieval.

The library API: ``retrieve(request, corpus, provider)`` for one request, ``Retriever`` to
index a corpus once and answer many, and the boundary types in ``rookhaven.models``.
"""

from .core.canonical import canonical_bytes
from .core.corpus import Corpus
from .core.engine import Retriever, retrieve
from .core.identity import CORE_VERSION, engine_identity, result_key
from .core.providers import Bm25Provider, TfCosineProvider
from .models import Audit, Document, RetrievalRequest, RetrievalResult, ScoredHit, Subquery

__version__ = "0.1.0"

__all__ = [
    "CORE_VERSION",
    "Audit",
    "Bm25Provider",
    "Corpus",
    "Document",
    "RetrievalRequest",
    "RetrievalResult",
    "Retriever",
    "ScoredHit",
    "Subquery",
    "TfCosineProvider",
    "canonical_bytes",
    "engine_identity",
    "result_key",
    "retrieve",
]

# The wheel's static embedding model, if installed, is read only when an engine asks for it.
from .embedding import offer_default as _offer_default

_offer_default()
