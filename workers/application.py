"""The Celery app factory: an app configured from settings, with its tasks and hooks."""

from __future__ import annotations

from celery import Celery
from celery.exceptions import SoftTimeLimitExceeded

from rookhaven.config import Settings
from rookhaven.pipeline import celery_config

from .lifecycle import connect_hooks
from .runtime import WorkerRuntime
from .tasks import register_tasks

# Like Celery itself, fall back to a local Redis, so the app imports (and `celery inspect`
# works) without configuration; the README tells operators to set the URL.
LOCAL_REDIS = "redis://127.0.0.1:6379/0"

# Exceptions that must end a task at once (after the job is recorded): the soft time limit.
FATAL = (SoftTimeLimitExceeded,)


def create_app(settings: Settings, compile_kernels: bool = True) -> Celery:
    """A worker app over ``settings``: its tasks, schedule and lifecycle hooks.

    ``compile_kernels``: compile the engine's kernels in the background at start (else its
    jobs always take the reference paths: the demo, whose corpus is small and life short).
    """
    if settings.redis_url is None:
        settings = settings.with_overrides(redis_url=LOCAL_REDIS)
    app = Celery("rookhaven")
    app.conf.update(celery_config(settings))
    app.conf.worker_consumer = "workers.consumer:GuardedConsumer"
    runtime = WorkerRuntime(settings, FATAL, compile_kernels=compile_kernels)
    register_tasks(app, runtime)
    connect_hooks(app, runtime)
    return app
