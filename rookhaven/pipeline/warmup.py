"""Compiling the core's kernels before they are needed: in this process, or in a process of
its own while this one answers on the reference paths.

    python -m rookhaven.pipeline.warmup [--ready FILE] ENGINE...
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..config import Settings
from ..core import compiled
from ..core.engine import Retriever
from ..sampledata import sample_corpus, sample_requests

# Budgets that reach both top-k cuts: below and at 64 candidates or more.
BUDGETS = (10, 100)


def warm_up(engines: Iterable[str]) -> float:
    """Run the sample's requests with each engine, and the default one, at every budget of
    ``BUDGETS``; seconds.

    numba compiles a kernel on its first call, or loads it from its on-disk cache: the
    transposition and the union merge at index time, both top-k cuts, the feedback pass, the
    whole-query lookup of picks a cut did not hold, and a one-part query's short path (ADR
    0048), which only an engine that neither explains nor fuses takes: the default engine is
    warmed too, so a worker of any engine compiles nothing on a job of the default's. A cold
    cache costs 20-30 s on 2 cores (most of it the top-k kernel), a warm one about a second.
    """
    started = time.perf_counter()
    documents, requests = sample_corpus(), sample_requests()
    for engine in dict.fromkeys([*engines, Settings().engine]):
        retriever = Retriever(documents, engine)
        for request in requests:
            for budget in BUDGETS:
                retriever.result_bytes(request.model_copy(update={"recall_budget": budget}))
    return time.perf_counter() - started


class BackgroundWarmUp:
    """``warm_up`` in a process of its own, filling numba's on-disk cache, while this process
    (held: ``core.compiled.hold``) and any it forks answer on the reference paths: the same
    bytes, from the first request. Once ``ready``, a process releases its hold and loads the
    kernels from the cache on its next call, without compiling.

    A process, not a thread: a worker forks its pool while the compile runs, and a child
    forked while another thread holds numba's compiler lock would wait on it forever.
    """

    def __init__(self, engines: Sequence[str]) -> None:
        self._directory = tempfile.mkdtemp(prefix="rookhaven-warmup-")
        self.ready = Path(self._directory) / "ready"
        self.started = time.monotonic()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "rookhaven.pipeline.warmup", "--ready", str(self.ready),
             *engines], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)

    def switch_if_ready(self) -> bool:
        """Release this process's hold if the kernels are compiled: True for the call that
        switched (a process switches once), False before and after."""
        if compiled.live() or not self.ready.exists():
            return False
        compiled.release()
        return True

    def stop(self) -> None:
        """End the compile if it still runs and remove its marker (the worker is stopping)."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait(timeout=10)
        shutil.rmtree(self._directory, ignore_errors=True)


def start_beside(settings: Settings) -> BackgroundWarmUp | None:
    """Hold this process on the reference paths and start the kernels' compile beside it,
    as ROOKHAVEN_KERNEL_WARMUP=background asks. None without numba, or with ``none``: the
    kernels then load from numba's cache at their first call."""
    if not compiled.AVAILABLE or settings.kernel_warmup != "background":
        return None
    compiled.hold()
    return BackgroundWarmUp([settings.engine])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="compile the kernels into numba's cache")
    parser.add_argument("--ready", type=Path, help="file to create once they are compiled")
    parser.add_argument("engines", nargs="+")
    args = parser.parse_args(argv)
    seconds = warm_up(args.engines)
    if args.ready is not None:
        partial = args.ready.with_suffix(".partial")
        partial.write_text(f"{seconds:.3f}\n", encoding="utf-8")
        os.replace(partial, args.ready)  # whole or absent: a reader never sees it half made
    return 0


if __name__ == "__main__":
    sys.exit(main())
