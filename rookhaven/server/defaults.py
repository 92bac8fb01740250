"""Which corpus answers an MCP request that names none, and the line the server logs about it.

The rule (docs/adr/0015-default-corpus.md): an explicitly set ``ROOKHAVEN_CORPUS_PATH``
wins. With ``ROOKHAVEN_REDIS_URL`` also set, the file's content is looked up in the store by
digest: stored (``rookhaven corpus add FILE``), it goes through the pipeline like any stored
corpus; not stored, ``retrieve`` ranks the file in the server and ``submit_retrieval`` says
to add it. Without the file, the default with Redis is ``latest``, the corpus most recently
added to the store, looked up at each request (it moves whenever anyone adds a corpus).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from ..config import Settings

log = logging.getLogger("rookhaven.server")

LATEST = "latest"


@dataclass(frozen=True)
class DefaultCorpus:
    """Where a request naming no corpus is answered from, and why."""

    source: Literal["file", "store", "none"]
    why: str


def default_corpus(settings: Settings) -> DefaultCorpus:
    """The default corpus the settings choose (see the module docstring)."""
    path, redis = settings.corpus_path, settings.redis_url is not None
    if path is not None:
        return DefaultCorpus("file", (
            f"the ROOKHAVEN_CORPUS_PATH file {path}: set explicitly, it wins over the store's "
            "latest corpus; ranked through the pipeline when its content is stored (rookhaven "
            "corpus add), else in this server" if redis else
            f"the ROOKHAVEN_CORPUS_PATH file {path}, ranked in this server"))
    if redis:
        return DefaultCorpus("store", (
            "latest, the corpus most recently added to the store, looked up at each request "
            "(ROOKHAVEN_CORPUS_PATH is not set)"))
    return DefaultCorpus("none", (
        "none: neither ROOKHAVEN_CORPUS_PATH nor ROOKHAVEN_REDIS_URL is set, so retrieve "
        "fails until one is"))


def announce(settings: Settings) -> DefaultCorpus:
    """Log, once at start, which corpus requests naming none will use and why."""
    chosen = default_corpus(settings)
    log.info("default corpus: %s", chosen.why, extra={"default_corpus": chosen.source})
    return chosen
