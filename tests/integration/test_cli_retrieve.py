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
