"""Where this install's static embedding models are: the default wheel's, a user's directory.

The edge between files and the core's model shelf (``core.semantic.shelf``): nothing here is
read until an engine asks for a model by its digest, and nothing is ever downloaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .sources import (
    WORDLLAMA_TABLE_SHA256,
    load_directory,
    offer_default,
    offer_directory,
    wordllama_files,
)

if TYPE_CHECKING:
    from ..config import Settings

__all__ = ["WORDLLAMA_TABLE_SHA256", "load_directory", "offer_default", "offer_directory",
           "offer_settings", "wordllama_files"]


def offer_settings(settings: Settings) -> None:
    """Offer the model ROOKHAVEN_EMBEDDING_MODEL points at, as the default, if it is set."""
    if settings.embedding_model is not None:
        offer_directory(settings.embedding_model.expanduser().resolve())
