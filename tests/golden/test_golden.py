"""Golden bytes: every released engine reproduces every result it pinned, exactly."""

from __future__ import annotations

import hashlib
import json

import pytest

from rookhaven.core.engines import ENGINES

from .cases import CASES, Case, engine_dir, manifest_path, runs
from .render import render

REGENERATE = "python -m tests.golden.regenerate"


def test_there_are_at_least_twenty_golden_cases_and_every_engine_has_goldens() -> None:
    assert len(CASES) >= 20
    assert len({c.name for c in CASES}) == len(CASES)
    pinned = {engine for engine, _ in runs()}
    assert pinned == {spec.ref for spec in ENGINES}


def test_every_engine_states_the_digest_of_its_golden_manifest() -> None:
    for spec in ENGINES:
        digest = "sha256:" + hashlib.sha256(manifest_path(spec.ref).read_bytes()).hexdigest()
        assert spec.golden == digest, f"{spec.ref}: set golden={digest!r} in core/engines.py"


@pytest.mark.parametrize(("engine", "case"), runs(), ids=lambda v: v if isinstance(v, str)
                         else v.name)
def test_golden_case_reproduces_its_exact_bytes(engine: str, case: Case) -> None:
    path = engine_dir(engine) / f"{case.name}.json"
    assert path.exists(), f"no golden file for {engine}/{case.name}; run {REGENERATE}"
    manifest = json.loads(manifest_path(engine).read_text())
    expected = path.read_bytes()
    assert hashlib.sha256(expected).hexdigest() == manifest[case.name], "golden file edited"
    if render(case, engine) != expected:
        pytest.fail(f"golden bytes differ for {engine}/{case.name}: a released engine "
                    "never changes; fix the regression, or add a new engine version")
