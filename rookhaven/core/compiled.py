"""Optional numba compilation for the core's hot loops: ``njit`` if numba is installed.

Speed only: every compiled function computes the same integers as its pure-Python
reference (integer arithmetic has no rounding), and tests compare the two paths, so no
output byte depends on whether numba is present, or on whether this process uses it yet.

``live()`` is that second question. A process whose kernels are compiled elsewhere first (a
worker's first start on a machine, the demo) calls ``hold()``: until ``release()``, every
call site takes its reference path, so nothing is compiled on the request's time. Like the
compiled code itself, this is state of the process, which is why it lives here and not in
an argument threaded through every index.

numba itself is imported at the first call of a compiled function, not when the core is:
a command that never ranks (``rookhaven log``, ``store info``) does not pay its ~0.2 s.
``njit(**options)(function)`` gives a ``Kernel`` that makes numba's dispatcher then, and
puts dispatchers in place of every kernel named in that function's module, so a kernel
calling another (inlined helpers) meets numba's own objects.

numba's on-disk cache checks only the cached function's own file: a kernel whose callee
or constant in another module changed would load the old machine code (numba documents
both limits). So every cache index also records the digest of every source file of the
core (``sources_digest``): an upgrade that changes any of them compiles afresh, and no
output byte can come from code no longer shipped (ADR 0046).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

AVAILABLE = importlib.util.find_spec("numba") is not None
_held = False
_stamped: bool | None = None  # numba's cache locators extended yet (``_stamp_caches``)
# The sources every kernel is compiled from: the core package, this file's directory.
CORE = Path(__file__).resolve().parent


class Kernel:
    """A function numba compiles at its first call (its dispatcher made then)."""

    def __init__(self, function: Callable[..., Any], options: dict[str, Any],
                 intrinsic: tuple[str, str] | None = None) -> None:
        self.py_func = function
        self.options = options
        self.intrinsic = intrinsic  # numba's own function to use instead, if it has it
        self._dispatcher: Any = None

    def dispatcher(self) -> Any:
        """numba's dispatcher for this function, made once; the kernels named in its
        module become dispatchers too (a compiled caller must see compiled callees)."""
        if self._dispatcher is None:
            self._dispatcher = self._make()
            names = self.py_func.__globals__
            for name, value in list(names.items()):
                if isinstance(value, Kernel):
                    names[name] = value.dispatcher()
        return self._dispatcher

    def _make(self) -> Any:
        if self.intrinsic is not None:
            module, name = self.intrinsic
            try:
                return getattr(importlib.import_module(module), name)
            except (ImportError, AttributeError):  # pragma: no cover - numba's internals
                pass
        options = self.options
        if options.get("cache") and not _stamp_caches():
            options = {**options, "cache": False}
        from numba import njit as compiler
        return compiler(**options)(self.py_func)

    @property
    def signatures(self) -> Any:
        return self.dispatcher().signatures

    def __call__(self, *args: Any) -> Any:
        return self.dispatcher()(*args)


def sources_digest(root: Path = CORE) -> str:
    """The sha256 of every ``.py`` file under ``root`` (relative path and bytes, in path
    order): what the compiled kernels of this release are made from."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _stamp_caches() -> bool:
    """Make numba's cache index of every function carry ``sources_digest`` beside the
    function's own file stamp, once: an index written from other core sources is stale.
    False where numba's cache locators are not as expected: then nothing is cached."""
    global _stamped
    if _stamped is None:
        try:
            from numba.core import caching
            digest = sources_digest()
            kinds = (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator,
                     caching.UserWideCacheLocator)
            caching.CacheImpl._locator_classes = [
                _stamped_by(kind, digest) if kind in kinds else kind
                for kind in caching.CacheImpl._locator_classes]
            _stamped = True
        except (ImportError, AttributeError):  # pragma: no cover - another numba's internals
            _stamped = False
    return _stamped


def _stamped_by(kind: Any, digest: str) -> Any:
    """numba's locator ``kind``, its source stamp extended by ``digest``."""
    class Stamped(kind):  # type: ignore[misc]
        def get_source_stamp(self) -> Any:
            return (super().get_source_stamp(), digest)
    Stamped.__name__ = Stamped.__qualname__ = f"CoreStamped{kind.__name__}"
    return Stamped


def _njit(**options: Any) -> Callable[[Callable[..., Any]], Kernel]:
    def wrap(function: Callable[..., Any]) -> Kernel:
        return Kernel(function, options, options.pop("intrinsic", None))
    return wrap


# None where numba is not installed: every call site then keeps its reference path.
njit: Any = _njit if AVAILABLE else None


def live() -> bool:
    """Whether the compiled kernels are to be called now (numba present, not held)."""
    return AVAILABLE and not _held


def hold() -> None:
    """Take the reference paths until ``release``: the kernels are being compiled elsewhere."""
    global _held
    _held = True


def release() -> None:
    """Call the compiled kernels again (compiled by now, or loaded from numba's cache)."""
    global _held
    _held = False
