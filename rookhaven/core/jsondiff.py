"""Locate the first difference between two JSON documents, as a path a person can read.

Used when a replay's bytes differ from the stored bytes: the verifier reports which hit
and which field changed (``hits[3].score``) instead of just "mismatch".
"""

from __future__ import annotations

import re
from typing import Any


def first_difference(stored: Any, replayed: Any, path: str = "") -> str | None:
    """The path of the first differing value (keys in sorted order), or None if equal."""
    if type(stored) is not type(replayed):
        return path or "$"
    if isinstance(stored, dict):
        for key in sorted(set(stored) | set(replayed)):
            where = f"{path}.{key}" if path else key
            if key not in stored or key not in replayed:
                return where
            found = first_difference(stored[key], replayed[key], where)
            if found:
                return found
        return None
    if isinstance(stored, list):
        for i, (a, b) in enumerate(zip(stored, replayed, strict=False)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        if len(stored) != len(replayed):
            return f"{path}[{min(len(stored), len(replayed))}]"
        return None
    return None if stored == replayed else (path or "$")


def hits_first(stored: dict[str, Any], replayed: dict[str, Any]) -> str | None:
    """Like ``first_difference`` on results, but looks at the hits before the audit."""
    return (first_difference(stored.get("hits"), replayed.get("hits"), "hits")
            or first_difference(stored, replayed))


def at(document: Any, path: str) -> tuple[bool, Any]:
    """(found, value) at a path ``first_difference`` gave (``a.b[2].c``; ``$`` the root)."""
    value = document
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", "" if path == "$" else path):
        if part.startswith("["):
            index = int(part[1:-1])
            if not isinstance(value, list) or index >= len(value):
                return False, None
            value = value[index]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return False, None
    return True, value


def difference(first: Any, second: Any, path: str, names: tuple[str, str]) -> str:
    """``path`` with what each of two documents (called ``names``) holds there, briefly."""
    shown = []
    for name, document in zip(names, (first, second), strict=True):
        found, value = at(document, path)
        shown.append(f"{name} {_brief(value) if found else 'lacks it'}")
    return f"{path} ({'; '.join(shown)})"


def _brief(value: Any) -> str:
    if isinstance(value, dict):
        return f"has an object of {len(value)} keys"
    if isinstance(value, list):
        return f"has a list of {len(value)}"
    return f"has {value!r:.60}"
