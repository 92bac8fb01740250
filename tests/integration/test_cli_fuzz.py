"""Fuzzed CLI arguments, settings and corpus files: exit 0, 1 or 2, never a traceback.

Bad input must exit 2 with exactly one line on stderr (the README's promise), whatever the
command, flag values (NaN, infinities, huge and negative numbers, odd unicode, bytes that
are not UTF-8), ROOKHAVEN_* values or corpus file content (deep nesting, huge strings,
invalid UTF-8, duplicate ids, wrong types, /dev/zero). Cases run in one long-lived worker
process (tests/cli_fuzz_worker.py) under an address-space limit and a per-case timeout,
so unbounded memory or a hang fails the test instead of the machine.
"""

from __future__ import annotations

import contextlib
import json
import resource
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT

MEMORY_LIMIT = 1536 << 20  # bytes of address space for the worker
CASE_TIMEOUT = 30.0  # seconds one case may take: more is a hang
FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                       HealthCheck.too_slow])


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


class Worker:
    """The worker process: one case in, one answer out, each within CASE_TIMEOUT."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / "cli_fuzz_worker.py")], cwd=ROOT,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            preexec_fn=_limit_memory,
            env={"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1"})

    def run(self, argv: list[str], env: dict[str, str]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps({"argv": argv, "env": env}).encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            self._died(argv, env)
        ready, _, _ = select.select([self.proc.stdout], [], [], CASE_TIMEOUT)
        if not ready:
            self.proc.kill()
            pytest.fail(f"hung for {CASE_TIMEOUT} s: rookhaven {argv!r} with {env!r}")
        line = self.proc.stdout.readline()
        if not line:
            self._died(argv, env)
        answer: dict[str, Any] = json.loads(line)
        return answer

    def _died(self, argv: list[str], env: dict[str, str]) -> NoReturn:
        self.proc.wait(timeout=10)
        err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
        pytest.fail(f"the worker died (memory limit?) on rookhaven {argv!r} with {env!r}: "
                    f"{err[-2000:]}")

    def close(self) -> None:
        if self.proc.stdin is not None:
            # If it died, the test that saw it has failed already.
            with contextlib.suppress(BrokenPipeError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


@pytest.fixture
def worker() -> Iterator[Worker]:
    started = Worker()
    yield started
    started.close()


def check(worker: Worker, argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run one case and assert the CLI's promise for it."""
    answer = worker.run(argv, env)
    where = f"rookhaven {argv!r} with {env!r}"
    assert answer["escaped"] is None, f"{where} raised:\n{answer['escaped']}"
    assert answer["status"] in (0, 1, 2), f"{where} exited {answer['status']}"
    err: str = answer["stderr"]
    assert "Traceback" not in err, f"{where}:\n{err}"
    assert "out of memory" not in err, f"{where} ran out of memory: {err}"
    if answer["status"] == 2:
        assert err.endswith("\n") and err.count("\n") == 1, f"{where}: not one line: {err!r}"
    return answer


# Values a flag may be given: numbers of every awkward kind, odd text, undecodable bytes
# (argv holds those as lone surrogates, as Python decodes them).
NUMBERS = st.sampled_from(["nan", "NaN", "inf", "-inf", "1e308", "-1e308", "1e400", "-1", "0",
                           "-0", "0.5", "1", "3", "10", "1000", "1001", "65536", "9" * 30,
                           "9" * 5000, "0x10", "1_000", " 5 ", "", "５"])
ODD_TEXT = st.sampled_from(["", " ", "\n", "a\nb", "\t", "\x00", "\udcff", "caf\udce9",
                            "\u202e", "🦀", "Ω" * 300, "x" * 5000, "*", "../../etc", "latest",
                            "sha256:" + "0" * 64, "-", "--", "bm25@9", "bm25", "tfcosine@1",
                            "crane faults and tide windows"])
VALUES = st.one_of(NUMBERS, ODD_TEXT, st.text(max_size=20))
SHORT = ["--timeout", "--older-than", "--sample", "--budget"]


def flags(options: list[str]) -> st.SearchStrategy[list[str]]:
    """Some of ``options``, each with a fuzzed value; occasionally a value-less flag."""
    pair = st.tuples(st.sampled_from(options), VALUES).map(list)
    return st.lists(st.one_of(pair, st.sampled_from(
        [["--wait"], ["--no-decompose"], ["--all"], ["--history"], ["--json"], ["--bogus"]])),
        max_size=4).map(lambda pairs: [w for p in pairs for w in p])


GOOD_CORPUS = ('{"_id": "d1", "title": "Crane", "text": "crane fault at berth 7"}\n'
               '{"_id": "d2", "text": "tide windows delay berths"}\n')


def _arguments(corpus: str) -> st.SearchStrategy[list[str]]:
    retrieve = flags(["--query", "--budget", "--seed", "--engine", "--provider"]).map(
        lambda f: ["retrieve", "--corpus", corpus, "--query", "crane", *f])
    add = st.tuples(st.sampled_from([corpus, "/dev/zero", "/nonexistent", "/", "\udcff"]),
                    flags(["--name"])).map(lambda t: ["corpus", "add", t[0], *t[1]])
    # A valid wait is short (there are no workers here), so only a bad one is fuzzed freely.
    submit = st.tuples(flags(["--query", "--budget", "--seed", "--corpus", "--engine",
                              "--timeout"]), st.sampled_from(["0.2", "nan", "-1", "inf"])).map(
        lambda t: ["submit", "--query", "crane", *t[0], "--wait", "--timeout", t[1]])
    sweep = flags(["--older-than"]).map(lambda f: ["sweep", *f])
    verify = flags(["--sample", "--seed", "--corpus", "--stratify", "--key"]).map(
        lambda f: ["verify", *f])
    return st.one_of(retrieve, add, submit, sweep, verify)


@pytest.fixture
def corpus_file(tmp_path: Path) -> str:
    path = tmp_path / "c.jsonl"
    path.write_text(GOOD_CORPUS, encoding="utf-8")
    return str(path)


@settings(FUZZ, max_examples=300)
@given(data=st.data())
def test_fuzzed_arguments_exit_0_1_or_2_and_bad_ones_in_one_line(
        data: st.DataObject, worker: Worker, corpus_file: str, redis_url: str,
        key_prefix: str) -> None:
    argv = data.draw(_arguments(corpus_file))
    check(worker, argv, {"ROOKHAVEN_REDIS_URL": redis_url, "ROOKHAVEN_KEY_PREFIX": key_prefix,
                         "ROOKHAVEN_REDIS_TIMEOUT": "2"})


SETTINGS = ["ROOKHAVEN_DEFAULT_RECALL", "ROOKHAVEN_MAX_RECALL", "ROOKHAVEN_MAX_QUERY_LEN",
            "ROOKHAVEN_MAX_CORPUS_DOCS", "ROOKHAVEN_MAX_CORPUS_BYTES", "ROOKHAVEN_MAX_DOC_BYTES",
            "ROOKHAVEN_MAX_ID_LEN", "ROOKHAVEN_MAX_METADATA_BYTES",
            "ROOKHAVEN_MAX_METADATA_DEPTH", "ROOKHAVEN_MAX_SEED_LEN", "ROOKHAVEN_DEFAULT_SEED",
            "ROOKHAVEN_ENGINE", "ROOKHAVEN_REDIS_TIMEOUT",
            "ROOKHAVEN_CORPUS_CHUNK_BYTES", "ROOKHAVEN_BATCH_SIZE", "ROOKHAVEN_JOB_MAX_ATTEMPTS",
            "ROOKHAVEN_SWEEP_AFTER", "ROOKHAVEN_SWEEP_INTERVAL", "ROOKHAVEN_TASK_TIME_LIMIT",
            "ROOKHAVEN_VISIBILITY_TIMEOUT", "ROOKHAVEN_UNACKED_RESTORE_INTERVAL",
            "ROOKHAVEN_WORKER_HEARTBEAT", "ROOKHAVEN_INDEX_CACHE_SIZE", "ROOKHAVEN_MCP_PORT",
            "ROOKHAVEN_METRICS_PORT", "ROOKHAVEN_VERIFY_AT", "ROOKHAVEN_VERIFY_SAMPLE",
            "ROOKHAVEN_VERIFY_STRATIFY", "ROOKHAVEN_CHECKPOINT_INTERVAL",
            "ROOKHAVEN_MCP_READ_TIMEOUT", "ROOKHAVEN_CORPUS_PATH"]
# A different valid prefix would write keys the fixture does not clean: only bad ones. Not
# "": an empty setting is an unset one, so it means the default prefix, and a sweep, verify
# or corpus add under it left `rookhaven:*` keys in the suite's database.
BAD_PREFIXES = st.sampled_from(["a*b", "x:y", "../../etc", "a\nb", " ", "\udcff", "r" * 65])


@settings(FUZZ, max_examples=200)
@given(data=st.data())
def test_fuzzed_settings_exit_0_1_or_2_and_bad_ones_in_one_line(
        data: st.DataObject, worker: Worker, corpus_file: str, redis_url: str,
        key_prefix: str) -> None:
    # No NUL: no process environment can hold one.
    env = data.draw(st.dictionaries(st.sampled_from(SETTINGS),
                                    VALUES.filter(lambda v: "\x00" not in v), max_size=4))
    env["ROOKHAVEN_LOG_LEVEL"] = data.draw(st.sampled_from(["warning", "error", "loud"]))
    env |= {"ROOKHAVEN_REDIS_URL": redis_url, "ROOKHAVEN_KEY_PREFIX": key_prefix}
    if data.draw(st.booleans()):
        env["ROOKHAVEN_KEY_PREFIX"] = data.draw(BAD_PREFIXES)
    env["ROOKHAVEN_REDIS_TIMEOUT"] = "2"  # a valid long one would only make a hang slower
    command = data.draw(st.sampled_from([
        ["retrieve", "--corpus", corpus_file, "--query", "crane"], ["retrieve", "--query", "x"],
        ["corpus", "add", corpus_file], ["sweep"], ["verify", "--sample", "2"],
        ["submit", "--query", "crane", "--wait", "--timeout", "0.2"]]))
    check(worker, command, env)


def _nested(depth: int) -> str:
    return '{"k":' * depth + "1" + "}" * depth


RECORDS = st.one_of(
    st.builds(lambda i, t: json.dumps({"_id": i, "text": t}), st.text(max_size=8), ODD_TEXT),
    st.sampled_from([
        '{"_id": "d", "metadata": ' + _nested(40) + "}",
        '{"_id": "d", "metadata": ' + _nested(1000) + "}",
        '{"_id": "d", "metadata": ' + _nested(5000) + "}",
        '{"_id": "big", "text": "' + "x" * (2 << 20) + '"}',
        '{"_id": "meta", "metadata": {"m": "' + "y" * (100 << 10) + '"}}',
        '{"_id": "' + "i" * 300 + '"}', '{"_id": "a"}', '{"id": "a", "_id": "b"}',
        '{"_id": 7}', '{"_id": null}', '{"_id": ["x"]}', '{"_id": "t", "text": 5}',
        '{"_id": "f", "fields": {"title": 3}}', '{"_id": "f", "fields": []}',
        '{"_id": "m", "metadata": []}', '{"_id": "n", "metadata": {"big": 1e999}}',
        '{"_id": "n", "metadata": {"big": 123456789012345678901234567890}}',
        '{"_id": "s", "text": "\\ud800"}', '["not", "an", "object"]', "17", "null", "{",
        '{"_id": "e", "text": "caf\xe9"}', "\ufeff" + '{"_id": "bom"}', " " * 100,
    ]),
)


def _file(lines: list[str], array: bool, junk: bytes) -> bytes:
    if array:
        return ("[" + ",".join(lines) + "]").encode("utf-8", "surrogatepass") + junk
    return "\n".join(lines).encode("utf-8", "surrogatepass") + b"\n" + junk


@settings(FUZZ, max_examples=200)
@given(lines=st.lists(RECORDS, max_size=4), array=st.booleans(),
       junk=st.sampled_from([b"", b"\xff\xfe", b"\x80abc", b"\xc3", b"\x00" * 10]),
       command=st.sampled_from(["retrieve", "add"]))
def test_fuzzed_corpus_files_exit_0_1_or_2_and_bad_ones_in_one_line(
        lines: list[str], array: bool, junk: bytes, command: str, worker: Worker,
        tmp_path: Path, redis_url: str, key_prefix: str) -> None:
    path = tmp_path / "fuzzed.jsonl"
    path.write_bytes(_file(lines, array, junk))
    argv = (["retrieve", "--corpus", str(path), "--query", "crane"] if command == "retrieve"
            else ["corpus", "add", str(path), "--name", "fuzzed"])
    env = {"ROOKHAVEN_REDIS_URL": redis_url, "ROOKHAVEN_KEY_PREFIX": key_prefix}
    check(worker, argv, {} if command == "retrieve" else env)


@pytest.mark.parametrize("argv", [
    ["retrieve", "--corpus", "/dev/zero", "--query", "crane"],
    ["corpus", "add", "/dev/zero"],
])
def test_an_endless_corpus_file_is_refused_in_one_line_within_the_memory_limit(
        worker: Worker, argv: list[str], redis_url: str, key_prefix: str) -> None:
    answer = check(worker, argv, {"ROOKHAVEN_REDIS_URL": redis_url,
                                  "ROOKHAVEN_KEY_PREFIX": key_prefix})
    assert answer["status"] == 2 and "ROOKHAVEN_MAX_DOC_BYTES" in answer["stderr"]
