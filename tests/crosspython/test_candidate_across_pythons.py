"""hybrid@2's candidate gives the same result bytes under the newest other CPython: its
coverage rule, form bytes and exact-word bonus read no table of the interpreter's."""

from __future__ import annotations

import sys

import pytest

from tests.crosspython.pythons import other_cpython_venv, run_script

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


@pytest.mark.slow
def test_the_hybrid_2_candidate_gives_the_same_bytes_under_another_cpython() -> None:
    assert run_script(other_cpython_venv(), SCRIPT) == run_script(sys.executable, SCRIPT)
