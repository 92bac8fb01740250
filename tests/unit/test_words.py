"""The "words" split (bm25@5, ADR 0039): marks stay in their word, unsegmented scripts become
pairs of letters, other scripts' clause marks split a query, and nothing else changes."""

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
WORDS = Analyzer(split="words")
LAST = 0x10FFFF


def _inside(cp: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


@pytest.mark.parametrize(("text", "tokens"), [
    # Devanagari vowel signs and viramas, Thai vowels: marks, which alnum-runs split at.
    ("बंदरगाह क्रेन", ["बंदरगाह", "क्रेन"]),
    ("ท่าเรือ", ["ท่า", "าเ", "เรื", "รือ"]),
    # CJK: each pair of adjacent letters; a lone letter stays itself.
    ("港口起重机", ["港口", "口起", "起重", "重机"]),
    ("港", ["港"]),
    ("東京港のコンテナー", ["東京", "京港", "港の", "のコ", "コン", "ンテ", "テナ", "ナー"]),
    ("항구에서 크레인", ["항구", "구에", "에서", "크레", "레인"]),
    # Another script or a digit inside a word ends the run of pairs.
    ("iPhone用3号", ["iphone", "用", "3", "号"]),
    ("ｉＰｈｏｎｅ用", ["iphone", "用"]),  # NFKC first: full-width Latin is Latin
    # The dotted capital I folds to a plain i, so İstanbul meets istanbul.
    ("İstanbul limanı", ["istanbul", "limanı"]),
    # A mark that follows no letter or digit belongs to no word.
    ("\u0301abc x\u0301y", ["abc", "x\u0301y"]),
    ("café cafe\u0301", ["café", "café"]),
    ("", []),
])
def test_words_keep_their_marks_and_unsegmented_scripts_become_pairs(
        text: str, tokens: list[str]) -> None:
    assert RULES.split_words(text) == tokens


@given(st.text(st.characters(codec="ascii"), max_size=60))
def test_ascii_text_splits_as_every_engine_before_splits_it(text: str) -> None:
    assert RULES.split_words(text) == RULES.split_tokens(text)


@given(st.text(st.characters(max_codepoint=0x2FFF, exclude_categories=("Mn", "Mc", "Me")),
               max_size=40))
def test_text_without_marks_or_unsegmented_letters_splits_as_before(text: str) -> None:
    normal = RULES.normalize(text)
    if any(_inside(ord(ch), tables.UNSEGMENTED) or _inside(ord(ch), tables.MARKS)
           for ch in normal) or "i\u0307" in normal:
        return  # NFKC may compose or decompose into marks: those texts are the other tests'
    assert RULES.split_words(text) == RULES.split_tokens(text)


def test_the_tables_hold_what_their_names_say() -> None:
    assert all(_inside(lo, tables.ALNUM) and _inside(hi, tables.ALNUM)
               for lo, hi in tables.UNSEGMENTED)
    assert not any(unicodedata.category(chr(lo)) == "Nd" for lo, _ in tables.UNSEGMENTED)
    for probe in "港ひカ한ทລក\u1000":
        assert _inside(ord(probe), tables.UNSEGMENTED), probe
    for probe in "aЯ字\u0661":  # Latin, Cyrillic, a digit: not unsegmented; 字 is
        assert _inside(ord(probe), tables.UNSEGMENTED) == (probe == "字"), probe
    assert {unicodedata.category(chr(lo)) for lo, _ in tables.MARKS} <= {"Mn", "Mc", "Me"}


def test_the_analyzer_takes_the_split_and_records_it_only_when_asked() -> None:
    assert Analyzer().config()["split"] == "alnum-runs"
    assert WORDS.config()["split"] == "words"
    assert WORDS.terms("起重机的延误") == ["起重", "重机", "机的", "的延", "延误"]
    with pytest.raises(ConfigError, match="unknown split 'bigrams'; choose one of: "
                                          "alnum-runs, words"):
        Analyzer(split="bigrams")


def test_clause_marks_of_other_scripts_split_a_query_only_under_words() -> None:
    query = "起重机，潮汐窗口。集装箱、吊车；检修！报告？"
    assert split_parts(query, split="words") == ["起重机", "潮汐窗口", "集装箱", "吊车", "检修",
                                                  "报告"]
    assert split_parts(query) == [query]  # engines before bm25@5 keep what they did
    assert split_parts("ميناء، رافعة؟ نعم", split="words") == ["ميناء", "رافعة", "نعم"]
    assert split_parts("बंदरगाह। क्रेन", split="words") == ["बंदरगाह", "क्रेन"]
    parts = decompose("起重机，潮汐", WORDS).parts
    assert [p.distinct for p in parts] == [("起重", "重机"), ("潮汐",)]


def test_a_connector_after_a_mark_is_inside_a_word_under_words() -> None:
    assert split_parts("x\u0301and y", split="words") == ["x\u0301and y"]
    assert split_parts("x\u0301and y") == ["x\u0301", "y"]  # as \\w always split it


def test_word_and_space_in_a_query_are_the_pinned_versions_not_the_interpreters() -> None:
    # U+1E030 is a letter from Unicode 15.0 on: under the pinned 14.0 it is no word
    # character, so "and" after it is a connector on every Python (3.13's \w would join).
    for split in ("alnum-runs", "words"):
        assert split_parts("\U0001e030and crane", split=split) == ["\U0001e030", "crane"]
    assert split_parts("crane,\u3000tide") == ["crane", "tide"]  # ideographic space is space


def test_parts_are_stripped_of_the_pinned_white_space() -> None:
    assert RULES.space_chars() == "".join(chr(cp) for cp in range(LAST + 1) if chr(cp).isspace())
    for split in ("alnum-runs", "words"):
        assert split_parts("\u3000起重机\u2003; tide\u00a0", split=split) == ["起重机", "tide"]
    assert [p.text for p in decompose("\u3000港口 和 船\u3000", WORDS, split=False).parts] == [
        "港口 和 船"]
