"""English stemming by Snowball's own generated Python, vendored: the one stemmer of pinned engines.

The files beside this one are snowballstemmer 3.1.0's runtime and English stemmer, unchanged
(docs/adr/0011-pinned-analysis.md); on the four shared collections it gives exactly what
PyStemmer 3.1.0 (the same Snowball release, compiled to C) gives, and tests/golden/stems
holds that word list.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from .english_stemmer import EnglishStemmer as _Generated_untyped

_Generated: Callable[[], Any] = _Generated_untyped  # the generated code has no annotations

SNOWBALL_VERSION = "3.1.0"
SNOWBALLSTEMMER_VERSION = "3.1.0"
ALGORITHM = "english"


def _stem_once(word: str) -> str:
    # A fresh generated stemmer per word: it keeps its cursor in the instance, so sharing
    # one across threads would mix words. Creating one costs far less than a stem.
    stem: Callable[[str], str] = _Generated().stemWord
    return stem(word)


class EnglishStemmer:
    """Snowball English (Porter2), with a bounded memo of recent words per instance."""

    def __init__(self, memo_size: int = 1 << 16) -> None:
        # Pure Python takes ~30 us a word, ~20 times PyStemmer; text repeats words, so a
        # memo makes stemming a corpus cost little more than its distinct words.
        self.stem: Callable[[str], str] = lru_cache(maxsize=memo_size)(_stem_once)

    def stem_words(self, words: list[str]) -> list[str]:
        """``[self.stem(w) for w in words]``."""
        return list(map(self.stem, words))
