"""Which backend answers the MCP tools: the pipeline when ROOKHAVEN_REDIS_URL is set, else
the inline one over ROOKHAVEN_CORPUS_PATH."""

from __future__ import annotations

from ..config import Settings
from .defaults import announce
from .inline import InlineBackend
from .ports import Backend


def open_backend(settings: Settings) -> Backend:
    """The pipeline backend when ROOKHAVEN_REDIS_URL is set, else the inline one."""
    announce(settings)
    if settings.redis_url is None:
        return InlineBackend(settings)
    # Imported here so the no-services server never loads Celery or redis-py.
    from .pipeline import PipelineBackend

    return PipelineBackend.open(settings)
