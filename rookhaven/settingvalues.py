"""How each ROOKHAVEN_* value is read: whole numbers, seconds, choices, text, prefixes.

Each parser takes the raw text and returns the value, or raises ValueError with the half
sentence ``Spec.read`` completes into the user's error ("must be ...").
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from .core.engines import engine_spec
from .errors import InputError, InvalidRequestError

# Upper bounds: a value past them is a typo or an attack, and some would overflow a
# socket timeout, a sleep or a Redis argument. Durations are at most a week unless a
# setting says otherwise.
WEEK = 7 * 24 * 3600
HOUR = 3600
PORT_MAX = 65535
KEY_PREFIX_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"
_KEY_PREFIX = re.compile(KEY_PREFIX_PATTERN)


def is_utf8(value: str) -> bool:
    # Undecodable bytes in argv or the environment arrive as lone surrogates, which no
    # encoder (orjson, Redis, hashlib) accepts further in.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_utf8(**values: str | None) -> None:
    for name, value in values.items():
        if value is not None and not is_utf8(value):
            raise InvalidRequestError(f"{name} is not valid UTF-8 (it holds a lone surrogate, "
                                      "or bytes that decode to none)")


def whole(minimum: int, maximum: int) -> Callable[[str], int]:
    def parse(raw: str) -> int:
        text = raw.strip()
        # ASCII digits only (int() also takes fullwidth digits and '1_000').
        value = int(text) if re.fullmatch(r"-?[0-9]{1,30}", text) else None
        if value is None or not minimum <= value <= maximum:
            raise ValueError(f"must be a whole number from {minimum} to {maximum}")
        return value
    return parse


def positive(maximum: float, unit: str) -> Callable[[str], float]:
    """A finite number above 0 and at most ``maximum``, of ``unit`` (for the message)."""
    def parse(raw: str) -> float:
        try:
            value = float(raw.strip())
        except ValueError:
            value = math.nan
        # Not "value <= 0": NaN compares false with everything and must be refused too.
        if not (math.isfinite(value) and 0 < value <= maximum):
            raise ValueError(f"must be a number {unit} > 0 and <= {maximum:.0f}")
        return value
    return parse


def seconds(maximum: float) -> Callable[[str], float]:
    return positive(maximum, "of seconds")


def per_second(maximum: float) -> Callable[[str], float]:
    return positive(maximum, "a second")


def text(raw: str) -> str:
    if not raw.strip():
        raise ValueError("must not be empty")
    return raw


def key_prefix(raw: str) -> str:
    # It starts every key and a SCAN MATCH pattern: a literal, never a glob or a separator.
    if _KEY_PREFIX.fullmatch(raw) is None:
        raise ValueError(f"must be 1 to 64 letters, digits, '.', '_' or '-', starting with a "
                         f"letter or digit ({KEY_PREFIX_PATTERN})")
    return raw


def choice(options: tuple[str, ...]) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        value = raw.strip().lower()
        if value not in options:
            raise ValueError(f"must be one of: {', '.join(options)}")
        return value
    return parse


def engine(raw: str) -> str:
    try:
        return engine_spec(raw.strip()).ref
    except InputError as exc:
        raise ValueError(str(exc).replace("unknown engine", "names an unknown engine")) from None


def clock_time(raw: str) -> str:
    # ASCII digits only, as whole() reads them (int() also takes other scripts' digits).
    found = re.fullmatch(r"([0-9]+):([0-9]{2})", raw.strip())
    if found is None or int(found[1]) >= 24 or int(found[2]) >= 60:
        raise ValueError("must be a time of day as HH:MM (UTC), like 02:30")
    return f"{int(found[1]):02d}:{found[2]}"
