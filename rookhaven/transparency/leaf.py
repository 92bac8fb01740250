"""A log leaf: what the transparency log commits to for one stored result."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from ..core.canonical import canonical_bytes

LEAF_FORMAT = 1


@dataclass(frozen=True)
class Leaf:
    """One stored result as logged: its key, the hashes of its bytes, corpus, engine, time."""

    key: str
    result_sha256: str
    audit_sha256: str
    corpus: str
    engine: dict[str, Any]
    stored: str
    backfilled: bool = False

    def encode(self) -> bytes:
        """The leaf's canonical bytes (what the Merkle leaf hash is taken over)."""
        return canonical_bytes({
            "format": LEAF_FORMAT, "key": self.key, "result_sha256": self.result_sha256,
            "audit_sha256": self.audit_sha256, "corpus": self.corpus, "engine": self.engine,
            "stored": self.stored, "backfilled": self.backfilled})

    def matches(self, result: bytes, audit: bytes) -> bool:
        """Whether ``result`` and ``audit`` are the bytes this leaf logged."""
        return (hashlib.sha256(result).hexdigest() == self.result_sha256
                and hashlib.sha256(audit).hexdigest() == self.audit_sha256)


def leaf_for(key: str, result: bytes, audit: bytes, corpus: str, stored: str,
             backfilled: bool = False) -> Leaf:
    """The leaf of a result about to be stored; the engine is read from its audit."""
    try:
        engine = dict(orjson.loads(audit).get("engine") or {})
    except (orjson.JSONDecodeError, AttributeError):
        engine = {}
    return Leaf(key=key, result_sha256=hashlib.sha256(result).hexdigest(),
                audit_sha256=hashlib.sha256(audit).hexdigest(), corpus=corpus,
                engine=engine, stored=stored, backfilled=backfilled)


class LeafFrame:
    """The bytes every leaf of one stored chunk shares (its corpus, engine and time), around
    each result's key and two hashes: a leaf is then one join, not a mapping encoded (the
    same bytes as ``Leaf.encode``; tests/unit/test_leaf_frames.py)."""

    # Stand-ins for the three values each leaf has of its own, in the canonical (sorted)
    # order of their keys: audit_sha256, key, result_sha256. orjson writes NUL as \u0000,
    # which no digest, key or time holds.
    _STAND_INS = ("\x00audit", "\x00key", "\x00result")

    def __init__(self, corpus: str, engine: Mapping[str, Any], stored: str) -> None:
        sample = Leaf(key=self._STAND_INS[1], result_sha256=self._STAND_INS[2],
                      audit_sha256=self._STAND_INS[0], corpus=corpus, engine=dict(engine),
                      stored=stored).encode()
        pieces: list[bytes] = []
        for stand_in in self._STAND_INS:
            encoded = orjson.dumps(stand_in)
            before, found, sample = sample.partition(encoded)
            if not found or encoded in sample:
                raise ValueError("a leaf's shared values hold a stand-in")  # a bug, not input
            pieces.append(before)
        self._pieces = (*pieces, sample)

    def encode(self, key: str, result: bytes, audit: bytes) -> bytes:
        """The leaf of ``result`` and ``audit`` stored under ``key``: ``leaf_for``'s bytes."""
        head, between, after, tail = self._pieces
        return b"".join((head, b'"', hashlib.sha256(audit).hexdigest().encode(), b'"',
                         between, orjson.dumps(key), after, b'"',
                         hashlib.sha256(result).hexdigest().encode(), b'"', tail))


def parse_leaf(data: bytes) -> Leaf | None:
    """The leaf encoded in ``data``, or None when it is not a leaf of a known format."""
    try:
        raw: Mapping[str, Any] = orjson.loads(data)
        if raw.get("format") != LEAF_FORMAT:
            return None
        leaf = Leaf(key=raw["key"], result_sha256=raw["result_sha256"],
                    audit_sha256=raw["audit_sha256"], corpus=raw["corpus"],
                    engine=dict(raw["engine"]), stored=raw["stored"],
                    backfilled=bool(raw["backfilled"]))
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return None
    return leaf if leaf.encode() == data else None
