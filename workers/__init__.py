"""Rookhaven's Celery workers. Start them with the stock command:

    ROOKHAVEN_REDIS_URL=redis://127.0.0.1:6379/0 celery -A workers worker -O fair

(add ``-B``, or run ``celery -A workers beat`` once, for the sweeper's schedule).
This package imports ``rookhaven``; ``rookhaven`` never imports it.
"""

import os
import sys

from rookhaven.config import Settings
from rookhaven.embedding import offer_settings
from rookhaven.errors import RookhavenError

from .application import create_app

try:
    settings = Settings.from_mapping(os.environ)
    offer_settings(settings)
    app = create_app(settings)
except RookhavenError as exc:
    # Celery imports this module to find the app: a setting that cannot work stops every
    # `celery -A workers ...` command here, in one line, not in Celery's import traceback.
    print(f"rookhaven workers: error: {exc}", file=sys.stderr)
    raise SystemExit(2) from None

__all__ = ["app", "create_app"]
