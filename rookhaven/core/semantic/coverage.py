"""How much of a text a static model reads whole, and the semantic weight that earns.

A model that meets a word it does not hold whole reads it as word pieces or bytes, and its
vector for a query of such words adds noise to the lexical ranking (ADR 0056). Coverage is
the share of the text's tokens (the analyzer's, stop words included: frozen Unicode tables,
not the interpreter's) that the model's tokenizer encodes as one token, in 1/256 units,
floored; a text with no tokens is covered whole. The semantic weight falls in steps with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

BITS = 8
WHOLE = 1 << BITS


def coverage(tokens: Sequence[str], held_whole: Callable[[str], bool]) -> int:
    """The share of ``tokens`` that are ``held_whole`` (the model's tokenizer encodes each as
    one token), in 1/256 (floored)."""
    if not tokens:
        return WHOLE
    whole = sum(1 for token in tokens if held_whole(token))
    return whole * WHOLE // len(tokens)


def stepped_weight(cover: int, steps: Sequence[tuple[int, int]]) -> int:
    """The weight of the first step whose floor ``cover`` reaches (steps by descending
    floor, each (floor in 1/256, weight)); 0 below every floor."""
    return next((weight for floor, weight in steps if cover >= floor), 0)
