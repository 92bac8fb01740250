"""``rookhaven retrieve``: rank a corpus file for one query and print the canonical result bytes."""

from __future__ import annotations

import argparse
from typing import Any

from ..config import Settings
from ..core.canonical import canonical_bytes
from ..core.engine import retrieve
from .options import add_engine_options, add_request_options, corpus_path, request_from, write_line


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("retrieve", help="rank a corpus file for one query",
                                   description=__doc__)
    parser.add_argument("--corpus", help="corpus file (default: ROOKHAVEN_CORPUS_PATH)")
    add_request_options(parser)
    add_engine_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    request = request_from(args, settings)
    corpus = settings.load_corpus(corpus_path(args, settings))
    result = retrieve(request, corpus, settings.engine)
    write_line(canonical_bytes(result))
    return 0
