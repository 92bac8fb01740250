"""The registry of scoring providers, by name."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ...errors import ConfigError, UnknownProviderError
from ..analyzer import Analyzer
from .base import ScoringIndex, ScoringProvider, TopKIndex
from .bm25 import Bm25Provider
from .tfcosine import TfCosineProvider

__all__ = ["PROVIDERS", "Bm25Provider", "ScoringIndex", "ScoringProvider", "TfCosineProvider",
           "TopKIndex", "make_provider", "provider_parameters"]

ANALYZER_PARAMS = tuple(f.name for f in dataclasses.fields(Analyzer) if f.init)
# Fields a caller may not set by parameter: they name the semantics or are built from others.
_FIXED = ("analyzer", "name", "version", "scale", "merge")


def _tunable(cls: type[Any]) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.init and f.name not in _FIXED)


def _split(provider: str, cls: type[Any], params: dict[str, Any]) -> dict[str, Any]:
    """The analyzer's parameters out of ``params``; the rest must be ``cls``'s tunables."""
    analyzer = {k: params.pop(k) for k in ANALYZER_PARAMS if k in params}
    unknown = sorted(set(params) - set(_tunable(cls)))
    if unknown:
        raise ConfigError(f"{provider} has no parameter(s) {', '.join(unknown)}; it accepts "
                          f"{', '.join(provider_parameters(provider))}")
    return analyzer


def _tfcosine(**params: Any) -> ScoringProvider:
    analyzer = _split("tfcosine", TfCosineProvider, params)
    return TfCosineProvider(analyzer=Analyzer(**analyzer), **params)


def _bm25(**params: Any) -> ScoringProvider:
    analyzer = _split("bm25", Bm25Provider, params)
    return Bm25Provider(analyzer=Analyzer(**{"stemmer": "english", **analyzer}), **params)


PROVIDERS: dict[str, tuple[Callable[..., ScoringProvider], type[Any]]] = {
    "tfcosine": (_tfcosine, TfCosineProvider),
    "bm25": (_bm25, Bm25Provider),
}


def _entry(name: str) -> tuple[Callable[..., ScoringProvider], type[Any]]:
    try:
        return PROVIDERS[name]
    except KeyError:
        known = ", ".join(sorted(PROVIDERS))
        raise UnknownProviderError(f"unknown provider {name!r}; choose one of: {known}") from None


def provider_parameters(name: str) -> tuple[str, ...]:
    """Every parameter ``make_provider(name, ...)`` accepts, analyzer's first."""
    return ANALYZER_PARAMS + _tunable(_entry(name)[1])


def make_provider(name: str, **params: Any) -> ScoringProvider:
    """The provider registered under ``name``, built with ``params``."""
    return _entry(name)[0](**params)
