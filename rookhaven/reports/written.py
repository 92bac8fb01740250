"""A page written whole or not at all: to a temporary file beside its place, then renamed."""

from __future__ import annotations

import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from .. import __version__
from ..errors import InputError
from .views import Made


def made_now(clock: float) -> Made:
    """This Rookhaven's version and the time ``clock`` (Unix seconds), for a page's footer."""
    return Made(__version__, datetime.fromtimestamp(clock, UTC).strftime(
        "%Y-%m-%d %H:%M:%S UTC"))


def write_page(path: Path, page: str) -> None:
    """``page`` at ``path``, or InputError saying why not; a reader never sees half a page,
    and a failed write leaves nothing behind."""
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part",
                                             dir=path.resolve().parent)
    except OSError as exc:
        raise InputError(f"{path}: cannot write the page there ({exc.strerror}); name a "
                         "file in a directory you can write") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(page)
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise InputError(f"{path}: cannot write the page ({exc.strerror})") from None
