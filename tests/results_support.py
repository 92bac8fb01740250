"""Result and audit bytes in the frame the store accepts (a result embeds its audit), for
store tests that need distinct bytes rather than real rankings; and a job record lost."""

from __future__ import annotations

from typing import Any

AUDIT = b'{"a":1}'


def framed(hits: bytes, audit: bytes = AUDIT) -> bytes:
    """The result bytes ``core.canonical.result_bytes`` would give for ``hits`` and ``audit``."""
    return b'{"audit":' + audit + b',"hits":' + hits + b"}"


def forget_job(store: Any, key: str) -> None:
    """Delete job ``key``'s record (its spec, state and error), as a lost record would be."""
    k = store.keys.shard(key)
    for name in (k.job_specs, k.job_states, k.job_errors):
        store.client.hdel(name, key)
