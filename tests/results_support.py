"""Result and audit bytes in the frame the store accepts (a result embeds its audit), for
store tests that need distinct bytes rather than real rankings."""

from __future__ import annotations

AUDIT = b'{"a":1}'


def framed(hits: bytes, audit: bytes = AUDIT) -> bytes:
    """The result bytes ``core.canonical.result_bytes`` would give for ``hits`` and ``audit``."""
    return b'{"audit":' + audit + b',"hits":' + hits + b"}"
