"""One pass over the shipped sample that builds every compiled path before work arrives."""

from __future__ import annotations

import time
from collections.abc import Iterable

from ..core.engine import Retriever
from ..sampledata import sample_corpus, sample_requests

# Budgets that reach both top-k cuts: below and at 64 candidates or more.
BUDGETS = (10, 100)


def warm_up(engines: Iterable[str]) -> float:
    """Run the sample's requests with each engine at every budget of ``BUDGETS``; seconds.

    numba compiles a kernel on its first call, or loads it from its on-disk cache: the
    transposition and the union merge at index time, both top-k cuts, the feedback pass, the
    whole-query lookup of picks a cut did not hold. A cold cache costs about 45 s for
    bm25@3. Done in a worker's main process before it forks, every pool child inherits the
    compiled code instead of compiling its own on its first job, which on two cores ran
    jobs into their time limit.
    """
    started = time.perf_counter()
    documents, requests = sample_corpus(), sample_requests()
    for engine in engines:
        retriever = Retriever(documents, engine)
        for request in requests:
            for budget in BUDGETS:
                retriever.result_data(request.model_copy(update={"recall_budget": budget}))
    return time.perf_counter() - started
