"""The Celery app, configured from ROOKHAVEN_* settings (rookhaven.pipeline.celeryconf)."""

from __future__ import annotations

import os

from celery import Celery

from rookhaven.config import Settings
from rookhaven.pipeline import celery_config

from . import runtime

# Like Celery itself, fall back to a local Redis, so the app imports (and `celery inspect`
# works) without configuration; the README tells operators to set the URL.
LOCAL_REDIS = "redis://127.0.0.1:6379/0"

settings = Settings.from_mapping(os.environ)
if settings.redis_url is None:
    settings = settings.with_overrides(redis_url=LOCAL_REDIS)

app = Celery("rookhaven")
app.conf.update(celery_config(settings))


def configure(new: Settings) -> None:
    """Point the app and its tasks at ``new`` settings, dropping connections made so far.

    For a worker run inside another program (``rookhaven demo``); tasks and hooks read
    ``application.settings`` when they run, so they follow.
    """
    global settings
    settings = new
    app.conf.update(celery_config(new))
    runtime.reset()


# Registers the tasks and the signal handlers on ``app``.
from . import lifecycle, tasks  # noqa: E402

__all__ = ["app", "lifecycle", "settings", "tasks"]
