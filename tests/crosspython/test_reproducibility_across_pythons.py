"""The golden cases give the same bytes under the newest other CPython on this machine."""

from __future__ import annotations

import pytest

from tests.crosspython.pythons import other_cpython_venv
from tests.replay_script import digests, run_in


@pytest.mark.slow
def test_another_cpython_version_gives_the_same_bytes() -> None:
    assert run_in(other_cpython_venv(), "7") == digests()
