"""Recipes read quickly from audits of an engine configuration a replay has already met.

An audit is canonical JSON, keys sorted, and ~2 KB: its engine configuration is nearly half
of it and the hit lists most of the rest, while a recipe needs only the request, the corpus
and the engine. Once a replay has read one audit in full (its parameters all in the audit,
not completed from a job record), the configuration's exact bytes are known; later audits
holding those bytes are parsed without them (the configuration taken as known) and only up
to the fields a recipe needs.

Only a match is ever decided on such a recipe (``Replayer`` replays anything else again the
full way, for the same verdict and message as before): a match means the stored bytes are
what this recipe gives under the key this recipe gives, however the recipe was read.
A frame holds no index: the replay asks the retriever cache for it by digest, so a frame
never keeps alive what the cache let go.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson

from ..core.canonical import canonical_bytes
from ..core.recipe import Recipe, request_of

# The fields a recipe needs sort before these, which hold the streams and hit lists.
_TAIL = b',"streams":'
_AFTER = b',"config_digest":'


@dataclass(frozen=True, slots=True)
class _Use:
    label: Any  # the audit's "engine" value
    recipe: Recipe  # the request is replaced per audit


@dataclass(slots=True)
class _Frame:
    """One configuration: its bytes as audits hold them, and the corpora it was met on."""

    config: bytes  # '"config":' + the configuration's canonical bytes + _AFTER
    config_digest: str
    uses: dict[str, _Use]  # by corpus digest


class Frames:
    """The engine configurations met most recently, at most ``size`` (each on any number of
    corpora)."""

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._frames: OrderedDict[str, _Frame] = OrderedDict()

    def learn(self, label: Any, recipe: Recipe, config: Any, config_digest: str) -> None:
        """Remember ``recipe``'s configuration (``config``, as its audit holds it, whose
        digest is ``config_digest``); its audit names its engine ``label``. Only for a
        recipe whose parameters all came from its audit."""
        frame = self._frames.get(config_digest)
        if frame is None:
            marker = b'"config":' + canonical_bytes(config) + _AFTER
            frame = self._frames[config_digest] = _Frame(marker, config_digest, {})
            while len(self._frames) > self._size:
                self._frames.popitem(last=False)
        else:
            self._frames.move_to_end(config_digest)
        frame.uses.setdefault(recipe.corpus_digest, _Use(label, recipe))

    def recipe(self, audit: bytes) -> tuple[Recipe, str] | None:
        """The recipe of ``audit`` and its configuration's digest, if that configuration
        was met before on its corpus and the rest reads as a recipe; None sends it the full
        way."""
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
                use = frame.uses.get(head["corpus_digest"])
                if head["config"] != 0 or use is None or head["engine"] != use.label:
                    return None
                request = request_of(head)
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                return None
            return Recipe(use.recipe.engine, request, use.recipe.corpus_digest,
                          use.recipe.params), frame.config_digest
        return None
