"""Golden bytes: the engine must reproduce every pinned result exactly."""

from __future__ import annotations

import json

import pytest

from .cases import CASES, EXPECTED, MANIFEST, Case
from .render import render

REGENERATE = "python -m tests.golden.regenerate"


def test_there_are_at_least_twenty_golden_cases() -> None:
    assert len(CASES) >= 20
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_golden_case_reproduces_its_exact_bytes(case: Case) -> None:
    expected_path = EXPECTED / f"{case.name}.json"
    assert expected_path.exists(), f"no golden file for {case.name}; run {REGENERATE}"
    manifest = json.loads(MANIFEST.read_text())
    actual, engine_version = render(case)
    expected = expected_path.read_bytes()
    if actual != expected:
        pinned = manifest[case.name]["engine"]
        hint = ("the engine version is unchanged, so this is a behaviour change: bump "
                "CORE_VERSION or the provider version, then run " + REGENERATE
                if pinned == engine_version else f"engine {pinned} -> {engine_version}: run "
                + REGENERATE)
        pytest.fail(f"golden bytes differ for {case.name}: {hint}")
