"""Settings: defaults, parsing from a mapping, and one-line errors naming the variable."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rookhaven.config import SPECS, Settings
from rookhaven.errors import ConfigError, InputError, InvalidRequestError
from rookhaven.models import RetrievalRequest


def test_defaults_match_the_documented_values() -> None:
    s = Settings.from_mapping({})
    assert (s.default_recall, s.max_recall, s.max_query_len, s.max_corpus_docs,
            s.default_seed, s.log_level, s.corpus_path) == (
        10, 1000, 4096, 100_000, "rookhaven-default", "info", None)


def test_every_variable_is_read() -> None:
    s = Settings.from_mapping({
        "ROOKHAVEN_CORPUS_PATH": "/data/c.jsonl", "ROOKHAVEN_DEFAULT_RECALL": "5",
        "ROOKHAVEN_MAX_RECALL": "50", "ROOKHAVEN_MAX_QUERY_LEN": "100",
        "ROOKHAVEN_MAX_CORPUS_DOCS": "7", "ROOKHAVEN_DEFAULT_SEED": "x",
        "ROOKHAVEN_LOG_LEVEL": "DEBUG"})
    assert (s.corpus_path, s.default_recall, s.max_recall, s.max_query_len, s.max_corpus_docs,
            s.default_seed, s.log_level) == (Path("/data/c.jsonl"), 5, 50, 100, 7, "x", "debug")


def test_every_spec_has_a_meaning_for_the_docs() -> None:
    assert all(spec.meaning and spec.variable.startswith("ROOKHAVEN_") for spec in SPECS)


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("ROOKHAVEN_MAX_RECALL", "lots",
     "ROOKHAVEN_MAX_RECALL must be a whole number >= 1, got 'lots'"),
    ("ROOKHAVEN_DEFAULT_RECALL", "0", "ROOKHAVEN_DEFAULT_RECALL must be a whole number >= 1"),
    ("ROOKHAVEN_LOG_LEVEL", "loud", "ROOKHAVEN_LOG_LEVEL must be one of: debug, info"),
    ("ROOKHAVEN_DEFAULT_SEED", "  ", "ROOKHAVEN_DEFAULT_SEED must not be empty"),
])
def test_a_bad_value_names_the_variable_and_what_is_accepted(
        variable: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Settings.from_mapping({variable: value})


def test_a_default_recall_above_the_maximum_is_refused() -> None:
    with pytest.raises(ConfigError, match="exceeds ROOKHAVEN_MAX_RECALL"):
        Settings.from_mapping({"ROOKHAVEN_DEFAULT_RECALL": "20", "ROOKHAVEN_MAX_RECALL": "10"})


def test_requests_over_the_limits_are_refused_with_the_limit() -> None:
    s = Settings.from_mapping({"ROOKHAVEN_MAX_QUERY_LEN": "10", "ROOKHAVEN_MAX_RECALL": "5",
                               "ROOKHAVEN_DEFAULT_RECALL": "5"})
    with pytest.raises(InvalidRequestError, match="limit is 10"):
        s.check_request(RetrievalRequest(query="x" * 11))
    with pytest.raises(InvalidRequestError, match="maximum 5"):
        s.check_request(RetrievalRequest(query="x", recallBudget=6))
    assert s.check_request(RetrievalRequest(query="x" * 10, recallBudget=5))


def test_flags_override_the_environment() -> None:
    s = Settings.from_mapping({"ROOKHAVEN_DEFAULT_SEED": "env"})
    assert s.with_overrides(default_seed="flag", max_recall=None).default_seed == "flag"


def test_every_setting_has_exactly_one_spec_and_its_default_comes_from_settings() -> None:
    fields = [f.name for f in dataclasses.fields(Settings)]
    assert sorted(spec.field for spec in SPECS) == sorted(fields)
    defaults = Settings()
    assert all(spec.default == getattr(defaults, spec.field) for spec in SPECS)


def test_flags_named_like_a_setting_win_over_the_environment_and_others_are_ignored() -> None:
    s = Settings.from_mapping({"ROOKHAVEN_VERIFY_SAMPLE": "50", "ROOKHAVEN_ENGINE": "bm25"})
    flagged = s.with_flags({"verify_sample": 7, "engine": None, "query": "crane"})
    assert (flagged.verify_sample, flagged.engine) == (7, "bm25@2")
    assert s.with_flags({"engine": "bm25@1"}).engine == "bm25@1"
    with pytest.raises(InputError, match="unknown engine 'bm25@9'; choose one of: tfcosine@1"):
        s.with_flags({"engine": "bm25@9"})
    with pytest.raises(ConfigError, match="ROOKHAVEN_ENGINE names an unknown engine"):
        Settings.from_mapping({"ROOKHAVEN_ENGINE": "bm26"})
    with pytest.raises(ConfigError, match="renamed ROOKHAVEN_ENGINE"):
        Settings.from_mapping({"ROOKHAVEN_PROVIDER": "bm25"})


def test_requests_take_their_defaults_from_settings_and_bad_ones_name_the_field() -> None:
    s = Settings.from_mapping({"ROOKHAVEN_DEFAULT_RECALL": "4", "ROOKHAVEN_DEFAULT_SEED": "z"})
    request = s.request("crane")
    assert (request.recall_budget, request.seed, request.decompose) == (4, "z", True)
    assert s.request("crane", 2, "a", False).model_dump(by_alias=True) == {
        "query": "crane", "recallBudget": 2, "seed": "a", "decompose": False}
    with pytest.raises(InvalidRequestError, match="recall_budget: Input should be") as caught:
        s.request("crane", 0)
    assert "pydantic" not in str(caught.value)
    with pytest.raises(InvalidRequestError, match="ROOKHAVEN_MAX_RECALL"):
        s.request("crane", 1001)
