"""LLVM's population count as a numba intrinsic, for compiled kernels only.

Imported by ``compiled.Kernel`` when it makes a kernel's dispatcher (never by the core at
import: numba is optional and loaded at the first compiled call). In a loop over a
contiguous array LLVM vectorizes it (a byte-table shuffle under AVX2), which a shift-and-add
popcount written in the kernel does not get; the count is the same integer either way.
"""

from __future__ import annotations

from typing import Any

from numba import types
from numba.extending import intrinsic


@intrinsic
def popcount(typingctx: Any, x: Any) -> Any:
    """The number of set bits of a uint64."""
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.ctpop(args[0])
    return types.uint64(types.uint64), codegen
