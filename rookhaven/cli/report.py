"""``rookhaven report RUN_ID --out FILE.html``: a re-ranking or verification run as one
self-contained HTML page (pictures, the queries that moved most, every alarm), readable
offline; a re-ranking still going gets a page of what it has compared so far."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..config import Settings
from ..reports import page_for
from ..reports.written import made_now, write_page
from ..store import Store
from .options import output_file


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("report", help="a run as an HTML page people read",
                                   description=__doc__)
    parser.add_argument("run_id", metavar="RUN_ID",
                        help="a re-ranking (rerank-...) or verification (verify-...) run")
    parser.add_argument("--out", type=output_file, required=True, metavar="FILE.html",
                        help="where to write the page (written whole or not at all)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    store = Store.from_settings(settings)
    try:
        write_page(args.out, page_for(store, args.run_id, made_now(store.now())))
    finally:
        store.close()
    print(f"report: {Path(args.out).resolve()}", file=sys.stderr)
    return 0
