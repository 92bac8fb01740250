"""The texts the vendored BPE tokenizer is pinned on, and the digest of their token ids.

Two sources: every document and query of the four shared collections (when ``../shared`` is
there), and generated strings drawn from every plane of Unicode, spaces, "▁", controls and
unassigned code points, made from sha256 (no RNG whose algorithm a Python release may
change), so the pinned file holds digests, not texts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from tests.conftest import SHARED

GENERATED = 4000
PINNED = Path(__file__).parent / "golden" / "tokens" / "wordllama-l2-supercat.json"


def shared_texts(name: str) -> list[str]:
    """The texts of one shared collection: each document (title, then text) and query."""
    root = SHARED / "datasets" / name
    texts = []
    for line in (root / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        texts.append(f"{doc.get('title', '')} {doc['text']}")
    for line in (root / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        texts.append(json.loads(line)["text"])
    return texts


def _code_point(word: int) -> str:
    """One code point from 32 bits: often ASCII, space or "▁", else anywhere but surrogates."""
    kind, value = word % 8, word >> 3
    if kind < 3:
        return chr(32 + value % 95)
    if kind == 3:
        return " "
    if kind == 4:
        return "\u2581"
    if kind == 5:
        return chr(0x80 + value % 0x780)  # Latin to Arabic, combining marks
    point = value % 0x110000
    return chr(point if not 0xD800 <= point < 0xE000 else point - 0x800)


def generated_texts(count: int = GENERATED) -> Iterator[str]:
    """``count`` strings of 0-63 code points, the same on every Python."""
    for i in range(count):
        stream = hashlib.sha256(f"rookhaven-bpe-{i}".encode()).digest()
        stream += hashlib.sha256(stream).digest() * 8
        length = stream[0] % 64
        yield "".join(_code_point(int.from_bytes(stream[4 + 4 * j:8 + 4 * j], "little"))
                      for j in range(length))


def digest(texts: Iterable[str], ids: Callable[[str], list[int]]) -> str:
    """sha256 over every text's ids, one JSON line a text."""
    h = hashlib.sha256()
    for text in texts:
        h.update(json.dumps(ids(text)).encode() + b"\n")
    return "sha256:" + h.hexdigest()
