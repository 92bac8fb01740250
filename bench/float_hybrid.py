"""The float prototype the hybrid engine is checked against: wordllama's own tokenizer (the
``tokenizers`` library) and float32 table, mean-pooled, cosine, float reciprocal-rank fusion
with bm25@6's ranking. Not replayable (float sums, a library's tokenizer); hybrid@1's
integer scores should agree with it within rounding (docs/ranking.md, "hybrid@1").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rookhaven import Document
from rookhaven.embedding import wordllama_files
from rookhaven.embedding.safetensors import read_table


class FloatModel:
    """wordllama's l2_supercat_256 as its own library would embed text (mean of token
    vectors, unit length)."""

    def __init__(self) -> None:
        from tokenizers import Tokenizer
        files = wordllama_files()
        if files is None:
            raise ImportError("wordllama is not installed (pip install -e '.[hybrid]')")
        table, tokenizer = files
        self.table = read_table(table.read_bytes(), str(table)).astype(np.float32)
        self.tokenizer = Tokenizer.from_file(str(tokenizer))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.table.shape[1]), dtype=np.float32)
        for i, enc in enumerate(self.tokenizer.encode_batch(list(texts),
                                                            add_special_tokens=False)):
            if enc.ids:
                v = self.table[enc.ids].mean(axis=0)
                norm = np.linalg.norm(v)
                out[i] = v / norm if norm else v
        return out


def fused(lexical: list[str], semantic: list[str], weight: float, k: int,
          depth: int = 100) -> list[str]:
    """Weighted RRF of two rankings (semantic weight ``weight``), ties by id."""
    score: dict[str, float] = {}
    for rank, doc in enumerate(lexical[:depth], start=1):
        score[doc] = score.get(doc, 0.0) + (1 - weight) / (k + rank)
    for rank, doc in enumerate(semantic[:depth], start=1):
        score[doc] = score.get(doc, 0.0) + weight / (k + rank)
    return sorted(score, key=lambda d: (-score[d], d))


def semantic_rankings(model: FloatModel, documents: Sequence[Document],
                      queries: dict[str, str], depth: int = 100) -> dict[str, list[str]]:
    """Each query's top ``depth`` documents by float cosine."""
    ids = [d.id for d in documents]
    doc_vectors = model.embed([" ".join([*(d.fields[f] for f in sorted(d.fields)), d.text])
                               for d in documents])
    qids = sorted(queries)
    query_vectors = model.embed([queries[q] for q in qids])
    out = {}
    for q, vector in zip(qids, query_vectors, strict=True):
        sims = doc_vectors @ vector
        order = np.lexsort((np.arange(len(ids)), -sims))[:depth]
        out[q] = [ids[i] for i in order]
    return out
