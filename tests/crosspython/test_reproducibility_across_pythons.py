"""The golden cases give the same bytes under the newest other CPython on this machine."""

from __future__ import annotations

import sys

import pytest

from tests.crosspython.pythons import newest_other_cpython, venv_python
from tests.replay_script import digests, run_in


@pytest.mark.slow
def test_another_cpython_version_gives_the_same_bytes() -> None:
    other = newest_other_cpython()
    if other is None:
        pytest.skip(f"no CPython other than {sys.version_info[0]}.{sys.version_info[1]} "
                    "is installed on this machine")
    assert run_in(venv_python(other), "7") == digests()
