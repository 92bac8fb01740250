"""What identifies a result before it is computed: engine, config digest, result key.

The result key is the content address under which a result's canonical bytes are stored:
same request, corpus, engine and configuration, same key, same bytes.
"""

from __future__ import annotations

import hashlib
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
    return key_frame(corpus_digest, identity).key(canonical_bytes(to_plain(request)))


@dataclass(frozen=True)
class KeyFrame:
    """The canonical bytes every result key over one corpus and engine hashes, around the
    request's own: the request is the last of the hashed mapping's keys in canonical
    (sorted) order, so its bytes close the mapping."""

    head: bytes

    def key(self, request: bytes) -> str:
        """The result key of a request whose canonical bytes are ``request``."""
        return "sha256:" + hashlib.sha256(self.head + request + b"}").hexdigest()


def key_frame(corpus_digest: str, identity: EngineIdentity) -> KeyFrame:
    """The frame of every result key over ``corpus_digest`` with ``identity``: made once a
    submission or a worker's corpus, each key is then one hash of the request's bytes."""
    return KeyFrame(open_last(canonical_bytes({
        "request": None,
        "corpus_digest": corpus_digest,
        "engine": identity.engine_data,
        "config_digest": identity.config_digest,
    })))


def open_last(encoded: bytes) -> bytes:
    """The canonical bytes of a mapping whose last key (in canonical order) holds None,
    without that value and the closing brace: the head a value's own bytes then close."""
    if not encoded.endswith(b":null}"):
        raise ValueError("the last key of the mapping must hold None")  # a bug, not input
    return encoded[:-len(b"null}")]
