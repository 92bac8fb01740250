"""The nightly verifier is a registered task with the configured UTC schedule."""

from __future__ import annotations

import pytest
from celery.schedules import crontab

from rookhaven.config import Settings
from rookhaven.errors import ConfigError
from rookhaven.pipeline import QUEUE_RECOVERY, TASK_SWEEP, TASK_VERIFY, celery_config


def test_the_verifier_runs_nightly_at_the_configured_utc_time() -> None:
    settings = Settings.from_mapping({"ROOKHAVEN_REDIS_URL": "redis://127.0.0.1:6379/0",
                                      "ROOKHAVEN_VERIFY_AT": "3:45"})
    config = celery_config(settings)
    entry = config["beat_schedule"]["rookhaven-verify"]
    assert entry["task"] == TASK_VERIFY
    assert entry["schedule"] == crontab(hour=3, minute=45)
    assert (config["timezone"], config["enable_utc"]) == ("UTC", True)
    assert config["task_routes"][TASK_VERIFY] == {"queue": QUEUE_RECOVERY}
    assert config["beat_schedule"]["rookhaven-sweep"]["task"] == TASK_SWEEP


def test_the_default_is_half_past_two_utc() -> None:
    config = celery_config(Settings(redis_url="redis://127.0.0.1:6379/0"))
    assert config["beat_schedule"]["rookhaven-verify"]["schedule"] == crontab(hour=2, minute=30)


@pytest.mark.parametrize("bad", ["25:00", "2:5", "noon", "02:60", "²:30", "١٢:٣٠"])
def test_a_bad_time_of_day_is_refused_with_the_format(bad: str) -> None:
    with pytest.raises(ConfigError, match="ROOKHAVEN_VERIFY_AT must be a time of day as HH:MM"):
        Settings.from_mapping({"ROOKHAVEN_VERIFY_AT": bad})


def test_the_worker_app_registers_the_verify_task_with_the_schedule() -> None:
    from workers import app

    assert TASK_VERIFY in app.tasks
    assert app.conf.beat_schedule["rookhaven-verify"]["task"] == TASK_VERIFY
