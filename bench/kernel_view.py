"""What the kernel benches read of a Retriever: its scorer, and each query text's plan."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rookhaven import Retriever


def kernel_view(retriever: Retriever) -> tuple[Any, Callable[[str], Any]]:
    """The index's scorer, and a function from a query text to the plan the scorer runs
    (a feedback engine's first-pass plan: the base plan, where the index has one)."""
    index, analyzer = retriever.index, retriever.provider.analyzer
    plan_of = getattr(index, "base_plan", None) or index.plan  # type: ignore[attr-defined]

    def plan(text: str) -> Any:
        return plan_of(tuple(analyzer.terms(text)))

    return index.scorer, plan  # type: ignore[attr-defined]
