"""Settings: defaults, parsing from a mapping, and one-line errors naming the variable."""

from __future__ import annotations

import dataclasses
import os
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
     "ROOKHAVEN_MAX_RECALL must be a whole number from 1 to 1000000, got 'lots'"),
    ("ROOKHAVEN_DEFAULT_RECALL", "0", "ROOKHAVEN_DEFAULT_RECALL must be a whole number from 1 "),
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
    assert (flagged.verify_sample, flagged.engine) == (7, "bm25@6")
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
    with pytest.raises(InvalidRequestError,
                       match="invalid recall budget: input should be greater") as caught:
        s.request("crane", 0)
    assert "pydantic" not in str(caught.value)
    with pytest.raises(InvalidRequestError, match="ROOKHAVEN_MAX_RECALL"):
        s.request("crane", 1001)


DURATIONS = [s.variable for s in SPECS if s.variable.endswith(
    ("_TIMEOUT", "_INTERVAL", "_AFTER", "_HEARTBEAT", "_LIMIT"))]


def test_every_duration_setting_is_checked_as_seconds() -> None:
    assert len(DURATIONS) == 11


@pytest.mark.parametrize("variable", DURATIONS)
@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e308", "0", "-1", "604801", "soon",
                                   "1e400"])
def test_a_duration_must_be_finite_positive_and_at_most_its_maximum(variable: str,
                                                                   value: str) -> None:
    with pytest.raises(ConfigError, match=rf"^{variable} must be a number of seconds > 0 and "
                                          rf"<= (604800|3600), got '{value}'$"):
        Settings.from_mapping({variable: value})


def test_a_duration_at_its_maximum_is_accepted() -> None:
    s = Settings.from_mapping({"ROOKHAVEN_WORKER_HEARTBEAT": "604800",
                               "ROOKHAVEN_REDIS_TIMEOUT": "3600"})
    assert (s.worker_heartbeat, s.redis_timeout) == (604800.0, 3600.0)
    with pytest.raises(ConfigError, match=r"ROOKHAVEN_REDIS_TIMEOUT must be .* <= 3600"):
        Settings.from_mapping({"ROOKHAVEN_REDIS_TIMEOUT": "3601"})


@pytest.mark.parametrize(("variable", "value", "bound"), [
    ("ROOKHAVEN_MCP_PORT", "65536", "from 1 to 65535"),
    ("ROOKHAVEN_METRICS_PORT", "0", "from 1 to 65535"),
    ("ROOKHAVEN_MAX_RECALL", "9" * 5000, "from 1 to 1000000"),
    ("ROOKHAVEN_CORPUS_CHUNK_BYTES", str(1 << 40), "from 1024 to 536870912"),
    ("ROOKHAVEN_MAX_METADATA_DEPTH", "100000", "from 1 to 256"),
])
def test_whole_numbers_have_an_upper_bound_too(variable: str, value: str, bound: str) -> None:
    with pytest.raises(ConfigError, match=f"{variable} must be a whole number {bound}") as caught:
        Settings.from_mapping({variable: value})
    assert len(str(caught.value)) < 200  # the 5,000-digit value is cut short


@pytest.mark.parametrize("prefix", ["rh*", "a:b", "../../etc", "-x", "a b", "x\ny", "r" * 65,
                                    "[ab]", "é"])
def test_the_key_prefix_must_be_a_safe_literal(prefix: str) -> None:
    with pytest.raises(ConfigError, match=r"ROOKHAVEN_KEY_PREFIX must be 1 to 64 letters.*"
                                          r"\(\[A-Za-z0-9\]") as caught:
        Settings.from_mapping({"ROOKHAVEN_KEY_PREFIX": prefix})
    assert "\n" not in str(caught.value)


def test_usual_key_prefixes_are_accepted() -> None:
    for prefix in ("rookhaven", "rh-test-0123abcd", "prod.rookhaven_2", "r" * 64):
        assert Settings.from_mapping({"ROOKHAVEN_KEY_PREFIX": prefix}).key_prefix == prefix


def test_a_value_that_is_not_utf8_names_the_variable() -> None:
    with pytest.raises(ConfigError, match=r"^ROOKHAVEN_DEFAULT_SEED is not valid UTF-8$"):
        Settings.from_mapping({"ROOKHAVEN_DEFAULT_SEED": "\udcff"})


def test_flags_are_held_to_the_rules_of_their_setting() -> None:
    with pytest.raises(ConfigError, match=r"the flag for ROOKHAVEN_MCP_PORT must be a whole "
                                          r"number from 1 to 65535, got '70000'"):
        Settings().with_flags({"mcp_port": 70000})
    with pytest.raises(ConfigError, match=r"^--port must be a whole number from 1 to 65535"):
        Settings().with_flags({"mcp_port": 70000}, {"mcp_port": "--port"})
    assert Settings().with_flags({"mcp_port": 65535}).mcp_port == 65535


def test_the_new_limits_have_sane_defaults() -> None:
    s = Settings.from_mapping({})
    assert (s.max_doc_bytes, s.max_id_len, s.max_seed_len, s.max_metadata_bytes,
            s.max_metadata_depth, s.max_corpus_bytes) == (1 << 20, 256, 256, 64 << 10, 32, 2 << 30)
    assert s.document_limits.max_metadata_depth == 32


def test_a_seed_over_the_limit_or_not_utf8_is_refused_by_the_request_builder() -> None:
    s = Settings.from_mapping({"ROOKHAVEN_MAX_SEED_LEN": "8", "ROOKHAVEN_DEFAULT_SEED": "d"})
    with pytest.raises(InvalidRequestError, match=r"seed is 9 characters; the limit is 8 "
                                                  r"\(ROOKHAVEN_MAX_SEED_LEN\)"):
        s.request("crane", seed="x" * 9)
    with pytest.raises(InvalidRequestError, match=r"seed is not valid UTF-8"):
        s.request("crane", seed="\udcff")
    with pytest.raises(InvalidRequestError, match=r"query is not valid UTF-8"):
        s.request("crane \ud800")
    assert s.request("crane", seed="x" * 8).seed == "x" * 8


def test_a_default_seed_longer_than_the_seed_limit_is_refused() -> None:
    with pytest.raises(ConfigError, match="longer than ROOKHAVEN_MAX_SEED_LEN"):
        Settings.from_mapping({"ROOKHAVEN_DEFAULT_SEED": "x" * 20, "ROOKHAVEN_MAX_SEED_LEN": "8"})


def test_corpus_files_are_loaded_within_the_settings_limits(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"_id": "abcdefghijk"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"is 11 characters; the limit is 10 "
                                         r"\(ROOKHAVEN_MAX_ID_LEN\)"):
        Settings.from_mapping({"ROOKHAVEN_MAX_ID_LEN": "10"}).load_corpus(path)
    assert Settings().load_corpus(path).ids == ("abcdefghijk",)


def test_the_suite_runs_without_a_contributors_exported_settings() -> None:
    # tests/conftest.py drops them: an in-process command must not reach their store.
    exported = [n for n in os.environ
                if n.startswith("ROOKHAVEN_") and not n.startswith("ROOKHAVEN_TEST_")]
    assert exported == []
