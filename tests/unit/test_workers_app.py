"""The Celery app ``celery -A workers`` loads: its tasks, routes, schedule and layering."""

from __future__ import annotations

import os

from rookhaven.config import Settings
from tests.conftest import ROOT
from tests.unit.test_architecture import _imports


def test_the_worker_app_registers_the_tasks_json_only_with_the_sweeper_on_a_schedule() -> None:
    from rookhaven.pipeline import (
        QUEUE,
        QUEUE_RECOVERY,
        TASK_BATCH,
        TASK_CHECKPOINT,
        TASK_JOB,
        TASK_SWEEP,
    )
    from workers import app

    assert {TASK_JOB, TASK_BATCH, TASK_SWEEP, TASK_CHECKPOINT} <= set(app.tasks)
    assert app.conf.accept_content == ["json"] and app.conf.task_acks_late
    assert {q.name for q in app.conf.task_queues} == {QUEUE, QUEUE_RECOVERY}
    assert app.conf.task_routes[TASK_SWEEP] == {"queue": QUEUE_RECOVERY}
    entry = app.conf.beat_schedule["rookhaven-sweep"]
    assert entry["task"] == TASK_SWEEP
    assert entry["schedule"] == Settings.from_mapping(os.environ).sweep_interval


def test_an_app_made_by_the_factory_follows_its_own_settings() -> None:
    from workers import create_app

    app = create_app(Settings(redis_url="redis://127.0.0.1:6390/4", sweep_interval=3.5,
                              key_prefix="elsewhere"))
    assert app.conf.broker_url == "redis://127.0.0.1:6390/4"
    assert app.conf.beat_schedule["rookhaven-sweep"]["schedule"] == 3.5
    assert app.conf.beat_schedule["rookhaven-checkpoint"]["schedule"] == 60.0


def test_the_store_knows_nothing_of_celery_or_of_the_layers_above_it() -> None:
    above = ("rookhaven.pipeline", "rookhaven.server", "rookhaven.cli", "celery", "kombu")
    for path in sorted((ROOT / "rookhaven" / "store").rglob("*.py")):
        assert not [n for n in _imports(path) if n.startswith(above)], path


def test_the_service_layer_knows_nothing_of_its_front_ends() -> None:
    above = ("rookhaven.server", "rookhaven.cli", "workers")
    for path in sorted((ROOT / "rookhaven" / "pipeline").rglob("*.py")):
        assert not [n for n in _imports(path) if n.startswith(above)], path
