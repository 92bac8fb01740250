"""bm25@4's identifier splitting: code names meet the words a request uses."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rookhaven.core.analyzer import Analyzer, split_identifiers
from rookhaven.errors import ConfigError

SPLIT = Analyzer(identifiers="split")


@pytest.mark.parametrize(("text", "terms"), [
    ("getUserRoles", ["getuserroles", "get", "user", "roles"]),
    ("HTTPServer", ["httpserver", "http", "server"]),
    ("sys_id", ["sys", "id", "sysid"]),
    ("snow_get_by_sysid", ["snow", "get", "sysid", "snowgetbysysid"]),
    ("list-repos", ["list", "repos"]),
    ("NASA report", ["nasa", "report"]),
])
def test_camel_and_snake_identifiers_keep_the_whole_and_give_their_words(
        text: str, terms: list[str]) -> None:
    assert SPLIT.terms(text) == terms


def test_a_request_in_words_and_a_request_naming_the_tool_both_meet_its_terms() -> None:
    name = set(SPLIT.terms("getUserRoles"))
    assert set(SPLIT.terms("get user roles")) <= name
    assert set(SPLIT.terms("getuserroles")) <= name
    assert set(SPLIT.terms("record by sysid")) & set(SPLIT.terms("sys_id"))


def test_a_word_touching_a_non_ascii_letter_is_not_cut() -> None:
    assert SPLIT.terms("ÉcoleNormale") == Analyzer().terms("ÉcoleNormale")
    assert split_identifiers("Éa_b") == "Éa_b"


def test_without_splitting_the_analysis_and_its_config_are_unchanged() -> None:
    plain = Analyzer(stemmer="english")
    assert "identifiers" not in plain.config()
    assert Analyzer(stemmer="english", identifiers="split").config()["identifiers"]
    assert plain.terms("getUserRoles") == ["getuserrol"]


def test_an_unknown_identifiers_mode_names_the_accepted_ones() -> None:
    with pytest.raises(ConfigError, match="split"):
        Analyzer(identifiers="camel")


@given(st.text(max_size=40))
def test_splitting_only_adds_tokens_it_never_drops_one(text: str) -> None:
    plain = Analyzer(stopwords="none").split_tokens(text)
    split = Analyzer(stopwords="none", identifiers="split").split_tokens(text)
    for token in set(plain):
        assert split.count(token) >= plain.count(token)
