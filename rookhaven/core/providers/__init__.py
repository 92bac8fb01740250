"""The registry of scoring providers, by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...errors import ConfigError, UnknownProviderError
from ..analyzer import Analyzer
from .base import ScoringIndex, ScoringProvider
from .bm25 import Bm25Provider
from .tfcosine import TfCosineProvider

__all__ = ["PROVIDERS", "Bm25Provider", "ScoringIndex", "ScoringProvider", "TfCosineProvider",
           "make_provider"]

_BM25_PARAMS = ("k1", "b", "prefix_weight", "prefix_min_len", "prefix_max_terms", "coverage",
                "synonym_weight", "synonyms", "field_weights")


def _tfcosine(**params: Any) -> ScoringProvider:
    analyzer_params = {k: params.pop(k) for k in ("stopwords", "stemmer") if k in params}
    if params:
        raise ConfigError(f"tfcosine takes no parameters {sorted(params)}; "
                          "it accepts only stopwords and stemmer")
    return TfCosineProvider(analyzer=Analyzer(**analyzer_params))


def _bm25(**params: Any) -> ScoringProvider:
    analyzer_params = {k: params.pop(k) for k in ("stopwords", "stemmer") if k in params}
    unknown = sorted(set(params) - set(_BM25_PARAMS))
    if unknown:
        raise ConfigError(f"bm25 has no parameters {unknown}; it accepts stopwords, stemmer, "
                          f"{', '.join(_BM25_PARAMS)}")
    return Bm25Provider(analyzer=Analyzer(**{"stemmer": "english", **analyzer_params}), **params)


PROVIDERS: dict[str, Callable[..., ScoringProvider]] = {
    "tfcosine": _tfcosine,
    "bm25": _bm25,
}


def make_provider(name: str, **params: Any) -> ScoringProvider:
    """The provider registered under ``name``, built with ``params``."""
    try:
        factory = PROVIDERS[name]
    except KeyError:
        known = ", ".join(sorted(PROVIDERS))
        raise UnknownProviderError(f"unknown provider {name!r}; choose one of: {known}") from None
    return factory(**params)
