"""Digests of pinned tokens and stems, run by another CPython with nothing but the standard library.

Run as a script (``python -S tests/pinned_text_script.py``), it loads only
``rookhaven.core.textrules`` and ``rookhaven.core.snowball`` from this checkout, under empty
stand-ins for the ``rookhaven`` and ``rookhaven.core`` packages (whose ``__init__`` would
import pydantic and numpy), and prints the digests as JSON.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import types
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN_DIR = ROOT / "tests" / "golden" / "stems"
# The digests every Python must give with the pinned Unicode 14.0 rules: ``token_digests``
# (equal to CPython 3.11's own analysis, tests/unit/test_textrules.py), ``words_digest`` of
# split_words and of split_visible_words. Frozen like the engines that use them.
PINNED_DIGESTS = ROOT / "tests" / "golden" / "textrules" / "14.0.json"
LAST = 0x10FFFF
# Contexts around one code point (tests/unit/test_textrules.py checks, on 3.11, that the
# pinned rules give the interpreter's own tokens in each): alone, inside a word, between a
# base letter with a mark below and a combining mark (reordering, composition).
CONTEXTS: tuple[Callable[[str], str], ...] = (
    lambda ch: ch,
    lambda ch: "ab" + ch + "cd",
    lambda ch: "A\u0323" + ch + "\u0301B",
)
# The context for the "words" and "visible-words" splits (bm25@5, bm25@6): inside a word,
# before a combining mark and an unsegmented letter. (Its only interpreter-dependent step is
# the normalisation the token digest already covers in three contexts; the rest is the
# pinned tables' patterns.)
WORD_CONTEXT: Callable[[str], str] = lambda ch: "ab" + ch + "\u0301\u6e2f"  # noqa: E731
_UNPINNED = re.compile(r"[^\W_]+")


def unpinned_split(text: str) -> list[str]:
    """Today's analysis, which follows the running interpreter's Unicode database."""
    return _UNPINNED.findall(unicodedata.normalize("NFKC", text).casefold())


class TokenDigest:
    """sha256 over token lists, one after another, as the pinned digests are made."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()

    def add(self, tokens: list[str]) -> None:
        self._hash.update("\x1f".join(tokens).encode("utf-8", "surrogatepass"))
        self._hash.update(b"\x1e")

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def token_digests(split: Callable[[str], list[str]]) -> list[str]:
    """For each context, the digest of the tokens of every code point in it."""
    found = []
    for wrap in CONTEXTS:
        digest = TokenDigest()
        for cp in range(LAST + 1):
            digest.add(split(wrap(chr(cp))))
        found.append(digest.hexdigest())
    return found


def stem_digest(stem_words: Callable[[list[str]], list[str]], golden: Path) -> str:
    """sha256 over the stems of the golden word list."""
    words = [line.split("\t")[0] for line in golden.read_text(encoding="utf-8").splitlines()]
    return hashlib.sha256("\n".join(stem_words(words)).encode("utf-8")).hexdigest()


def words_digest(split_words: Callable[[str], list[str]]) -> str:
    """The digest of the tokens ``split_words`` (a "words" split) gives every code point in
    WORD_CONTEXT."""
    digest = TokenDigest()
    for cp in range(LAST + 1):
        digest.add(split_words(WORD_CONTEXT(chr(cp))))
    return digest.hexdigest()


def digests(split: Callable[[str], list[str]], stem_words: Callable[[list[str]], list[str]],
            golden: Path, loaded: Iterable[str]) -> dict[str, object]:
    """Everything the cross-interpreter test compares, for the analysis ``split``."""
    return {"unidata_version": unicodedata.unidata_version, "tokens": token_digests(split),
            "stems": stem_digest(stem_words, golden),
            "unpinned_sample": unpinned_split("ab\U0001e030cd"),
            "sample": split("ab\U0001e030cd"), "loaded": sorted(loaded)}


def _load_alone() -> tuple[types.ModuleType, types.ModuleType]:
    for name in ("rookhaven", "rookhaven.core"):
        stand_in = types.ModuleType(name)
        stand_in.__path__ = [str(ROOT.joinpath(*name.split(".")))]
        sys.modules[name] = stand_in
    import rookhaven.core.snowball as snowball
    import rookhaven.core.textrules as textrules

    return textrules, snowball


if __name__ == "__main__":
    textrules, snowball = _load_alone()
    golden = GOLDEN_DIR / f"english-snowball-{snowball.SNOWBALL_VERSION}.tsv"
    third_party = {m.split(".")[0] for m in sys.modules} & {"pydantic", "numpy", "Stemmer",
                                                           "orjson", "snowballstemmer"}
    rules = textrules.text_rules("14.0")
    found = digests(rules.split_tokens, snowball.EnglishStemmer().stem_words, golden,
                    third_party)
    found["words"] = words_digest(rules.split_words)
    found["visible"] = words_digest(rules.split_visible_words)
    print(json.dumps(found))
