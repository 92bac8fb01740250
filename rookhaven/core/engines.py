"""The engine registry: every released engine version, frozen, by ``name@version``.

A released version never changes: its analysis pins (Unicode version, stemmer), formula,
merge semantics and parameter defaults stay as they were, pinned by its goldens under
``tests/golden/<name>@<version>/``. Changing ranking behaviour means adding a version here
(docs/adr/0012-engine-registry.md). A bare name means that provider's default version.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, UnknownProviderError
from ..models import Engine
from .analyzer import STEMMERS, Analyzer
from .identity import CORE_VERSION
from .parameters import check
from .providers.base import ScoringProvider
from .providers.bm25 import COVERAGE_BITS, WEIGHT_BITS, Bm25Provider
from .providers.bm25prf import Bm25PrfProvider
from .providers.bm25sel import Bm25SelectiveProvider
from .providers.hybrid import HybridProvider
from .providers.tfcosine import TfCosineProvider
from .semantic.shelf import SHELF

ANALYZER_PARAMS = ("stopwords", "stemmer")
# Provider fields no parameter may set: they name the semantics or are fixed by the version.
_FIXED = ("analyzer", "name", "version", "scale", "merge", "record_parameters")


def _tunable(cls: type[Any]) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.init and f.name not in _FIXED)


@dataclass(frozen=True)
class EngineSpec:
    """One released engine version: what it pins and how to build it from parameters."""

    name: str
    version: str
    provider: type[Any]
    summary: str
    golden: str  # sha256 of tests/golden/<ref>/MANIFEST.json: the bytes this version pinned
    unicode: str = "14.0"
    default_stemmer: str = "none"
    # Engines released before pinning record the config they always did (no pins, no
    # parameters); their pins are stated here instead, and their parameters are read
    # back from the recorded config.
    records_pins: bool = True
    # Analysis parameters beyond stop words and stemmer that this version takes, and their
    # defaults: (name, default) pairs.
    analysis: tuple[tuple[str, str], ...] = ()
    # Released (replayable, selectable by name@version) but not what a bare name means:
    # a version that has not met the targets to become its provider's default.
    preview: bool = False

    @property
    def ref(self) -> str:
        """``name@version``, how users and job records name it."""
        return f"{self.name}@{self.version}"

    @property
    def label(self) -> Engine:
        """What its audits record as the engine."""
        return Engine(name=self.name, version=f"{CORE_VERSION}.{self.version}")

    @property
    def stemmer_algorithm(self) -> str:
        """The stemming algorithm of its default analysis."""
        return STEMMERS[self.default_stemmer] or "none"

    def parameters(self) -> tuple[str, ...]:
        """Every parameter ``build`` accepts, the analyzer's first."""
        return ANALYZER_PARAMS + tuple(n for n, _ in self.analysis) + _tunable(self.provider)

    def build(self, **params: Any) -> ScoringProvider:
        """The provider of this version with ``params`` (each one it accepts, or an error)."""
        unknown = sorted(set(params) - set(self.parameters()))
        if unknown:
            raise ConfigError(f"{self.ref} has no parameter(s) {', '.join(unknown)}; it "
                              f"accepts {', '.join(self.parameters())}")
        check(self.ref, self.provider, params,
              ANALYZER_PARAMS + tuple(n for n, _ in self.analysis))
        analyzer = Analyzer(stopwords=params.pop("stopwords", "english-v1"),
                            stemmer=params.pop("stemmer", self.default_stemmer),
                            unicode=self.unicode, record_pins=self.records_pins,
                            **{name: params.pop(name, default)
                               for name, default in self.analysis})
        extra = {} if not self.records_pins else {"record_parameters": True}
        provider: ScoringProvider = self.provider(analyzer=analyzer, version=self.version,
                                                  **extra, **params)
        return provider

    def pinned(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``params`` with each default this install decides made explicit (a hybrid
        engine's model: ROOKHAVEN_EMBEDDING_MODEL may differ between hosts), so a job
        names the same engine on every worker."""
        if "model" in _tunable(self.provider) and not params.get("model"):
            return {**params, "model": SHELF.default_digest()}
        return dict(params)

    def params_from_config(self, config: Mapping[str, Any]) -> dict[str, Any] | None:
        """The parameters a recorded config was built with, or None if it cannot tell."""
        try:
            return _READERS[self.provider, self.records_pins](config["params"])
        except (KeyError, TypeError, ValueError):
            return None


def _given(params: Mapping[str, Any]) -> dict[str, Any]:
    return dict(params["parameters"])


def _bm25_v1(params: Mapping[str, Any]) -> dict[str, Any] | None:
    if params["synonyms"]["count"]:
        return None  # recorded only as a digest; the job record held them
    analyzer = params["analyzer"]
    return {"stopwords": analyzer["stopwords"], "stemmer": analyzer["stemmer"],
            "k1": params["k1"], "b": params["b"],
            "prefix_weight": params["prefix_weight"] / (1 << WEIGHT_BITS),
            "prefix_min_len": params["prefix_min_len"],
            "prefix_max_terms": params["prefix_max_terms"],
            "coverage": params["coverage"] / (1 << COVERAGE_BITS),
            "synonym_weight": params["synonym_weight"] / (1 << WEIGHT_BITS),
            "field_weights": dict(params["field_weights"])}


def _tfcosine_v1(params: Mapping[str, Any]) -> dict[str, Any] | None:
    analyzer = params["analyzer"]
    return {"stopwords": analyzer["stopwords"], "stemmer": analyzer["stemmer"]}


_READERS: dict[tuple[type[Any], bool], Callable[[Mapping[str, Any]], dict[str, Any] | None]] = {
    (Bm25Provider, False): _bm25_v1,
    (Bm25Provider, True): _given,
    (TfCosineProvider, False): _tfcosine_v1,
    (TfCosineProvider, True): _given,
    (Bm25PrfProvider, True): _given,
    (Bm25SelectiveProvider, True): _given,
    (HybridProvider, True): _given,
}

ENGINES: tuple[EngineSpec, ...] = (
    EngineSpec("tfcosine", "1", TfCosineProvider, records_pins=False,
               golden="sha256:2e49bfe31f27c8b07f2387d58d1ce45647d765beb657b1ef8bf036f83694829b",
               summary="the simple reference: cosine of raw term counts, exact"),
    EngineSpec("bm25", "1", Bm25Provider, default_stemmer="english", records_pins=False,
               golden="sha256:f28db6191c05689b6e2cc37814b7d53a48b97afd146da80ed8c1f5a425707caa",
               summary="BM25F with prefixes, synonyms and coverage, in exact integers"),
    EngineSpec("bm25", "2", Bm25Provider, default_stemmer="english",
               golden="sha256:7ac16d734b0ffc1f2b6af731da7f905efdb8d7241218c4b286a16626bc5c0299",
               summary="bm25@1's ranking with its pins and parameters in every audit"),
    EngineSpec("bm25", "3", Bm25PrfProvider, default_stemmer="english",
               golden="sha256:733f2ca885561a74c529d03339f50cfec5f7f6e12c75d04e68566c9b2fc3f744",
               preview=True,  # the default no more: it lost to bm25@2 on tool catalogs (ADR 0024)
               summary="bm25@2 with BM25+ tf and Bo1 pseudo-relevance feedback"),
    EngineSpec("bm25", "4", Bm25SelectiveProvider, default_stemmer="english",
               analysis=(("identifiers", "split"),), preview=True,
               golden="sha256:c9bd96207acee5aa85ee8d30310387fb8d4201231338ee772e1430d879250267",
               summary="bm25@3 with feedback only where predicted to pay, identifier "
                       "splitting and tool fields"),
    EngineSpec("bm25", "5", Bm25Provider, default_stemmer="english",
               analysis=(("split", "words"),),
               golden="sha256:68c022d84e5d482abd76e27b3afac724c657146c7ce0759979c8b4537b6e7c63",
               summary="bm25@2's ranking with words in every script: combining marks kept, "
                       "CJK and Thai cut into pairs of letters, their clause marks split"),
    EngineSpec("bm25", "6", Bm25Provider, default_stemmer="english",
               analysis=(("split", "visible-words"),),
               golden="sha256:9765c4fcbcbb507136fbdef226467b4928203a112664e72afa174113f7720694",
               summary="bm25@5 with invisible characters removed: soft hyphens, joiners and "
                       "variation selectors no longer split or change a word"),
    EngineSpec("hybrid", "1", HybridProvider, default_stemmer="english",
               analysis=(("split", "visible-words"),),
               golden="sha256:6678eca26dc677c71e1751027a626a9c4e688babb7b648178c0cd24a46a09303",
               summary="bm25@6's ranking fused with a static embedding model's (reciprocal "
                       "ranks), every score an exact integer; the model named by sha256"),
)
BY_REF: Mapping[str, EngineSpec] = {spec.ref: spec for spec in ENGINES}
# The version a bare provider name means: its newest release that is not a preview.
DEFAULT_VERSIONS: Mapping[str, str] = {spec.name: spec.version for spec in ENGINES
                                       if not spec.preview}


def engine_spec(ref: str) -> EngineSpec:
    """The engine ``ref`` names: ``name@version``, or ``name`` for its default version."""
    name, at, version = ref.partition("@")
    spec = BY_REF.get(f"{name}@{version or ('' if at else DEFAULT_VERSIONS.get(name, ''))}")
    if spec is None:
        known = ", ".join([*BY_REF, *DEFAULT_VERSIONS])
        raise UnknownProviderError(f"unknown engine {ref!r}; choose one of: {known}")
    return spec


def stored_engine(ref: str) -> EngineSpec:
    """The engine a stored job record names. Records made before engines had versions say
    only the provider's name, and then meant its first version."""
    return engine_spec(ref if "@" in ref else f"{ref}@1")


# (name, version) as audits record them -> the engine: the verifier asks once a result.
_BY_LABEL: Mapping[tuple[str, str], EngineSpec] = {
    (spec.name, f"{CORE_VERSION}.{spec.version}"): spec for spec in ENGINES}


def engine_of(label: Any) -> EngineSpec | None:
    """The installed engine whose audits record ``label`` (``{"name", "version"}``), if any;
    None for anything else a stored audit may hold there."""
    if not isinstance(label, Mapping) or set(label) != {"name", "version"}:
        return None
    name, version = label["name"], label["version"]
    if not isinstance(name, str) or not isinstance(version, str):
        return None
    return _BY_LABEL.get((name, version))


def engine_ref(label: Mapping[str, Any]) -> str:
    """The one spelling of the engine an audit's ``label`` records: ``name@version`` as
    ``rookhaven engines`` lists it, also for an engine this install does not have."""
    spec = engine_of(label)
    if spec is not None:
        return spec.ref
    name, version = str(label.get("name")), str(label.get("version"))
    core, _, own = version.partition(".")
    return f"{name}@{own}" if core == CORE_VERSION and own else f"{name}@{version}"


def make_provider(ref: str, **params: Any) -> ScoringProvider:
    """The provider of engine ``ref`` built with ``params``."""
    return engine_spec(ref).build(**params)
