"""Rookhaven's Celery workers. Start them with the stock command:

    ROOKHAVEN_REDIS_URL=redis://127.0.0.1:6379/0 celery -A workers worker -O fair

(add ``-B``, or run ``celery -A workers beat`` once, for the sweeper's schedule).
This package imports ``rookhaven``; ``rookhaven`` never imports it.
"""

import os

from rookhaven.config import Settings

from .application import create_app

app = create_app(Settings.from_mapping(os.environ))

__all__ = ["app", "create_app"]
