"""Run ``rookhaven`` commands in-process, one case a line: the fuzz test's long-lived worker.

Reads JSON lines ``{"argv": [...], "env": {...}}`` on stdin and answers each with
``{"status": int, "stderr": str, "escaped": str | null}`` on stdout: the exit status main
returned (or argparse's SystemExit code), what it wrote to stderr, and the traceback of
anything that escaped main (which a real process would print). One process for many
cases because starting the CLI costs ~0.5 s; the parent sets its memory limit and timeout.
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rookhaven.cli.main import main


def run(argv: list[str], env: dict[str, str]) -> dict[str, object]:
    """One CLI run with ``env`` as its only ROOKHAVEN_* variables, as a fresh process sees it."""
    for name in [n for n in os.environ if n.startswith("ROOKHAVEN_")]:
        del os.environ[name]
    os.environ.update(env)
    logger = logging.getLogger("rookhaven")  # as before configure_logging ever ran
    logger.handlers[:], logger.propagate = [], True
    logger.setLevel(logging.NOTSET)
    stderr = io.StringIO()
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    real = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stdout, stderr
    escaped = None
    try:
        status: object = main(argv)
    except SystemExit as exit:
        status = exit.code if isinstance(exit.code, int) else 1
    except BaseException:  # a real process would print this traceback
        status, escaped = 1, traceback.format_exc()
    finally:
        sys.stdout, sys.stderr = real
    return {"status": status, "stderr": stderr.getvalue(), "escaped": escaped}


def serve() -> None:
    for line in sys.stdin:
        case = json.loads(line)
        answer = run(case["argv"], case["env"])
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
