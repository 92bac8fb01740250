"""A held process never calls a compiled kernel, and gives the same bytes as a live one
(``core.compiled.hold``: the kernels are being compiled elsewhere meanwhile)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from rookhaven import RetrievalRequest, Retriever
from rookhaven.core import compiled
from rookhaven.sampledata import sample_corpus, sample_requests
from tests.kernels import KERNELS

pytestmark = pytest.mark.skipif(not compiled.AVAILABLE, reason="numba is not installed")



@pytest.fixture
def held() -> Iterator[None]:
    compiled.hold()
    try:
        yield
    finally:
        compiled.release()


def _results(engine: str) -> list[bytes]:
    retriever = Retriever(sample_corpus(), engine)
    requests = [r.model_copy(update={"recall_budget": b})
                for r in sample_requests() for b in (10, 100)]
    requests.append(RetrievalRequest(query="crane", recallBudget=100, seed="wide"))
    return [b"".join(retriever.result_bytes(r)) for r in requests]


@pytest.mark.parametrize("engine", ["bm25@2", "bm25@3", "bm25@4"])
def test_held_calls_no_kernel_and_gives_the_live_bytes(engine: str, held: None,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    compiled.release()
    live = _results(engine)
    compiled.hold()

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("a compiled kernel was called while held")

    for module, names in KERNELS.items():
        for name in names:
            monkeypatch.setattr(f"{module}.{name}", refuse)
    assert not compiled.live()
    assert _results(engine) == live
