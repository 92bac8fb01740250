"""Bit-reproducibility in one process; across processes, hash seeds and CPython versions see
tests/integration/test_hash_seeds.py and tests/crosspython/."""

from __future__ import annotations

from tests.replay_script import digests


def test_the_same_request_gives_the_same_bytes_twice_in_one_process() -> None:
    assert digests() == digests()
