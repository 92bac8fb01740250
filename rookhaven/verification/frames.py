"""Recipes read quickly from audits of an engine configuration a replay has already met.

An audit is canonical JSON, keys sorted, and ~2 KB: its engine configuration is nearly half
of it and the hit lists most of the rest, while a recipe needs only the request, the corpus
and the engine. Once a replay has read one audit in full and built its retriever, the
configuration's exact bytes are known; later audits holding those bytes are parsed without
them (the configuration taken as known) and only up to the fields a recipe needs.

Only a match is ever decided on such a recipe (``Replayer`` replays anything else again the
full way, for the same verdict and message as before): a match means the stored bytes are
what this recipe gives under the key this recipe gives, however the recipe was read.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson

from ..core.canonical import canonical_bytes
from ..core.engine import Retriever
from ..core.recipe import Recipe, request_of

# The fields a recipe needs sort before these, which hold the streams and hit lists.
_TAIL = b',"streams":'
_AFTER = b',"config_digest":'


@dataclass(frozen=True, slots=True)
class _Frame:
    config: bytes  # '"config":' + the configuration's canonical bytes + _AFTER
    label: Any  # the audit's "engine" value
    recipe: Recipe  # the request is replaced per audit
    retriever: Retriever


class Frames:
    """The engine configurations met so far, the most recent ``size`` of them."""

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._frames: OrderedDict[tuple[str, str], _Frame] = OrderedDict()

    def learn(self, label: Any, recipe: Recipe, retriever: Retriever) -> None:
        """Remember the configuration of ``recipe``, replayed by ``retriever``, whose audit
        names its engine ``label``."""
        known = (recipe.corpus_digest, retriever.config_digest)
        if known in self._frames:
            return
        config = b'"config":' + canonical_bytes(retriever.config) + _AFTER
        self._frames[known] = _Frame(config, label, recipe, retriever)
        while len(self._frames) > self._size:
            self._frames.popitem(last=False)

    def recipe(self, audit: bytes) -> tuple[Recipe, Retriever] | None:
        """The recipe of ``audit`` and the retriever that replays it, if its configuration
        is one met before and the rest reads as a recipe; None sends it the full way."""
        end = audit.find(_TAIL)
        if end < 0:
            return None
        for frame in reversed(self._frames.values()):
            at = audit.find(frame.config, 0, end)
            if at < 0:
                continue
            try:
                head = orjson.loads(b"".join((audit[:at], b'"config":0', _AFTER,
                                              audit[at + len(frame.config):end], b"}")))
                if (head["config"] != 0 or head["engine"] != frame.label
                        or head["corpus_digest"] != frame.recipe.corpus_digest):
                    return None
                request = request_of(head)
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                return None
            return Recipe(frame.recipe.engine, request, frame.recipe.corpus_digest,
                          frame.recipe.params), frame.retriever
        return None
