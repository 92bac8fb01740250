"""Options and helpers shared by several subcommands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..config import Settings
from ..errors import ConfigError
from ..models import RetrievalRequest


def positive_int(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {raw!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def add_request_options(parser: argparse.ArgumentParser) -> None:
    """--query, --budget, --seed and --no-decompose."""
    parser.add_argument("--query", required=True, help="the query text")
    parser.add_argument("--budget", type=positive_int,
                        help="documents to return in all (default: ROOKHAVEN_DEFAULT_RECALL)")
    parser.add_argument("--seed", help="seed for every tie-break (default: ROOKHAVEN_DEFAULT_SEED)")
    parser.add_argument("--no-decompose", action="store_true",
                        help="rank the query as one need instead of splitting it")


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """--engine NAME@VERSION, and --provider NAME (that provider's newest version)."""
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--engine", dest="engine", metavar="NAME@VERSION",
                        help="engine to rank with (default: ROOKHAVEN_ENGINE); see "
                             "`rookhaven engines`")
    chosen.add_argument("--provider", dest="engine", metavar="NAME",
                        help="the newest engine version of provider NAME")


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
