"""Fixtures for the integration tier: a worker environment on the real Redis, and a farm of
real ``celery -A workers worker`` processes that is always reaped."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rookhaven.pipeline.warmup import warm_up
from tests.conftest import private_redis
from tests.integration.workerfarm import WorkerFarm, environment, farm


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels() -> None:
    """numba's compiled paths, compiled once into its on-disk cache before any worker or
    subprocess starts. A cold cache costs ~45 s of compiling (bm25@3 compiles the most), and
    worker processes that each compile it at once, on a loaded machine, ran past the tests'
    waits; with the cache filled they load it in about a second."""
    warm_up(["bm25@6", "bm25@3"])


@pytest.fixture
def env(redis_url: str, key_prefix: str) -> dict[str, str]:
    """ROOKHAVEN_* settings for workers and clients of one test (its own key prefix)."""
    return environment(redis_url, key_prefix)


@pytest.fixture
def workers(env: dict[str, str], tmp_path: Path) -> Iterator[WorkerFarm]:
    """Start workers with ``workers.start(name)``; all are stopped after the test."""
    yield from farm(env, tmp_path)


@pytest.fixture
def broker_url(tmp_path: Path) -> Iterator[str]:
    """A Redis of the test's own for the Celery broker, apart from the store's."""
    with private_redis(tmp_path) as url:
        yield url
