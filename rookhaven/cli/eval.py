"""``rookhaven eval``: rank a BEIR collection's judged queries and print the metrics."""

from __future__ import annotations

import argparse
from typing import Any

import orjson

from ..config import Settings
from ..core.engine import Retriever
from ..evaluation import METRICS, load_collection, read_split, run_collection, write_trec_run
from ..synonymfile import load_synonyms
from .options import add_engine_options, positive_int


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("eval", help="measure ranking quality on a BEIR collection",
                                   description=__doc__)
    parser.add_argument("dataset", metavar="DATASET_DIR",
                        help="directory with corpus.jsonl, queries.jsonl and qrels/test.tsv")
    add_engine_options(parser)
    parser.add_argument("--budget", type=positive_int, default=100,
                        help="documents retrieved per query (default: 100)")
    parser.add_argument("--no-decompose", action="store_true",
                        help="rank each query as one need instead of splitting it")
    parser.add_argument("--queries-split", metavar="FILE",
                        help="evaluate only the query ids listed in FILE, one a line")
    parser.add_argument("--run-out", metavar="FILE", help="write the rankings as a TREC run")
    parser.add_argument("--synonyms", metavar="FILE",
                        help="query-side synonyms for bm25 ('a, b' or 'a => b' a line)")
    parser.add_argument("--format", choices=("json", "table"), default="table",
                        help="json: one object with every metric; table: aligned text")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    collection = load_collection(args.dataset, max_docs=settings.max_corpus_docs)
    provider = settings.engine
    params = {"synonyms": load_synonyms(args.synonyms)} if args.synonyms else {}
    retriever = Retriever(collection.documents, provider, **params)
    only = read_split(args.queries_split) if args.queries_split else None
    result = run_collection(collection, retriever, budget=args.budget, seed=settings.default_seed,
                            decompose=not args.no_decompose, only=only)
    if args.run_out:
        write_trec_run(args.run_out, result.rankings, f"rookhaven-{provider}")
    report = result.report()
    if args.format == "json":
        print(orjson.dumps(report).decode())
    else:
        print(f"{'queries':<14}{len(result.rankings)}")
        for name in METRICS:
            print(f"{name:<14}{report[name]:.4f}")
        print(f"{'empty_queries':<14}{report['empty_queries']}")
    return 0
