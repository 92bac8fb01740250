"""Pinned text rules: on CPython 3.11 the Unicode 14.0 rules are exactly today's analysis."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rookhaven.core.textrules import UNICODE_VERSIONS, text_rules
from rookhaven.errors import ConfigError
from tests.conftest import ROOT
from tests.pinned_text_script import CONTEXTS as CROSS_PYTHON_CONTEXTS
from tests.pinned_text_script import PINNED_DIGESTS, TokenDigest
from tests.reference_analysis import interpreter_split_tokens as todays_split_tokens

pytestmark = pytest.mark.no_kernels  # text rules only
ON_UNICODE_14 = unicodedata.unidata_version == "14.0.0"
needs_14 = pytest.mark.skipif(not ON_UNICODE_14, reason="today's analysis is the reference only "
                              "under Unicode 14.0 (CPython 3.11)")
RULES = text_rules("14.0")
GENERATOR = ROOT / "tools" / "generate_chartables.py"
PY311 = Path("~/.pyenv/versions/3.11.7/bin/python3.11").expanduser()
LAST = 0x10FFFF
# Contexts around one code point: those the cross-Python test digests (alone, inside a word,
# between a mark below and a combining mark), so that its comparison with 3.11's own
# analysis stands for the pinned rules too; then after a base letter (composition), before
# a combining mark (reordering, composition), between Hangul jamo and after a Hangul LV
# syllable (algorithmic composition).
CONTEXTS: tuple[Callable[[str], str], ...] = (
    *CROSS_PYTHON_CONTEXTS,
    lambda ch: "e" + ch,
    lambda ch: ch + "\u0301",
    lambda ch: "\u1100" + ch + "\u1161",
    lambda ch: "\uac00" + ch,
)


def _mismatches(inputs: Iterator[str], digest: TokenDigest | None = None,
                ) -> list[tuple[str, list[str], list[str]]]:
    """Up to five inputs the pinned rules split otherwise than today's analysis; the pinned
    tokens of every input go into ``digest`` on the way, if one is given."""
    split = RULES.split_tokens
    found = []
    for s in inputs:
        a = split(s)
        if digest is not None:
            digest.add(a)
        if a != (b := todays_split_tokens(s)):
            found.append((s, a, b))
    return found[:5]


def test_the_registry_names_its_versions_and_refuses_others_with_the_list() -> None:
    assert list(UNICODE_VERSIONS) == ["14.0"]
    assert RULES.version == "14.0.0"
    with pytest.raises(ConfigError, match=r"'9\.0'.*14\.0"):
        text_rules("9.0")


def test_ascii_text_is_lowercased_and_split_at_every_non_alphanumeric() -> None:
    assert RULES.split_tokens("Crane-4 hoist_FAULT (berth 7)\x1c\x1fx") == [
        "crane", "4", "hoist", "fault", "berth", "7", "x"]


def test_unassigned_code_points_are_kept_and_split_tokens() -> None:
    # U+1E030 (Cyrillic modifier letter, Unicode 15.0) is unassigned in 14.0.
    assert RULES.normalize("AB\U0001e030\u0301") == "ab\U0001e030\u0301"
    assert RULES.split_tokens("ab\U0001e030cd") == ["ab", "cd"]


@needs_14
@pytest.mark.slow
@pytest.mark.parametrize("context", range(len(CONTEXTS)))
def test_every_code_point_in_every_context_tokenises_as_today(context: int) -> None:
    wrap = CONTEXTS[context]
    # The cross-Python test's contexts are digested too: the digests 3.13 must give are
    # read from a file, which this keeps equal to 3.11's own analysis.
    digest = TokenDigest() if context < len(CROSS_PYTHON_CONTEXTS) else None
    assert _mismatches((wrap(chr(cp)) for cp in range(LAST + 1)), digest) == []
    if digest is not None:
        pinned = json.loads(PINNED_DIGESTS.read_text(encoding="utf-8"))["tokens"][context]
        assert digest.hexdigest() == pinned, f"{PINNED_DIGESTS} is not 3.11's analysis"


@needs_14
def test_every_code_point_normalises_as_today() -> None:
    odd = [cp for cp in range(LAST + 1) if RULES.normalize(chr(cp))
           != unicodedata.normalize("NFKC", chr(cp)).casefold()]
    assert odd == []


@needs_14
def test_the_word_class_of_re_is_isalnum_or_underscore() -> None:
    # The ground of the ALNUM table: sre's Unicode word class is Py_UNICODE_ISALNUM or '_'.
    word = re.compile(r"[^\W_]")
    assert [cp for cp in range(LAST + 1)
            if bool(word.match(chr(cp))) != chr(cp).isalnum()] == []


_INTERESTING = st.sampled_from(
    "\u0301\u0323\u0308\u0345\u1100\u1161\u11a8\uac00\u00df\u0130\u03a3\u1e9e\ufb01\uff21"
    "\u2460\u00bd\u0660\U0001d400\U0001e030\U0001e08f\U000e0001\ud800\udfff\ufdd0\U0010ffff_ ")


@needs_14
@given(st.text(st.one_of(st.characters(min_codepoint=0, max_codepoint=LAST, codec=None,
                                       categories=None), _INTERESTING), max_size=40))
def test_random_text_from_all_planes_tokenises_as_today(text: str) -> None:
    assert RULES.split_tokens(text) == todays_split_tokens(text)
    assert RULES.normalize(text) == unicodedata.normalize("NFKC", text).casefold()


def _python_with_unicode_14() -> str | None:
    if ON_UNICODE_14:
        return sys.executable
    return str(PY311) if PY311.exists() else None


@needs_14
def test_the_checked_in_tables_are_what_the_generator_writes() -> None:
    spec = importlib.util.spec_from_file_location("generate_chartables", GENERATOR)
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    checked_in = (ROOT / "rookhaven" / "core" / "chartables" / "unicode_14_0.py").read_text()
    assert generator.render("14.0") == checked_in




@needs_14
def test_the_pinned_word_and_space_classes_are_what_re_matched_under_14() -> None:
    # A query's separators (core.decompose) use them in place of \w and \s.
    word, space = re.compile(f"[{RULES.word_class()}]"), re.compile(f"[{RULES.space_class()}]")
    assert [cp for cp in range(LAST + 1)
            if bool(word.match(chr(cp))) != bool(re.match(r"\w", chr(cp)))] == []
    assert [cp for cp in range(LAST + 1)
            if bool(space.match(chr(cp))) != bool(re.match(r"\s", chr(cp)))] == []


@given(st.text(st.characters(max_codepoint=127)))
def test_ascii_text_splits_as_lowering_then_mapping_each_gap_to_a_space(text: str) -> None:
    # split_tokens reads ASCII through one bytes table; this is the table it stands for.
    for version in UNICODE_VERSIONS:
        rules = text_rules(version)
        assert rules.split_tokens(text) == text.lower().translate(rules.ascii_gaps).split()
