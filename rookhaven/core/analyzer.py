"""Text to terms: Unicode normalisation, lower-casing, splitting, stop words, optional stemming.

Decision (docs/adr/0002-tokenization.md): text is NFKC-normalised and case-folded, so
full-width forms, ligatures and ``ß``/``SS`` meet; tokens are maximal runs of letters and
digits (``_`` splits, like every other non-alphanumeric). Documents and queries go
through the same Analyzer, and its config is hashed into the config digest.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from .stopwords import stopword_list

_TOKEN = re.compile(r"[^\W_]+")

STEMMERS = ("none", "english")


def normalize(text: str) -> str:
    """NFKC then case-fold: the one normal form both documents and queries are read in."""
    return unicodedata.normalize("NFKC", text).casefold()


def split_tokens(text: str) -> list[str]:
    """Every token of ``text`` in order, stop words included."""
    return _TOKEN.findall(normalize(text))


def _load_stemmer(name: str) -> Callable[[str], str] | None:
    if name == "none":
        return None
    if name not in STEMMERS:
        raise ConfigError(f"unknown stemmer {name!r}; choose one of: {', '.join(STEMMERS)}")
    import Stemmer  # PyStemmer: Snowball's C stemmers, deterministic and fast

    stem: Callable[[str], str] = Stemmer.Stemmer(name).stemWord
    return stem


@dataclass(frozen=True)
class Analyzer:
    """Turns text into index terms; equal configs always give equal terms."""

    stopwords: str = "english-v1"
    stemmer: str = "none"
    _stop: frozenset[str] = field(init=False, repr=False, compare=False)
    _stem: Callable[[str], str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_stop", stopword_list(self.stopwords))
        object.__setattr__(self, "_stem", _load_stemmer(self.stemmer))

    def is_stopword(self, token: str) -> bool:
        """Whether ``token`` (already normalised) is a stop word."""
        return token in self._stop

    def terms(self, text: str) -> list[str]:
        """The content terms of ``text``, in order, repeats kept."""
        stop, stem = self._stop, self._stem
        kept = [t for t in split_tokens(text) if t not in stop]
        if stem is None:
            return kept
        return [stem(t) for t in kept]

    def config(self) -> dict[str, Any]:
        """The parameters that change terms; hashed into the config digest."""
        return {"normalize": "nfkc-casefold", "split": "alnum-runs", "stopwords": self.stopwords,
                "stemmer": self.stemmer}
