"""What identifies a result before it is computed: engine, config digest, result key.

The result key is the content address under which a result's canonical bytes are stored:
same request, corpus, engine and configuration, same key, same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..models import Engine, RetrievalRequest
from .canonical import canonical_bytes, sha256_digest, to_plain
from .providers import ScoringProvider

# The version of the decomposition, allocation, selection and merge semantics. Bump it (and
# regenerate tests/golden) whenever any of them would give different bytes.
CORE_VERSION = "1"


@dataclass(frozen=True)
class EngineIdentity:
    """A provider configuration's engine name/version, full config and its digest."""

    engine: Engine
    config: dict[str, Any]
    config_digest: str
    # The engine as plain data, made once: every result key hashes it.
    engine_data: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "engine_data", to_plain(self.engine))


def engine_identity(provider: ScoringProvider) -> EngineIdentity:
    """The identity of ``provider`` as configured; computed without touching any corpus."""
    config: dict[str, Any] = {
        "core": CORE_VERSION,
        "provider": provider.name,
        "merge": provider.merge,
        "backfill": "whole-query",
        "params": provider.config(),
    }
    return EngineIdentity(
        engine=Engine(name=provider.name, version=f"{CORE_VERSION}.{provider.version}"),
        config=config,
        config_digest=sha256_digest(canonical_bytes(config)),
    )


# What every result key (and so every job id) looks like; anything else names nothing.
RESULT_KEY_PATTERN = r"^sha256:[0-9a-f]{64}$"


def result_key(request: RetrievalRequest, corpus_digest: str, identity: EngineIdentity) -> str:
    """sha256 over the canonical request, corpus digest, engine and config digest."""
    return plain_result_key(to_plain(request), corpus_digest, identity)


def plain_result_key(request: dict[str, Any], corpus_digest: str,
                     identity: EngineIdentity) -> str:
    """``result_key`` of a request already made plain data (``to_plain``'s), for a caller
    that needs that data for more than the key."""
    return sha256_digest(canonical_bytes({
        "request": request,
        "corpus_digest": corpus_digest,
        "engine": identity.engine_data,
        "config_digest": identity.config_digest,
    }))
