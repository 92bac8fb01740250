"""A small static embedding model in model2vec's layout, made by the tests (no download)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def write_small_model(directory: Path, dim: int = 8, seed: int = 7) -> Path:
    """``directory`` with ``tokenizer.json`` (Llama's layout: "▁" words, merges, byte
    fallback) and ``model.safetensors`` (F32, one vector per token)."""
    directory.mkdir(parents=True, exist_ok=True)
    vocab: dict[str, int] = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for token in ["▁", *LETTERS, *(f"▁{c}" for c in LETTERS)]:
        vocab.setdefault(token, len(vocab))
    merges = [f"▁ {c}" for c in LETTERS]
    for word in ("crane", "berth", "tide", "port", "ship"):
        piece = "▁" + word[0]
        for c in word[1:]:
            merges.append(f"{piece} {c}")
            piece += c
            vocab.setdefault(piece, len(vocab))
    tokenizer = {
        "version": "1.0", "added_tokens": [], "pre_tokenizer": None,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": merges}}
    (directory / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    # Small integers over 16: exact in float32, the same table on every machine.
    rng = np.random.default_rng(seed)
    table = (rng.integers(-64, 65, size=(len(vocab), dim)) / 16).astype("<f4")
    header = json.dumps({"embeddings": {"dtype": "F32", "shape": list(table.shape),
                                        "data_offsets": [0, table.nbytes]}}).encode()
    header += b" " * (-len(header) % 8)
    (directory / "model.safetensors").write_bytes(
        struct.pack("<Q", len(header)) + header + table.tobytes())
    return directory
