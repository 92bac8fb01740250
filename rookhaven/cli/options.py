"""Options and helpers shared by several subcommands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..config import Settings
from ..errors import ConfigError, InvalidRequestError
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


def request_from(args: argparse.Namespace, settings: Settings) -> RetrievalRequest:
    """A request from the command line, defaults from settings, checked against the limits."""
    try:
        request = RetrievalRequest(
            query=args.query,
            recall_budget=args.budget or settings.default_recall,
            seed=args.seed if args.seed is not None else settings.default_seed,
            decompose=not args.no_decompose,
        )
    except ValueError as exc:
        first = exc.errors()[0] if hasattr(exc, "errors") else {"msg": str(exc), "loc": ()}
        where = ".".join(str(p) for p in first["loc"])
        raise InvalidRequestError(f"invalid request: {where}: {first['msg']}") from None
    return settings.check_request(request)


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
