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

import re
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
IDENTIFIERS = ("none", "split")
# Tokens whose terms an analyzer remembers (``Analyzer.terms``); emptied when full.
TERMS_MEMO = 1 << 14
# How text becomes tokens: maximal runs of letters and digits (every engine before bm25@5),
# or words that keep their combining marks, with unsegmented scripts cut into letters and
# pairs of letters (TextRules.split_words, docs/adr/0039-words-in-every-script.md).
# "visible-words" is "words" after removing the invisible characters that do not part words
# (TextRules.split_visible_words, docs/adr/0040-invisible-characters.md).
SPLITS = ("alnum-runs", "words", "visible-words")
# Identifier shapes, ASCII only so that no interpreter's case tables decide a split:
# snake_case (sys_id) and words with a lower-to-upper hump (getUserRoles, HTTPServer2).
# A word is whole: neither end touches another ASCII letter or digit or any non-ASCII
# character (ÉcoleNormale is not an identifier to cut at "cole").
_EDGE = r"[A-Za-z0-9\x80-\U0010ffff]"
_SNAKE_WORD = re.compile(rf"(?<!{_EDGE})[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+(?!{_EDGE})")
_CAMEL_WORD = re.compile(
    rf"(?<!{_EDGE}|_)[A-Za-z0-9]*(?:[a-z0-9][A-Z]|[A-Z][A-Z][a-z])[A-Za-z0-9]*(?!{_EDGE}|_)")
# Where a camel word splits: before a capital after a lower case letter or digit, and before
# the last capital of a run that lower case follows (HTTPServer: HTTP Server).
_CAMEL_CUT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
# Any hump at all: a scan from capital to capital that spares most prose the word pattern.
_HUMP = re.compile(r"[A-Z](?:(?<=[a-z0-9][A-Z])|(?=[A-Z][a-z]))")


def _snake(match: re.Match[str]) -> str:
    word = match.group(0)
    return f"{word} {word.replace('_', '')}"


def _camel(match: re.Match[str]) -> str:
    word = match.group(0)
    return f"{word} {_CAMEL_CUT.sub(' ', word)}"


def split_identifiers(text: str) -> str:
    """``text`` with each identifier followed by its other spellings, so that a query may name
    the whole or its words: ``sys_id`` -> ``sys_id sysid`` (``_`` already splits the words),
    ``getUserRoles`` -> ``getUserRoles get User Roles``."""
    if "_" in text:
        text = _SNAKE_WORD.sub(_snake, text)
    # Text that lower() leaves alone has no ASCII capital (in any Unicode version): no hump.
    if text.lower() == text or not _HUMP.search(text):
        return text
    return _CAMEL_WORD.sub(_camel, text)


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
    # "split": identifiers also give their other spellings (bm25@4; ``split_identifiers``).
    identifiers: str = "none"
    split: str = "alnum-runs"
    _stop: frozenset[str] = field(init=False, repr=False, compare=False)
    _stem: Callable[[str], str] | None = field(init=False, repr=False, compare=False)
    _rules: TextRules = field(init=False, repr=False, compare=False)
    _split: Callable[[str], list[str]] = field(init=False, repr=False, compare=False)
    _known: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_stop", stopword_list(self.stopwords))
        object.__setattr__(self, "_stem", _load_stemmer(self.stemmer))
        object.__setattr__(self, "_rules", text_rules(self.unicode))
        object.__setattr__(self, "_known", {})
        if self.identifiers not in IDENTIFIERS:
            raise ConfigError(f"unknown identifiers mode {self.identifiers!r}; choose one of: "
                              f"{', '.join(IDENTIFIERS)}")
        if self.split not in SPLITS:
            raise ConfigError(f"unknown split {self.split!r}; choose one of: "
                              f"{', '.join(SPLITS)}")
        rules = self._rules
        object.__setattr__(self, "_split", {"alnum-runs": rules.split_tokens,
                                            "words": rules.split_words,
                                            "visible-words": rules.split_visible_words,
                                            }[self.split])

    def split_tokens(self, text: str) -> list[str]:
        """Every token of ``text`` in order, stop words included."""
        if self.identifiers == "split":
            text = split_identifiers(text)
        return self._split(text)

    @property
    def ascii_gaps(self) -> dict[int, str]:
        """The ASCII code points that separate tokens: every one but letters and digits."""
        return self._rules.ascii_gaps

    def is_stopword(self, token: str) -> bool:
        """Whether ``token`` (already normalised) is a stop word."""
        return token in self._stop

    def stem(self, token: str) -> str:
        """The index term of one normalised, non-stop-word token."""
        return token if self._stem is None else self._stem(token)

    def terms(self, text: str) -> list[str]:
        """The content terms of ``text``, in order, repeats kept."""
        return self.terms_of(self.split_tokens(text))

    def terms_of(self, tokens: list[str]) -> list[str]:
        """The content terms of ``tokens`` (as ``split_tokens`` gives them), in order."""
        found = list(map(self._known.get, tokens))
        if None in found:  # a token not met lately: learn it
            found = [self._term(t) if f is None else f for t, f in zip(tokens, found,
                                                                       strict=True)]
        return [f for f in found if f]

    def _term(self, token: str) -> str:
        """``token``'s term, or "" for a stop word, remembered in ``_known``: one lookup a
        token instead of a stop-word test and a stemmer's memo (a request's tokens come
        after the kernel has pushed both out of the caches)."""
        term = "" if token in self._stop else self.stem(token)
        known = self._known
        if len(known) >= TERMS_MEMO:
            known.clear()
        known[token] = term
        return term

    def config(self) -> dict[str, Any]:
        """The parameters that change terms; hashed into the config digest."""
        config: dict[str, Any] = {"normalize": "nfkc-casefold", "split": self.split,
                                  "stopwords": self.stopwords, "stemmer": self.stemmer}
        if self.record_pins:
            config["unicode"] = self._rules.version
            config["stemmer_algorithm"] = STEMMERS[self.stemmer] or "none"
        if self.identifiers != "none":  # absent from the configs of engines before bm25@4
            config["identifiers"] = "ascii snake_case joined, camelCase split; whole kept"
        return config
