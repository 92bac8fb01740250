"""Options and helpers shared by several subcommands."""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from ..config import Settings
from ..core.identity import RESULT_KEY_PATTERN
from ..errors import ConfigError, shown
from ..models import RetrievalRequest
from ..settingvalues import WEEK

# ASCII digits only: int() also takes '５' (fullwidth), '1_000' and surrounding spaces,
# which a log of the command would show as something else than the number used.
_WHOLE = re.compile(r"-?[0-9]{1,18}")


def whole(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number >= ``minimum``, in ASCII digits."""
    def parse(raw: str) -> int:
        if not _WHOLE.fullmatch(raw):
            raise argparse.ArgumentTypeError(f"expected a whole number, got {raw!r}")
        value = int(raw)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {minimum}, got {value}")
        return value
    return parse


positive_int = whole(1)
count = whole(0)


def seconds(*, zero: bool = False, maximum: float = WEEK) -> Callable[[str], float]:
    """An argparse type: a finite number of seconds, > 0 (or >= 0 with ``zero``), at most
    ``maximum``. NaN is refused too: every comparison with it is false, so a wait on it
    never ends."""
    floor = ">= 0" if zero else "> 0"

    def parse(raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and (value >= 0 if zero else value > 0)
                and value <= maximum):
            raise argparse.ArgumentTypeError(
                f"expected a number of seconds {floor} and <= {maximum:.0f}, got {raw[:40]!r}")
        return value
    return parse


positive_seconds = seconds()


def output_file(raw: str) -> Path:
    """An argparse type: a file the command will write, checked before any work is done:
    its directory must exist and it must not be a directory itself."""
    path = Path(raw)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{shown(raw)} is a directory; name a file in it")
    if not path.resolve().parent.is_dir():
        raise argparse.ArgumentTypeError(
            f"the directory of {shown(raw)} does not exist; create it or name another file")
    return path


def result_key(raw: str) -> str:
    """An argparse type: a result key (also a job id), ``sha256:`` and 64 lowercase hex
    digits. Anything else names nothing, so it is bad input, not a missing result."""
    if re.fullmatch(RESULT_KEY_PATTERN, raw) is None:
        raise argparse.ArgumentTypeError(
            f"expected a result key (sha256: and 64 lowercase hex digits), got {shown(raw)}")
    return raw


def moment(raw: str) -> float:
    """Unix seconds from a number or an ISO 8601 time (UTC when no zone is given)."""
    try:
        value = float(raw)
    except ValueError:
        pass
    else:
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected a finite Unix time, got {raw[:40]!r}")
        return value
    try:
        parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(
            f"expected ISO 8601 or Unix seconds, got {raw[:40]!r}") from None


def add_request_options(parser: argparse.ArgumentParser,
                        query: argparse._ActionsContainer | None = None) -> None:
    """--query, --budget, --seed and --no-decompose; --query goes into ``query`` if given (a
    required mutually exclusive group, say), else it is required."""
    if query is None:
        parser.add_argument("--query", required=True, help="the query text")
    else:
        query.add_argument("--query", help="the query text")
    parser.add_argument("--budget", type=positive_int,
                        help="documents to return in all (default: ROOKHAVEN_DEFAULT_RECALL)")
    parser.add_argument("--seed", help="seed for every tie-break (default: ROOKHAVEN_DEFAULT_SEED)")
    parser.add_argument("--no-decompose", action="store_true",
                        help="rank the query as one need instead of splitting it")


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """--engine NAME@VERSION, and --provider NAME (that provider's default version)."""
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--engine", dest="engine", metavar="NAME@VERSION",
                        help="engine to rank with (default: ROOKHAVEN_ENGINE); see "
                             "`rookhaven engines`")
    chosen.add_argument("--provider", dest="engine", metavar="NAME",
                        help="the default engine version of provider NAME (its newest "
                             "that is not a preview)")


def request_from(args: argparse.Namespace, settings: Settings) -> RetrievalRequest:
    """The request ``add_request_options`` read, through ``Settings.request``."""
    return settings.request(args.query, args.budget, args.seed, not args.no_decompose)


def corpus_path(args: argparse.Namespace, settings: Settings) -> Path:
    """The corpus file from --corpus, else ROOKHAVEN_CORPUS_PATH."""
    path = args.corpus or settings.corpus_path
    if path is None:
        raise ConfigError("no corpus given: pass --corpus FILE or set ROOKHAVEN_CORPUS_PATH")
    return Path(path)


def write_line(data: bytes) -> None:
    """Write ``data`` and a newline to stdout as bytes, exactly."""
    sys.stdout.buffer.write(data + b"\n")
    sys.stdout.buffer.flush()
