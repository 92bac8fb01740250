"""Tokenization: NFKC + case-folding, alphanumeric runs, ``_`` splits, stop words."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rookhaven.core.analyzer import Analyzer, split_tokens
from rookhaven.core.textrules import text_rules
from rookhaven.errors import ConfigError


def test_tokens_are_lowercased_alphanumeric_runs_and_underscore_splits() -> None:
    assert split_tokens("Crane-4 hoist_FAULT (berth 7)") == ["crane", "4", "hoist", "fault",
                                                              "berth", "7"]


def test_nfkc_folds_fullwidth_forms_and_ligatures() -> None:
    assert split_tokens("ＦＵＬＬＷＩＤＴＨ ﬁeld") == ["fullwidth", "field"]


def test_casefold_makes_sharp_s_meet_double_s() -> None:
    normalize = text_rules("14.0").normalize
    assert normalize("Größe") == normalize("GRÖSSE") == "grösse"


def test_composed_and_decomposed_accents_give_the_same_token() -> None:
    assert split_tokens("nai\u0308ve") == split_tokens("naïve") == ["naïve"]


def test_cjk_runs_stay_one_token_and_emoji_separate_words() -> None:
    assert split_tokens("港口 tide") == ["港口", "tide"]
    assert split_tokens("emoji🚢ship") == ["emoji", "ship"]


def test_stop_words_are_removed_but_numbers_kept() -> None:
    assert Analyzer().terms("the crane and the 7 berths") == ["crane", "7", "berths"]


def test_stemming_is_opt_in() -> None:
    assert Analyzer().terms("faults") == ["faults"]
    assert Analyzer(stemmer="english").terms("faults") == ["fault"]


def test_unknown_stop_list_and_stemmer_are_config_errors_listing_the_choices() -> None:
    with pytest.raises(ConfigError, match="english-v1"):
        Analyzer(stopwords="klingon")
    with pytest.raises(ConfigError, match="english"):
        Analyzer(stemmer="klingon")


def test_analyzer_config_names_every_term_changing_choice_and_its_pins() -> None:
    assert Analyzer(stemmer="english").config() == {
        "normalize": "nfkc-casefold", "split": "alnum-runs", "stopwords": "english-v1",
        "stemmer": "english", "unicode": "14.0.0", "stemmer_algorithm": "snowball-english@3.1.0"}
    # Engines frozen before pinning keep the config they recorded; their pins are the same.
    assert Analyzer(stemmer="english", record_pins=False).config() == {
        "normalize": "nfkc-casefold", "split": "alnum-runs", "stopwords": "english-v1",
        "stemmer": "english"}


_WHITESPACE = "".join(c for c in map(chr, range(0x3100)) if c.isspace())


@given(st.text(alphabet=st.characters(codec=None, max_codepoint=0x10FFFF), max_size=30),
       st.text(alphabet=_WHITESPACE, max_size=3), st.text(alphabet=_WHITESPACE, max_size=3))
def test_surrounding_white_space_never_changes_the_terms(core: str, before: str,
                                                         after: str) -> None:
    # The engine relies on it: a one-part query's terms are the whole query's terms.
    query = before + core + after
    assert Analyzer(stemmer="english").terms(query) == Analyzer(stemmer="english").terms(
        query.strip())
    assert split_tokens(query) == split_tokens(core)
