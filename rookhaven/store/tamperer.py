"""A connection that ignores every rule of the store: for staging an attack, never for work.

The store writes each content key once and keeps its indexes in step; the demo shows what
the verifier and the log catch when someone with write access to Redis does neither, so it
needs a client that bypasses the store, and only the store may hold a Redis client.
"""

from __future__ import annotations

import redis

from ..config import Settings


def tamperer(settings: Settings) -> redis.Redis:
    """A plain client of the store's Redis (ROOKHAVEN_REDIS_URL): SET, DEL, HDEL as they are."""
    return redis.Redis.from_url(settings.redis_url or "")
