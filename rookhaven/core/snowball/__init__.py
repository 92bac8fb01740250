"""English stemming by Snowball's own generated Python, vendored: the one stemmer of pinned engines.

The files beside this one are snowballstemmer 3.1.0's runtime and English stemmer, unchanged
(docs/adr/0011-pinned-analysis.md); on the four shared collections it gives exactly what
PyStemmer 3.1.0 (the same Snowball release, compiled to C) gives, and tests/golden/stems
holds that word list.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any

from .english_stemmer import EnglishStemmer as _Generated_untyped

_Generated: Callable[[], Any] = _Generated_untyped  # the generated code has no annotations

SNOWBALL_VERSION = "3.1.0"
SNOWBALLSTEMMER_VERSION = "3.1.0"
ALGORITHM = "english"


# Words on which Snowball's English differs between releases 2.2, 3.0 and 3.1 (found over
# the shared collections, tests/golden/stems), and a few of every rule family: a compiled
# stemmer that stems each as the vendored code does is taken to be the same release.
PROBE = (
    "activate", "added", "adding", "adjustable", "andes", "angularity", "anthropologists",
    "arising", "arsenal", "atlas", "bias", "biologist", "biologists", "bowdlerize", "caresses",
    "cats", "communal", "commune", "communism", "conditional", "cosmos", "dependent", "dying",
    "early", "effective", "electrical", "emergence", "emergency", "emergent", "evening",
    "exceed", "generate", "generic", "generously", "gently", "geologists", "goodness",
    "happiness", "homologous", "hopeful", "howe", "innings", "interfering", "intergrating",
    "internal", "internally", "international", "interval", "intervals", "lateral", "laterally",
    "lying", "meteorologists", "neurologist", "news", "only", "ophthalmologist", "organic",
    "organisms", "organization", "organizations", "organize", "organized", "organizers",
    "organizing", "paste", "ponies", "proceed", "psychologists", "relational", "running",
    "singly", "skies", "sky", "sociologist", "sociologists", "succeed", "technologists", "ties",
    "ugly", "univers", "universal", "universality", "universally", "universals", "universities",
    "university",
)


def _stem_once(word: str) -> str:
    # A fresh generated stemmer per word: it keeps its cursor in the instance, so sharing
    # one across threads would mix words. Creating one costs far less than a stem.
    stem: Callable[[str], str] = _Generated().stemWord
    return stem(word)


@cache
def compiled_agrees() -> bool:
    """Whether PyStemmer is installed, is the vendored Snowball release compiled to C, and
    stems every probe word as the vendored code does (checked once per process)."""
    try:
        import Stemmer
    except ImportError:
        return False
    if Stemmer.version() != SNOWBALL_VERSION:
        return False
    compiled: list[str] = Stemmer.Stemmer(ALGORITHM).stemWords(list(PROBE))
    return compiled == [_stem_once(word) for word in PROBE]


class EnglishStemmer:
    """Snowball English (Porter2), with a bounded memo of recent words per instance.

    The vendored code defines the stems. When PyStemmer is the same Snowball release
    compiled to C (``compiled_agrees``), it computes them, about 25 times faster, with the
    same output (tests/unit/test_snowball.py checks every golden word both ways); any other
    PyStemmer, or none, leaves the vendored code to stem: slower, never different.
    """

    def __init__(self, memo_size: int = 1 << 16, compiled: bool = True) -> None:
        # Text repeats words: a memo makes stemming a corpus cost its distinct words.
        once: Callable[[str], str] = _stem_once
        if compiled and compiled_agrees():
            import Stemmer

            once = Stemmer.Stemmer(ALGORITHM).stemWord
        self.stem: Callable[[str], str] = lru_cache(maxsize=memo_size)(once)

    def stem_words(self, words: list[str]) -> list[str]:
        """``[self.stem(w) for w in words]``."""
        return list(map(self.stem, words))
