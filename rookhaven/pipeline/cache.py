"""A bounded, least-recently-used cache of built indexes, one per (corpus, engine config).

Building an index is the expensive step of a job, so each worker process keeps the last few;
the corpus is loaded from the store by digest on a miss.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import orjson

from ..core.corpus import Corpus
from ..core.corpusstream import CorpusStream
from ..core.engine import Retriever
from ..core.engines import make_provider
from ..core.identity import EngineIdentity, engine_identity
from ..core.providers import ScoringProvider


class RetrieverCache:
    """Up to ``size`` Retrievers, keyed by corpus digest and engine config digest."""

    def __init__(self, load: Callable[[str], Corpus | CorpusStream], size: int) -> None:
        self._load = load
        self._size = size
        self._providers: dict[tuple[str, bytes], tuple[ScoringProvider, EngineIdentity]] = {}
        self._retrievers: OrderedDict[tuple[str, str], Retriever] = OrderedDict()
        self.builds = 0

    def provider(self, name: str, params: dict[str, Any]) -> tuple[ScoringProvider,
                                                                    EngineIdentity]:
        """The provider ``name`` with ``params`` and its identity (built once each)."""
        # Sorted-key JSON names the params as well as their canonical bytes do, for a
        # fraction of the cost (this runs once per job and per replay).
        key = (name, orjson.dumps(params, option=orjson.OPT_SORT_KEYS))
        if key not in self._providers:
            made = make_provider(name, **params)
            self._providers[key] = (made, engine_identity(made))
        return self._providers[key]

    def get(self, corpus_digest: str, name: str, params: dict[str, Any]) -> Retriever:
        """The Retriever for this corpus and provider, built (and cached) if needed."""
        provider, identity = self.provider(name, params)
        key = (corpus_digest, identity.config_digest)
        found = self._retrievers.get(key)
        if found is not None:
            self._retrievers.move_to_end(key)
            return found
        built = Retriever(self._load(corpus_digest), provider)
        self.builds += 1
        self._retrievers[key] = built
        while len(self._retrievers) > self._size:
            self._retrievers.popitem(last=False)
        return built

    def peek(self, corpus_digest: str, config_digest: str) -> Retriever | None:
        """The Retriever already built for this corpus and engine config, if the cache
        holds it (counted as a use); None, never a build."""
        key = (corpus_digest, config_digest)
        found = self._retrievers.get(key)
        if found is not None:
            self._retrievers.move_to_end(key)
        return found

    def rebound(self, load: Callable[[str], Corpus | CorpusStream]) -> RetrieverCache:
        """A cache holding what this one holds, loading misses with ``load`` (a forked pool
        process keeps the indexes its parent built, not the parent's Redis connection)."""
        copy = RetrieverCache(load, self._size)
        copy._providers = dict(self._providers)
        copy._retrievers = OrderedDict(self._retrievers)
        return copy

    def __len__(self) -> int:
        return len(self._retrievers)
