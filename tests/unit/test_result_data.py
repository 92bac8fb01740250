"""The plain result a worker encodes is byte for byte the validated model's canonical form."""

from __future__ import annotations

import random

import pytest

from rookhaven import Document, RetrievalRequest, Retriever, canonical_bytes
from rookhaven.sampledata import sample_corpus, sample_requests


@pytest.mark.parametrize("provider", ["bm25", "tfcosine"])
def test_result_data_encodes_to_the_same_bytes_as_the_model(provider: str) -> None:
    retriever = Retriever(sample_corpus(), provider)
    requests = list(sample_requests())
    rng = random.Random(11)
    words = ["crane", "berth", "tide", "pilot", "and", "or", ",", "vessel", "cargo", "draft",
             "quay", "lock", "zzz", "reefer", "manifest"]
    for i in range(60):
        query = " ".join(rng.choice(words) for _ in range(rng.randint(1, 8)))
        if query.strip(" ,") and any(c.isalnum() for c in query):
            requests.append(RetrievalRequest(query=query, recall_budget=rng.choice([1, 5, 40]),
                                             seed=f"s{i}", decompose=rng.random() < 0.8))
    for request in requests:
        data = retriever.result_data(request)
        assert canonical_bytes(data) == canonical_bytes(retriever.retrieve(request)), request


def test_result_data_on_ties_and_backfill() -> None:
    # Identical documents tie everywhere, and "a and a" picks one document twice: backfill.
    docs = [Document(id=f"d{i}", text="alpha beta") for i in range(6)]
    retriever = Retriever(docs, "bm25")
    for query in ("alpha", "alpha and alpha", "beta, gamma"):
        request = RetrievalRequest(query=query, recall_budget=4)
        assert canonical_bytes(retriever.result_data(request)) == canonical_bytes(
            retriever.retrieve(request))
