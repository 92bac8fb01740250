"""Reading one 2-D tensor from a safetensors file: its header is JSON, its data raw."""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError

# The dtypes a vector table may have, little-endian as the format prescribes.
DTYPES = {"F16": "<f2", "F32": "<f4", "F64": "<f8"}
MAX_HEADER = 100 << 20


def read_table(data: bytes, source: str, names: tuple[str, ...] = ()) -> npt.NDArray[Any]:
    """The one 2-D float tensor of ``data`` (a safetensors file), or the first of ``names``
    present; a ConfigError naming ``source`` if there is none."""
    if len(data) < 8:
        raise ConfigError(f"{source}: not a safetensors file (too short)")
    (size,) = struct.unpack("<Q", data[:8])
    if size > min(MAX_HEADER, len(data) - 8):
        raise ConfigError(f"{source}: not a safetensors file (header of {size} bytes)")
    try:
        header = json.loads(data[8:8 + size])
    except ValueError as exc:
        raise ConfigError(f"{source}: its safetensors header is not JSON ({exc})") from None
    tensors = {k: v for k, v in header.items() if k != "__metadata__" and isinstance(v, dict)}
    chosen = next((n for n in names if n in tensors), None)
    if chosen is None:
        tables = [n for n, v in tensors.items() if len(v.get("shape", ())) == 2]
        if len(tables) != 1:
            raise ConfigError(f"{source}: expected one 2-D tensor (or one named "
                              f"{', '.join(names) or 'embeddings'}), found {sorted(tensors)}")
        chosen = tables[0]
    entry = tensors[chosen]
    dtype = DTYPES.get(str(entry.get("dtype")))
    shape = entry.get("shape")
    if dtype is None or not isinstance(shape, list) or len(shape) != 2:
        raise ConfigError(f"{source}: tensor {chosen!r} is {entry.get('dtype')} "
                          f"{shape}; a vector table is 2-D {', '.join(DTYPES)}")
    start, end = entry["data_offsets"]
    base = 8 + size
    want = shape[0] * shape[1] * np.dtype(dtype).itemsize
    if end - start != want or base + end > len(data):
        raise ConfigError(f"{source}: tensor {chosen!r} holds {end - start} bytes, "
                          f"its shape needs {want}")
    return np.frombuffer(data, dtype=dtype, count=shape[0] * shape[1],
                         offset=base + start).reshape(shape)
