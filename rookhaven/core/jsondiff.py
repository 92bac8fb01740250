"""Locate the first difference between two JSON documents, as a path a person can read.

Used when a replay's bytes differ from the stored bytes: the verifier reports which hit
and which field changed (``hits[3].score``) instead of just "mismatch".
"""

from __future__ import annotations

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
