"""The registry of scoring providers, by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...errors import ConfigError, UnknownProviderError
from ..analyzer import Analyzer
from .base import ScoringIndex, ScoringProvider
from .tfcosine import TfCosineProvider

__all__ = ["PROVIDERS", "ScoringIndex", "ScoringProvider", "TfCosineProvider", "make_provider"]


def _tfcosine(**params: Any) -> ScoringProvider:
    analyzer_params = {k: params.pop(k) for k in ("stopwords", "stemmer") if k in params}
    if params:
        raise ConfigError(f"tfcosine takes no parameters {sorted(params)}; "
                          "it accepts only stopwords and stemmer")
    return TfCosineProvider(analyzer=Analyzer(**analyzer_params))


PROVIDERS: dict[str, Callable[..., ScoringProvider]] = {
    "tfcosine": _tfcosine,
}


def make_provider(name: str, **params: Any) -> ScoringProvider:
    """The provider registered under ``name``, built with ``params``."""
    try:
        factory = PROVIDERS[name]
    except KeyError:
        known = ", ".join(sorted(PROVIDERS))
        raise UnknownProviderError(f"unknown provider {name!r}; choose one of: {known}") from None
    return factory(**params)
