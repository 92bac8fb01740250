"""Fixtures for the integration tier: a worker environment on the real Redis, and a farm of
real ``celery -A workers worker`` processes that is always reaped."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.workerfarm import WorkerFarm, environment, farm


@pytest.fixture
def env(redis_url: str, key_prefix: str) -> dict[str, str]:
    """ROOKHAVEN_* settings for workers and clients of one test (its own key prefix)."""
    return environment(redis_url, key_prefix)


@pytest.fixture
def workers(env: dict[str, str], tmp_path: Path) -> Iterator[WorkerFarm]:
    """Start workers with ``workers.start(name)``; all are stopped after the test."""
    yield from farm(env, tmp_path)
