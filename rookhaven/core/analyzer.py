"""Text to terms: pinned Unicode normalisation, case folding, splitting, stop words, stemming.

Decisions (docs/adr/0002-tokenization.md, 0011-pinned-analysis.md): text is NFKC-normalised
and case-folded as one stated Unicode version defines them (never the running interpreter's
database), so full-width forms, ligatures and ``ß``/``SS`` meet; tokens are maximal runs of
letters and digits of that version (``_`` splits, like every other non-alphanumeric).
Stemming is Snowball's English, vendored, so no installed library decides a term.
Documents and queries go through the same Analyzer, and its config is hashed into the
config digest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from .snowball import SNOWBALL_VERSION, EnglishStemmer
from .stopwords import stopword_list
from .textrules import TextRules, text_rules

# Stemmer name -> the algorithm it is, recorded in pinned configs.
STEMMERS: dict[str, str | None] = {"none": None, "english": f"snowball-english@{SNOWBALL_VERSION}"}
DEFAULT_UNICODE = "14.0"


def _load_stemmer(name: str) -> Callable[[str], str] | None:
    if name not in STEMMERS:
        raise ConfigError(f"unknown stemmer {name!r}; choose one of: {', '.join(STEMMERS)}")
    return None if name == "none" else EnglishStemmer().stem


def split_tokens(text: str, unicode: str = DEFAULT_UNICODE) -> list[str]:
    """Every token of ``text`` in order, stop words included, under Unicode ``unicode``."""
    return text_rules(unicode).split_tokens(text)


@dataclass(frozen=True)
class Analyzer:
    """Turns text into index terms; equal configs always give equal terms.

    ``record_pins`` puts the Unicode version and the stemmer's algorithm into ``config()``.
    Only the engines frozen before pinning leave it off: their recorded configs must stay
    byte for byte what they were, and their registry entry states the same pins.
    """

    stopwords: str = "english-v1"
    stemmer: str = "none"
    unicode: str = DEFAULT_UNICODE
    record_pins: bool = True
    _stop: frozenset[str] = field(init=False, repr=False, compare=False)
    _stem: Callable[[str], str] | None = field(init=False, repr=False, compare=False)
    _rules: TextRules = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_stop", stopword_list(self.stopwords))
        object.__setattr__(self, "_stem", _load_stemmer(self.stemmer))
        object.__setattr__(self, "_rules", text_rules(self.unicode))

    def split_tokens(self, text: str) -> list[str]:
        """Every token of ``text`` in order, stop words included."""
        return self._rules.split_tokens(text)

    def is_stopword(self, token: str) -> bool:
        """Whether ``token`` (already normalised) is a stop word."""
        return token in self._stop

    def stem(self, token: str) -> str:
        """The index term of one normalised, non-stop-word token."""
        return token if self._stem is None else self._stem(token)

    def terms(self, text: str) -> list[str]:
        """The content terms of ``text``, in order, repeats kept."""
        stop, stem = self._stop, self._stem
        kept = [t for t in self._rules.split_tokens(text) if t not in stop]
        if stem is None:
            return kept
        return [stem(t) for t in kept]

    def config(self) -> dict[str, Any]:
        """The parameters that change terms; hashed into the config digest."""
        config: dict[str, Any] = {"normalize": "nfkc-casefold", "split": "alnum-runs",
                                  "stopwords": self.stopwords, "stemmer": self.stemmer}
        if self.record_pins:
            config["unicode"] = self._rules.version
            config["stemmer_algorithm"] = STEMMERS[self.stemmer] or "none"
        return config
