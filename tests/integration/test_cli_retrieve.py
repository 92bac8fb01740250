"""``rookhaven retrieve``: canonical bytes on stdout; bad input is exit 2 with one stderr line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rookhaven import Document, RetrievalRequest, canonical_bytes, retrieve
from tests.conftest import ROOT

CORPUS = ROOT / "tests" / "golden" / "corpora" / "port_small.jsonl"


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ROOKHAVEN_")}
    return subprocess.run([sys.executable, "-m", "rookhaven.cli.main", *args],
                          capture_output=True, env={**clean, **(env or {})}, timeout=60,
                          check=False)


def test_retrieve_prints_exactly_the_canonical_bytes_of_the_library_result(tmp_path: Path) -> None:
    corpus = tmp_path / "c.json"
    corpus.write_text(json.dumps([
        {"id": "d1", "text": "crane maintenance schedule for berth 7"},
        {"id": "d2", "text": "berth delays caused by tide windows"}]))
    done = run_cli("retrieve", "--corpus", str(corpus), "--query",
                   "crane faults and tide windows", "--budget", "4", "--seed", "run-1",
                   "--provider", "tfcosine")
    assert done.returncode == 0, done.stderr
    expected = retrieve(
        RetrievalRequest(query="crane faults and tide windows", recallBudget=4, seed="run-1"),
        [Document(id="d1", text="crane maintenance schedule for berth 7"),
         Document(id="d2", text="berth delays caused by tide windows")], "tfcosine")
    assert done.stdout == canonical_bytes(expected) + b"\n"


def test_the_corpus_and_defaults_come_from_the_environment() -> None:
    done = run_cli("retrieve", "--query", "crane", env={
        "ROOKHAVEN_CORPUS_PATH": str(CORPUS), "ROOKHAVEN_DEFAULT_RECALL": "3",
        "ROOKHAVEN_DEFAULT_SEED": "env-seed"})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert len(result["hits"]) == 3
    assert result["audit"]["seed"] == "env-seed"


@pytest.mark.parametrize(("args", "env", "message"), [
    (["retrieve", "--corpus", "/nonexistent/c.json", "--query", "x"], {},
     "/nonexistent/c.json: no such corpus file"),
    (["retrieve", "--query", "x"], {}, "no corpus given: pass --corpus FILE"),
    (["retrieve", "--corpus", str(CORPUS), "--query", "x", "--budget", "0"], {},
     "argument --budget: expected a whole number >= 1, got 0"),
    (["retrieve", "--corpus", str(CORPUS), "--query", "x", "--budget", "2000"], {},
     "recall budget 2000 is over the maximum 1000"),
    (["retrieve", "--corpus", str(CORPUS), "--query", "   "], {}, "query must contain some text"),
    (["retrieve", "--corpus", str(CORPUS), "--query", "x" * 5000], {},
     "query is 5000 characters; the limit is 4096"),
    (["retrieve", "--corpus", str(CORPUS), "--query", "x", "--provider", "nope"], {},
     "unknown engine 'nope'"),
    (["retrieve", "--corpus", str(CORPUS), "--query", "x"], {"ROOKHAVEN_MAX_RECALL": "many"},
     "ROOKHAVEN_MAX_RECALL must be a whole number"),
    (["retrieve", "--corpus", str(CORPUS), "--query", "x"], {"ROOKHAVEN_MAX_CORPUS_DOCS": "5"},
     "more than 5 documents"),
    (["frobnicate"], {}, "invalid choice: 'frobnicate'"),
    # Bytes that are not UTF-8 reach argv and the environment as lone surrogates.
    (["retrieve", "--corpus", str(CORPUS), "--query", "x", "--seed", os.fsdecode(b"\xff")], {},
     "rookhaven: error: --seed is not valid UTF-8"),
    (["retrieve", "--corpus", str(CORPUS), "--query", "x"],
     {"ROOKHAVEN_DEFAULT_SEED": os.fsdecode(b"\xff")}, "ROOKHAVEN_DEFAULT_SEED is not valid"),
    (["retrieve", "--corpus", str(CORPUS), "--query", "x"], {"ROOKHAVEN_REDIS_TIMEOUT": "inf"},
     "ROOKHAVEN_REDIS_TIMEOUT must be a number of seconds > 0 and <= 3600, got 'inf'"),
    (["retrieve", "--corpus", str(CORPUS), "--query", "x"],
     {"ROOKHAVEN_WORKER_HEARTBEAT": "1e308"}, "ROOKHAVEN_WORKER_HEARTBEAT must be a number"),
    (["retrieve", "--corpus", str(CORPUS), "--query", "x"], {"ROOKHAVEN_KEY_PREFIX": "rh*"},
     "ROOKHAVEN_KEY_PREFIX must be 1 to 64 letters"),
    (["retrieve", "--corpus", str(CORPUS), "--query", "x", "--seed", "s" * 300], {},
     "seed is 300 characters; the limit is 256 (ROOKHAVEN_MAX_SEED_LEN)"),
    (["retrieve", "--corpus", "/dev/zero", "--query", "x"], {},
     "/dev/zero: line 1: longer than 1048576 bytes"),
    (["submit", "--query", "x", "--wait", "--timeout", "nan"], {}, "argument --timeout"),
    (["sweep", "--older-than", "nan"], {}, "argument --older-than"),
    # The name is checked before the file is read (or Redis asked for).
    (["corpus", "add", "/dev/zero", "--name", "a\nb"], {}, "corpus name 'a\\nb' is not allowed"),
    (["corpus", "add", "/dev/zero", "--name", "../../etc"], {}, "corpus name '../../etc' is not"),
])
def test_bad_input_exits_2_with_one_line_and_no_traceback(
        args: list[str], env: dict[str, str], message: str) -> None:
    done = run_cli(*args, env=env)
    stderr = done.stderr.decode()
    assert done.returncode == 2
    assert done.stdout == b""
    assert message in stderr
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert "Traceback" not in stderr


def test_metadata_nested_a_thousand_deep_is_one_line_naming_the_file_and_line(
        tmp_path: Path) -> None:
    corpus = tmp_path / "deep.jsonl"
    corpus.write_text('{"_id": "a"}\n{"_id": "b", "metadata": ' + '{"k":' * 1000 + "1"
                      + "}" * 1000 + "}\n", encoding="utf-8")
    done = run_cli("retrieve", "--corpus", str(corpus), "--query", "x")
    stderr = done.stderr.decode()
    assert done.returncode == 2 and len(stderr.splitlines()) == 1, stderr
    assert f"{corpus}: line 2: document 'b': 'metadata' has more than 32 levels" in stderr
