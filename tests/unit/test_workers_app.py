"""The Celery app ``celery -A workers`` loads: its tasks, routes, schedule and layering."""

from __future__ import annotations

from tests.conftest import ROOT
from tests.unit.test_architecture import _imports


def test_the_worker_app_registers_the_tasks_json_only_with_the_sweeper_on_a_schedule() -> None:
    from rookhaven.pipeline import QUEUE, QUEUE_RECOVERY, TASK_BATCH, TASK_JOB, TASK_SWEEP
    from workers import app
    from workers.application import settings

    assert {TASK_JOB, TASK_BATCH, TASK_SWEEP} <= set(app.tasks)
    assert app.conf.accept_content == ["json"] and app.conf.task_acks_late
    assert {q.name for q in app.conf.task_queues} == {QUEUE, QUEUE_RECOVERY}
    assert app.conf.task_routes[TASK_SWEEP] == {"queue": QUEUE_RECOVERY}
    entry = app.conf.beat_schedule["rookhaven-sweep"]
    assert entry["task"] == TASK_SWEEP and entry["schedule"] == settings.sweep_interval


def test_the_store_knows_nothing_of_celery_or_of_the_layers_above_it() -> None:
    above = ("rookhaven.pipeline", "rookhaven.server", "rookhaven.cli", "celery", "kombu")
    for path in sorted((ROOT / "rookhaven" / "store").rglob("*.py")):
        assert not [n for n in _imports(path) if n.startswith(above)], path


def test_the_service_layer_knows_nothing_of_its_front_ends() -> None:
    above = ("rookhaven.server", "rookhaven.cli", "workers")
    for path in sorted((ROOT / "rookhaven" / "pipeline").rglob("*.py")):
        assert not [n for n in _imports(path) if n.startswith(above)], path
