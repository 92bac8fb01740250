"""Commands written to the wire (RESP) in one join: the store's large commands cost a copy.

redis-py packs with hiredis when it is installed, and hiredis grows its buffer an argument
at a time: a chunk's MSETNX of 100 results and audits (~500 KB in ~200 arguments) took
~1 ms to pack, where one ``b"".join`` of the same pieces takes ~0.2 ms (bench/job_split.py's
round trips; ADR 0051). The bytes on the wire are the same RESP either way, each argument
encoded as redis-py encodes it; replies are still read by hiredis.
"""

from __future__ import annotations

from typing import Any

from redis.exceptions import DataError


class Packer:
    """A redis-py command packer (``command_packer=``): each command one bytes object."""

    def pack(self, *args: Any) -> list[bytes]:
        """The RESP array of ``args`` (a command name with a space is two words, as
        redis-py's packers split it)."""
        if isinstance(args[0], str):
            args = (*args[0].encode().split(), *args[1:])
        elif b" " in args[0]:
            args = (*args[0].split(), *args[1:])
        pieces = [b"*%d\r\n" % len(args)]
        for arg in args:
            kind = type(arg)  # bytes and str (keys) are nearly every argument
            data = arg if kind is bytes else arg.encode() if kind is str else encoded(arg)
            pieces += (b"$%d\r\n" % len(data), data, b"\r\n")
        return [b"".join(pieces)]


def encoded(value: Any) -> bytes:
    """One argument as redis-py's encoder writes it: bytes as they are, text as UTF-8,
    numbers as their repr; a bool or anything else is refused."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value).encode()
    raise DataError(f"Invalid input of type: {type(value).__name__!r}. Convert to a bytes, "
                    "string, int or float first.")
