"""One compile of the kernels for a whole test session, run beside the tests that need none.

With test processes (xdist), each of them, and each worker a test starts while numba's
on-disk cache is still empty, would compile every kernel on its own: 45-55 s of a core
each, on a 2-core machine. Instead the controlling process starts one compile at
configure time (``start``); the test processes run the files marked ``no_kernels`` first,
and every other test waits (``wait``) until the compile has filled the cache. From a warm
cache the compile only loads, in about a second.

    python -m tests.kernelcache DONE ENGINE...   (what ``start`` runs)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV = "ROOKHAVEN_TEST_KERNELS_DONE"  # the file the compile writes when it ends
TIMEOUT = 900  # a loaded machine; past it a test compiles what it needs itself
_ended: list[bool] = []  # this process has seen the compile end


def start(root: Path) -> Path:
    """Start the compile in the background and tell the test processes (spawned after this,
    with this environment) where it will say it has ended."""
    from rookhaven.core.engines import ENGINES

    done = Path(tempfile.mkdtemp(prefix="rookhaven-kernels-")) / "done"
    subprocess.Popen([sys.executable, "-m", "tests.kernelcache", str(done),
                      *(spec.ref for spec in ENGINES)], cwd=root, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, start_new_session=True)
    os.environ[ENV] = str(done)
    return done


def wait() -> None:
    """Return once the session's compile has ended (at once without one, or after it)."""
    if _ended or not os.environ.get(ENV):
        return
    done = Path(os.environ[ENV])
    deadline = time.monotonic() + TIMEOUT
    while not done.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    _ended.append(True)


def warmup_setting() -> str:
    """ROOKHAVEN_KERNEL_WARMUP for a worker or MCP server a test starts: none once this
    session's compile has filled numba's cache with every engine's kernels (it loads them at
    first use instead of starting a process to load them: 1.6 s of a core a start;
    test_warmup runs the default), else the default, background."""
    done = Path(os.environ.get(ENV) or "/nonexistent")
    try:
        filled = done.read_text().split()[0] == "0"
    except (OSError, IndexError):
        filled = False
    return "none" if filled else "background"


def outcome(done: Path) -> str:
    """One line for the session's summary."""
    if not done.exists():
        return "kernels: the session's compile had not ended; each process compiled its own"
    code, seconds = done.read_text().split()
    how = "" if code == "0" else f", failed (exit {code}): each process compiled its own"
    return f"kernels: compiled (or loaded from numba's cache) once, in {seconds} s{how}"


def clean(done: Path) -> None:
    """Remove the compile's directory once it has ended (if it still runs, it is left)."""
    if done.exists():
        shutil.rmtree(done.parent, ignore_errors=True)


def main(argv: list[str]) -> int:
    from rookhaven.pipeline.warmup import warm_up

    done, engines = Path(argv[0]), argv[1:]
    started, code = time.monotonic(), 0
    try:
        warm_up(engines)
    except Exception as exc:  # reported in the summary; tests compile instead
        print(f"compiling the kernels failed: {exc!r}", file=sys.stderr)
        code = 1
    partial = done.with_suffix(".partial")
    partial.write_text(f"{code} {time.monotonic() - started:.1f}\n")
    os.replace(partial, done)  # whole or absent: a waiting process never reads half of it
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
