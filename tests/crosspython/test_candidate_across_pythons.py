"""hybrid@2's candidate gives the same result bytes under the newest other CPython: its
coverage rule, form bytes and exact-word bonus read no table of the interpreter's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.crosspython.pythons import other_cpython_venv

ROOT = Path(__file__).resolve().parents[2]

# The golden cases' corpora and requests, at their budgets and at 60 (depths past the floor),
# answered by the candidate: one digest over every result's bytes.
SCRIPT = """
import hashlib
from rookhaven import RetrievalRequest, Retriever
from rookhaven.core.analyzer import Analyzer
from rookhaven.core.providers.hybrid import GatedHybridProvider
from rookhaven.corpusfile import load_documents
from tests.golden.cases import CASES, CORPORA
digest, retrievers = hashlib.sha256(), {}
for case in CASES:
    if case.corpus not in retrievers:
        provider = GatedHybridProvider(analyzer=Analyzer(stemmer="english", split="visible-words"),
                                       version="2", record_parameters=True)
        documents = load_documents(CORPORA / case.corpus, max_docs=100_000)
        retrievers[case.corpus] = Retriever(documents, provider)
    for budget in (case.budget, 60):
        request = RetrievalRequest(query=case.query, recall_budget=budget, seed=case.seed,
                                   decompose=case.decompose)
        digest.update(retrievers[case.corpus].result_bytes(request)[0])
print(len(CASES), digest.hexdigest())
"""


def _run(python: str) -> str:
    return subprocess.run([python, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "")},
                          check=True, timeout=300).stdout


@pytest.mark.slow
def test_the_hybrid_2_candidate_gives_the_same_bytes_under_another_cpython() -> None:
    assert _run(other_cpython_venv()) == _run(sys.executable)
