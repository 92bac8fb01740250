"""The "visible-words" split (bm25@6, ADR 0040): invisible characters neither split nor change a
word, but the zero-width space and non-joiner part words as before."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rookhaven.core.analyzer import Analyzer
from rookhaven.core.chartables import unicode_14_0 as tables
from rookhaven.core.decompose import decompose, split_parts
from rookhaven.core.textrules import text_rules
from rookhaven.errors import ConfigError

pytestmark = pytest.mark.no_kernels  # text rules only
RULES = text_rules("14.0")
VISIBLE = Analyzer(split="visible-words", stemmer="english")
LAST = 0x10FFFF
REMOVED = [cp for lo, hi in tables.IGNORABLE for cp in range(lo, hi + 1)
           if cp not in (0x200B, 0x200C)]


@pytest.mark.parametrize(("text", "tokens"), [
    # A soft hyphen (hyphenated HTML), a word joiner, a combining grapheme joiner.
    ("main\u00adtenance", ["maintenance"]),
    ("gantry\u2060crane ship\u034fyard", ["gantrycrane", "shipyard"]),
    # A variation selector after a letter or an emoji; a byte order mark inside text.
    ("crane\ufe0f \U0001f3d7\ufe0f x\ufeffy", ["crane", "xy"]),
    # Bidi controls around words, tag characters after one (a flag's tag sequence).
    ("\u202bport\u202c \u2066crane\u2069 tide\U000e0067\U000e0062\U000e007f", ["port", "crane",
                                                                              "tide"]),
    # Removed before normalising: a letter and its mark compose across a soft hyphen.
    ("cafe\u00ad\u0301", ["café"]),
    # The zero-width space and non-joiner still part words.
    ("main\u200btenance", ["main", "tenance"]),
    ("می\u200cخواهم", ["می", "خواهم"]),
    # Removed characters inside unsegmented text: the pairs are those of the text without.
    ("起重\u00ad机", ["起重", "重机"]),
    ("\u00ad\u2060", []),
])
def test_invisible_characters_neither_split_nor_change_a_word(text: str, tokens: list[str]
                                                              ) -> None:
    assert RULES.split_visible_words(text) == tokens


def test_every_removed_character_is_default_ignorable_and_no_other_is_removed() -> None:
    for cp in REMOVED:
        assert RULES.split_visible_words(f"ab{chr(cp)}cd") == ["abcd"], hex(cp)
    kept = [cp for cp in range(0x80, LAST + 1) if not 0xD800 <= cp <= 0xDFFF
            and RULES.visible(chr(cp)) != chr(cp)]
    assert kept == REMOVED
    assert {unicodedata.category(chr(cp)) for cp in REMOVED} <= {"Cf", "Mn", "Cn", "Lo"}
    assert [cp for cp in REMOVED if unicodedata.category(chr(cp)) == "Lo"] == [
        0x115F, 0x1160, 0x3164, 0xFFA0]  # the Hangul fillers


@given(st.text(max_size=30), st.lists(st.tuples(st.integers(0, 30), st.sampled_from(REMOVED)),
                                      max_size=4))
def test_inserting_invisible_characters_anywhere_changes_no_token(
        text: str, inserts: list[tuple[int, int]]) -> None:
    changed = text
    for at, cp in inserts:
        changed = changed[:at] + chr(cp) + changed[at:]
    assert RULES.split_visible_words(changed) == RULES.split_visible_words(text)


@given(st.text(st.characters(blacklist_characters=[chr(cp) for cp in REMOVED]), max_size=40))
def test_text_without_removed_characters_splits_as_under_words(text: str) -> None:
    assert RULES.split_visible_words(text) == RULES.split_words(text)


def test_the_analyzer_takes_the_split_and_records_it() -> None:
    assert VISIBLE.config()["split"] == "visible-words"
    assert VISIBLE.terms("main\u00adtenance of the gantry\u2060cranes") == [
        "mainten", "gantrycran"]
    with pytest.raises(ConfigError, match="choose one of: alnum-runs, words, visible-words"):
        Analyzer(split="invisible")


def test_separators_are_found_in_the_text_the_analyzer_reads() -> None:
    # An invisible character neither hides a separator nor makes one; the parts keep what
    # was sent, but for default-ignorable characters at their ends.
    assert split_parts("crane faults,\u200f tide", split="visible-words") == [
        "crane faults", "tide"]
    assert split_parts("crane faults,\u200f tide", split="words") == [
        "crane faults,\u200f tide"]  # bm25@5 keeps what it did
    assert split_parts("crane faults.\u00ad tide", split="visible-words") == [
        "crane faults", "tide"]
    assert split_parts("crane \u200fand\u200f tide", split="visible-words") == ["crane", "tide"]
    # Joined to a word by a removed character, "and" is part of that word (``craneand``).
    assert split_parts("crane\u00adand tide", split="visible-words") == ["crane\u00adand tide"]
    assert split_parts("crane\u00adand tide", split="words") == ["crane\u00ad", "tide"]
    # The zero-width space and non-joiner part words: white space to the separators too.
    assert split_parts("crane\u200cand tide", split="visible-words") == ["crane", "tide"]
    assert split_parts("a,\u200bb", split="visible-words") == ["a", "b"]
    assert split_parts("起重\u00ad机，潮汐", split="visible-words") == ["起重\u00ad机", "潮汐"]
    assert split_parts("\u00ad\u2060 ; \u200b", split="visible-words") == []
    parts = decompose("main\u00adtenance and un\u00adloading", VISIBLE).parts
    assert [(p.text, p.distinct) for p in parts] == [("main\u00adtenance", ("mainten",)),
                                                     ("un\u00adloading", ("unload",))]


PIECES = st.sampled_from(["crane", "tide", "起重", "é", "x\u0301", " ", "\u3000", ",", ".", ":",
                          ";", "and", " and ", "as well as", "\u200b", "\u200c", "3.5", "\n"])


@given(st.lists(PIECES, max_size=12),
       st.lists(st.tuples(st.integers(0, 60), st.sampled_from(REMOVED)), max_size=5))
def test_a_query_with_invisible_characters_splits_as_the_query_without_them(
        pieces: list[str], inserts: list[tuple[int, int]]) -> None:
    query = "".join(pieces)
    for at, cp in inserts:
        query = query[:at] + chr(cp) + query[at:]
    visible = RULES.visible(query)
    assert [RULES.visible(part) for part in split_parts(query, split="visible-words")] == (
        split_parts(visible, split="visible-words"))
