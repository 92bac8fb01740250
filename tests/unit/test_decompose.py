"""Decomposition: connectors and punctuation split needs; empty and repeated parts are dropped."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rookhaven.core.analyzer import Analyzer
from rookhaven.core.decompose import _ASCII_SEPARATOR, decompose, decompose_each, split_parts

A = Analyzer()


def test_the_seed_example_splits_into_two_subqueries() -> None:
    parts = decompose("crane faults and tide windows", A).parts
    assert [(p.text, p.distinct, p.weight) for p in parts] == [
        ("crane faults", ("crane", "faults"), 2), ("tide windows", ("tide", "windows"), 2)]


def test_every_connector_and_separator_splits() -> None:
    query = ("cranes as well as tugs along with pilots together with gates in addition to "
             "reefers and tides or berths then customs also holds plus depots; a! b? c & d\ne")
    assert split_parts(query) == ["cranes", "tugs", "pilots", "gates", "reefers", "tides",
                                  "berths", "customs", "holds", "depots", "a", "b", "c", "d", "e"]


def test_connectors_match_whole_words_in_any_case_only() -> None:
    assert split_parts("Brandon AND Portland") == ["Brandon", "Portland"]
    assert split_parts("sandor ortho") == ["sandor ortho"]


def test_commas_periods_and_colons_split_only_before_space_so_numbers_stay_whole() -> None:
    assert split_parts("draught 3.5 m, 1,000 teu: ok.") == ["draught 3.5 m", "1,000 teu", "ok"]


def test_parts_without_content_terms_are_dropped_with_a_reason() -> None:
    result = decompose("the crane and of the", A)
    assert [p.text for p in result.parts] == ["the crane"]
    assert result.dropped == (("of the", "no content terms"),)


def test_a_part_repeating_an_earlier_set_of_terms_is_dropped() -> None:
    result = decompose("tide windows; windows tide", A)
    assert len(result.parts) == 1
    assert result.dropped == (("windows tide", "same terms as subquery 0"),)


def test_weight_counts_distinct_content_terms_but_terms_keep_repeats() -> None:
    (part,) = decompose("crane crane fault", A).parts
    assert part.weight == 2
    assert part.terms == ("crane", "crane", "fault")


def test_without_splitting_the_whole_query_is_one_subquery() -> None:
    (part,) = decompose("crane faults and tide windows", A, split=False).parts
    assert part.distinct == ("crane", "faults", "tide", "windows")


def test_a_query_of_only_stop_words_has_no_subqueries() -> None:
    result = decompose("and the, of", A)
    assert result.parts == ()
    assert len(result.dropped) == 2


ASCII_PIECES = st.sampled_from(["and", "AND", "or", "Or", "then", "also", "plus", "as",
                                "well", "along", "with", "together", "in", "addition", "to",
                                "android", "order", "sand", "x", "3", "3.5", "_", "and_", " ",
                                "  ", "\t", "\x1c", "\n", ",", ", ", ".", ":", ";", "!", "?",
                                "&", "-", "/", "(", "'", "crane", "Berth"])


@given(st.lists(ASCII_PIECES, max_size=12).map("".join))
def test_an_ascii_query_splits_as_the_separator_pattern_splits_it(query: str) -> None:
    # split_parts skips the pattern when a quick look finds no separator could match.
    expected = [p for piece in _ASCII_SEPARATOR.split(query) if (p := piece.strip())]
    assert split_parts(query) == expected


@given(st.lists(ASCII_PIECES, max_size=12).map("".join), st.booleans(),
       st.sampled_from([Analyzer(), Analyzer(stemmer="english", identifiers="split"),
                        Analyzer(stemmer="english", split="visible-words")]))
def test_a_plain_ascii_query_decomposes_as_each_part_on_its_own(
        query: str, split: bool, analyzer: Analyzer) -> None:
    # decompose answers a query of letters, digits and spaces without a connector's first
    # word without splitting it; decompose_each is the reference.
    assert decompose(query, analyzer, split=split) == decompose_each(query, analyzer,
                                                                     split=split)
