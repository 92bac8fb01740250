"""Engine parameters checked against the types their provider declares, before it is built.

Parameters reach an engine from the command line (``--param k1=abc``), request files, MCP
arguments and recorded configs. A wrong type must be the caller's one-line error, not a
TypeError deep in a provider. Values are checked, never converted: a parameter given as
``1`` is recorded as ``1``, not ``1.0``, so the config (and every result key made with it)
is the same as before this check existed.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..errors import ConfigError

# What each declared type asks of a value, in the error's words.
_WANTED = {float: "a finite number", int: "a whole number", str: "a string"}


@cache
def _hints(provider: Any) -> dict[str, Any]:
    """Each field's declared type; a subclass's ``Any`` keeps its base's type."""
    hints: dict[str, Any] = {}
    for cls in reversed(provider.__mro__):
        if dataclasses.is_dataclass(cls):
            for name, hint in typing.get_type_hints(cls).items():
                if hint is not Any or name not in hints:
                    hints[name] = hint
    return hints


@cache
def _adapter(hint: Any) -> TypeAdapter[Any]:
    return TypeAdapter(hint)


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_finite(v) for v in value)
    return True


def _wanted(hint: Any) -> str:
    if hint in _WANTED:
        return _WANTED[hint]
    args = typing.get_args(hint)
    if len(args) == 2 and args[0] is str:  # a mapping from names
        values = ("lists of strings" if typing.get_args(args[1]) == (str,)
                  else "finite numbers" if args[1] is float else str(args[1]))
        return f"an object of names to {values}"
    return f"of type {hint}"


def check(ref: str, provider: Any, params: dict[str, Any], strings: tuple[str, ...]
          ) -> None:
    """ConfigError naming the first of ``params`` whose value ``provider`` (engine ``ref``)
    cannot take; the names in ``strings`` (the analyzer's) take strings."""
    hints = _hints(provider)
    for name, value in params.items():
        hint = str if name in strings else hints.get(name, Any)
        if hint is Any:
            continue
        try:
            _adapter(hint).validate_python(value, strict=True)
            ok = _finite(value)
        except ValidationError:
            ok = False
        if not ok:
            shown = repr(value)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise ConfigError(f"{ref}: parameter {name} must be {_wanted(hint)}, got {shown}")
