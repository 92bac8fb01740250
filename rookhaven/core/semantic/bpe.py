"""A vendored SentencePiece-style BPE tokenizer: what a Llama ``tokenizer.json`` asks for.

It does what the Hugging Face ``tokenizers`` library does for the tokenizers static
embedding models ship (normalizer ``Prepend("▁")`` then ``Replace(" ", "▁")``, no
pre-tokenizer, a BPE model with merges by rank and byte fallback, consecutive unknowns fused)
with nothing but integer and string operations: no Unicode table, no library version can
change a token (ADR 0044). ``tests/golden/tokens`` pins its output on the shared
collections' text and on strings of every script; the library's output is checked against
the same file where it is installed.

BPE here runs on the whole normalized text, but no merge of these vocabularies crosses a
point where "▁" follows another character (no token holds such a pair, and a merge's result
is a token), so each piece between such points is merged alone and remembered.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import ConfigError

SPACE = "▁"
PIECE_MEMO = 1 << 16  # distinct pieces a tokenizer remembers; memory only, never a token


@dataclass(frozen=True)
class BpeSpec:
    """What a ``tokenizer.json`` of this family says, checked: vocabulary, merge ranks."""

    vocab: Mapping[str, int]
    ranks: Mapping[tuple[str, str], int]
    unk_id: int | None
    byte_fallback: bool
    fuse_unk: bool
    prepend: bool  # the normalizer prepends "▁" to a non-empty text


def spec_from_json(data: Mapping[str, Any]) -> BpeSpec:
    """The tokenizer a parsed ``tokenizer.json`` describes, or a ConfigError naming what
    this vendored implementation does not do (it never guesses)."""
    model = data.get("model")
    if not isinstance(model, Mapping) or model.get("type") != "BPE":
        raise ConfigError("tokenizer.json: only a BPE model is supported")
    for key in ("dropout", "continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key) not in (None, ""):
            raise ConfigError(f"tokenizer.json: BPE {key}={model.get(key)!r} is not supported")
    if model.get("ignore_merges"):
        raise ConfigError("tokenizer.json: BPE ignore_merges is not supported")
    if data.get("pre_tokenizer") is not None:
        raise ConfigError("tokenizer.json: a pre-tokenizer is not supported (this reads the "
                          "SentencePiece layout: Prepend + Replace normalizers, none)")
    prepend = _normalizer(data.get("normalizer"))
    vocab = model["vocab"]
    if not isinstance(vocab, Mapping) or not all(
            isinstance(k, str) and isinstance(v, int) for k, v in vocab.items()):
        raise ConfigError("tokenizer.json: the vocabulary must map strings to integers")
    ranks: dict[tuple[str, str], int] = {}
    for rank, merge in enumerate(model.get("merges") or ()):
        pair = tuple(merge.split(" ", 1)) if isinstance(merge, str) else tuple(merge)
        if len(pair) != 2 or "".join(pair) not in vocab:
            raise ConfigError(f"tokenizer.json: merge {rank} ({merge!r}) makes no token")
        ranks.setdefault((pair[0], pair[1]), rank)  # the first rank of a repeated pair
    for token in vocab:
        if any(token[i] == SPACE and token[i - 1] != SPACE for i in range(1, len(token))):
            raise ConfigError(f"tokenizer.json: token {token!r} joins a word to the next; "
                              "this tokenizer's pieces assume none does")
    unk = model.get("unk_token")
    return BpeSpec(vocab=dict(vocab), ranks=ranks,
                   unk_id=vocab.get(unk) if isinstance(unk, str) else None,
                   byte_fallback=bool(model.get("byte_fallback")),
                   fuse_unk=bool(model.get("fuse_unk")), prepend=prepend)


def _normalizer(node: Any) -> bool:
    """Whether the normalizer prepends "▁"; it must also replace " " with "▁", nothing else."""
    steps = node.get("normalizers") if isinstance(node, Mapping) and node.get(
        "type") == "Sequence" else [node]
    prepend = replace = False
    for step in steps or ():
        kind = step.get("type") if isinstance(step, Mapping) else None
        if kind == "Prepend" and step.get("prepend") == SPACE and not replace:
            prepend = True
        elif kind == "Replace" and step.get("pattern") == {"String": " "} and step.get(
                "content") == SPACE:
            replace = True
        else:
            raise ConfigError(f"tokenizer.json: normalizer {step!r} is not supported")
    if not replace:
        raise ConfigError("tokenizer.json: the normalizer must replace ' ' with '▁'")
    return prepend


@dataclass
class BpeTokenizer:
    """Token ids of a text under one ``BpeSpec``; the same ids on every machine."""

    spec: BpeSpec
    _memo: dict[str, tuple[int, ...]] = field(default_factory=dict, init=False, repr=False)

    def normalize(self, text: str) -> str:
        """The text the merges see."""
        if not text:
            return ""
        return (SPACE if self.spec.prepend else "") + text.replace(" ", SPACE)

    def ids(self, text: str) -> list[int]:
        """The token ids of ``text`` (no special tokens added)."""
        out: list[int] = []
        memo = self._memo
        for piece in _pieces(self.normalize(text)):
            found = memo.get(piece)
            if found is None:
                if len(memo) >= PIECE_MEMO:
                    memo.clear()
                found = memo[piece] = tuple(self._merge(piece))
            out.extend(found)
        unk = self.spec.unk_id
        if self.spec.fuse_unk and unk is not None and unk in out:
            out = [t for i, t in enumerate(out) if t != unk or i == 0 or out[i - 1] != unk]
        return out

    def _merge(self, piece: str) -> list[int]:
        """One piece's ids: its characters (or their bytes) merged by rank, leftmost first."""
        vocab, ranks, spec = self.spec.vocab, self.spec.ranks, self.spec
        # symbols[i] is a mergeable token, or None where fixed[i] holds ids that never merge
        # (a character's byte tokens, or the unknown token).
        symbols: list[str | None] = []
        fixed: dict[int, list[int]] = {}
        for ch in piece:
            if ch in vocab:
                symbols.append(ch)
                continue
            raw = ch.encode("utf-8", "surrogatepass")
            if spec.byte_fallback and all(f"<0x{b:02X}>" in vocab for b in raw):
                fixed[len(symbols)] = [vocab[f"<0x{b:02X}>"] for b in raw]
            elif spec.unk_id is not None:
                fixed[len(symbols)] = [spec.unk_id]
            else:
                raise ConfigError(f"tokenizer.json: character U+{ord(ch):04X} has no token "
                                  "and the model has neither byte fallback nor an unknown token")
            symbols.append(None)
        n = len(symbols)
        alive = [True] * n
        nxt = list(range(1, n + 1))
        prv = list(range(-1, n - 1))
        heap: list[tuple[int, int, str, str]] = []

        def push(i: int) -> None:
            j = nxt[i]
            if j < n:
                a, b = symbols[i], symbols[j]
                if a is not None and b is not None:
                    rank = ranks.get((a, b))
                    if rank is not None:
                        heapq.heappush(heap, (rank, i, a, b))

        for i in range(n - 1):
            push(i)
        while heap:
            _, i, a, b = heapq.heappop(heap)
            j = nxt[i]
            if not alive[i] or symbols[i] != a or j >= n or symbols[j] != b:
                continue  # a stale pair: one side has merged since
            symbols[i] = a + b
            alive[j] = False
            nxt[i] = nxt[j]
            if nxt[j] < n:
                prv[nxt[j]] = i
            if prv[i] >= 0:
                push(prv[i])
            push(i)
        out: list[int] = []
        for i in range(n):
            if alive[i]:
                s = symbols[i]
                if s is None:
                    out.extend(fixed[i])
                else:
                    out.append(vocab[s])
        return out


# A run of "▁" then a run of anything else: exactly the pieces between the points where "▁"
# follows another character. Literal classes only: no Unicode table decides a match.
_PIECE = re.compile("\u2581*[^\u2581]+|\u2581+")


def _pieces(text: str) -> Sequence[str]:
    """``text`` cut before every "▁" that follows another character."""
    return _PIECE.findall(text)
