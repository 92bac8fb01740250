"""A static embedding model in integers: a pinned tokenizer and one int16 vector per token.

The float table a model ships is quantized once, by one recorded rule, into int16: every
value times ``32767 / max |value|``, rounded half to even. Multiplying and rounding one
float are correctly rounded IEEE operations, the same on every machine; no sum is taken in
floats, so nothing a library chooses can move a vector (ADR 0044).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ...errors import ConfigError
from .bpe import BpeTokenizer

QUANTIZATION = "int16: round-half-even(value * 32767 / max|value|), float64"
TABLE_MAX = 32767


def quantize(values: npt.NDArray[np.floating]) -> npt.NDArray[np.int16]:
    """``values`` (vocabulary x dimensions, any float width) as the int16 table."""
    wide = np.asarray(values, dtype=np.float64)
    if wide.ndim != 2 or not wide.size:
        raise ConfigError(f"a vector table must be 2-D and non-empty, got shape {wide.shape}")
    if not np.isfinite(wide).all():
        raise ConfigError("the vector table holds a NaN or an infinity")
    top = float(np.abs(wide).max())
    if top == 0.0:
        raise ConfigError("the vector table is all zeros")
    return np.rint(wide * (TABLE_MAX / top)).astype(np.int16)


@dataclass(frozen=True, eq=False)
class StaticModel:
    """A tokenizer and its int16 vector table, named by the sha256 of the files they came
    from: what a hybrid engine records and a replay must find again."""

    tokenizer: BpeTokenizer
    table: npt.NDArray[np.int16]
    table_digest: str  # sha256 of the vector file as shipped
    tokenizer_digest: str  # sha256 of tokenizer.json as shipped
    source: str  # where this install found it (for messages; never recorded)

    def __post_init__(self) -> None:
        vocab = max(self.tokenizer.spec.vocab.values()) + 1
        if self.table.shape[0] < vocab:
            raise ConfigError(f"the vector table has {self.table.shape[0]} rows but the "
                              f"tokenizer has {vocab} tokens ({self.source})")

    @property
    def dim(self) -> int:
        return int(self.table.shape[1])

    def identity(self) -> dict[str, object]:
        """What names this model in an engine's config: digests, shape, quantization."""
        return {"table": self.table_digest, "tokenizer": self.tokenizer_digest,
                "rows": int(self.table.shape[0]), "dim": self.dim,
                "quantization": QUANTIZATION}

    def token_sum(self, text: str) -> npt.NDArray[np.int64]:
        """The sum of ``text``'s token vectors: exact integers, in any order."""
        return self.row_sum(self.tokenizer.ids(text))

    def row_sum(self, ids: list[int]) -> npt.NDArray[np.int64]:
        """The sum of the rows ``ids`` (zeros for none)."""
        if not ids:
            return np.zeros(self.dim, dtype=np.int64)
        total: npt.NDArray[np.int64] = self.table[np.asarray(ids, dtype=np.int64)].sum(
            axis=0, dtype=np.int64)
        return total
