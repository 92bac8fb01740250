"""``rookhaven eval``: rank BEIR collections' judged queries and print the metrics.

One collection and one engine print every metric. Several collections or engines print
one table, collections by engines, each engine after the first with its difference from
the first and a paired test's p-value per metric (scipy: ``pip install 'rookhaven[eval]'``).
``--by-genre`` groups the collections by the genre their ``meta.json`` (or ``--meta FILE``)
names and adds each genre's mean, so a loss on one kind of text cannot hide in the mean of
all; held-out sets are grouped apart.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

import orjson

from ..config import Settings
from ..core.engine import Retriever
from ..core.engines import engine_spec
from ..errors import ConfigError
from ..evaluation import (
    METRICS,
    UNLABELLED,
    Collection,
    check_trec_ids,
    collection_genre,
    load_collection,
    read_metadata,
    read_split,
    run_collection,
    write_trec_run,
)
from ..evaluation.compare import by_genre, comparison, evaluate_cell
from ..evaluation.requests import requests_collection
from ..evaluation.significance import TESTS
from ..store import Store
from ..synonymfile import load_synonyms
from .options import output_file, positive_int
from .tables import table

log = logging.getLogger("rookhaven.eval")


def _warned(name: str, collection: Collection) -> Collection:
    """``collection``, its judgements' problems logged (a warning line each on stderr)."""
    for warning in collection.warnings():
        log.warning("%s: %s", name, warning, extra={"collection": name})
    return collection

SHOWN = ("ndcg@10", "recall@100", "mrr@10")  # metrics of the comparison table by default


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("eval", help="measure ranking quality on BEIR collections",
                                   description=__doc__)
    parser.add_argument("datasets", metavar="DATASET_DIR", nargs="*",
                        help="directories with corpus.jsonl, queries.jsonl and qrels/test.tsv")
    parser.add_argument("--requests", metavar="FILE",
                        help="instead of a directory: judged requests, one JSON line each "
                             '({"query": "...", "expected": ["tool_a", "tool_b"]}, any '
                             "expected document a hit), ranked over the stored --corpus")
    parser.add_argument("--corpus", metavar="REF",
                        help="with --requests: the stored corpus (name, name@version or "
                             "digest) the requests are judged against")
    parser.add_argument("--engine", dest="engines", action="append", metavar="NAME@VERSION",
                        help="engine to rank with; repeat to compare engines, the first is "
                             "the baseline (default: ROOKHAVEN_ENGINE)")
    parser.add_argument("--provider", dest="engines", action="append", metavar="NAME",
                        help="the default engine version of provider NAME (repeatable)")
    parser.add_argument("--param", dest="params", action="append", default=[],
                        metavar="[ENGINE:]K=V",
                        help="engine parameter (V as JSON, else text) for every engine that "
                             "accepts K, or only ENGINE; repeatable")
    parser.add_argument("--budget", type=positive_int, default=100,
                        help="documents retrieved per query (default: 100)")
    parser.add_argument("--no-decompose", action="store_true",
                        help="rank each query as one need instead of splitting it")
    parser.add_argument("--queries-split", metavar="FILE",
                        help="evaluate only the query ids listed in FILE, one a line "
                             "(one collection and engine)")
    parser.add_argument("--run-out", metavar="FILE", type=output_file,
                        help="write the rankings as a TREC run (one collection and engine)")
    parser.add_argument("--synonyms", metavar="FILE",
                        help="query-side synonyms for bm25 ('a, b' or 'a => b' a line)")
    parser.add_argument("--metric", dest="metrics", action="append", choices=METRICS,
                        help=f"metric of the comparison table, repeatable (default: "
                             f"{', '.join(SHOWN)})")
    parser.add_argument("--test", choices=TESTS, default="t-test",
                        help="paired test against the first engine (default: t-test)")
    parser.add_argument("--by-genre", action="store_true",
                        help="group collections by the 'genre' of their meta.json and show "
                             "each genre's mean; held-out sets ('held_out': true) form groups "
                             f"of their own, and a collection without metadata is "
                             f"'{UNLABELLED}'")
    parser.add_argument("--meta", metavar="FILE",
                        help="with --by-genre: a JSON object of metadata by collection "
                             "directory name, for collections without a meta.json")
    parser.add_argument("--format", choices=("json", "table"), default="table",
                        help="json: one object; table: aligned text")
    parser.set_defaults(run=run)


def _value(raw: str) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw


def engine_params(engines: list[str], given: list[str],
                  synonyms: str | None) -> dict[str, dict[str, Any]]:
    """Each engine's parameters from ``--param [ENGINE:]K=V`` (and ``--synonyms``)."""
    out: dict[str, dict[str, Any]] = {e: {} for e in engines}
    if synonyms:
        for e in engines:
            out[e]["synonyms"] = load_synonyms(synonyms)
    for item in given:
        head, eq, raw = item.partition("=")
        target, _, name = head.rpartition(":")
        if not eq or not name:
            raise ConfigError(f"--param expects K=V or ENGINE:K=V, got {item!r}")
        chosen = [e for e in engines if not target or engine_spec(e).ref == engine_spec(target).ref]
        if not chosen:
            raise ConfigError(f"--param {item!r} names {engine_spec(target).ref}, which is not "
                              f"compared here ({', '.join(engines)}); add --engine "
                              f"{engine_spec(target).ref} or drop the prefix")
        takers = [e for e in chosen if name in engine_spec(e).parameters()]
        if not takers:
            accepted = sorted({p for e in chosen for p in engine_spec(e).parameters()})
            raise ConfigError(f"no engine compared takes parameter {name!r}; they accept "
                              f"{', '.join(accepted)}")
        for e in takers:
            out[e][name] = _value(raw)
    return out


REQUEST_METRICS = ["success@1", "success@5", "mrr@10", "ndcg@10", "recall@5", "recall@20"]


def _requests(args: argparse.Namespace, settings: Settings) -> Collection | None:
    """The judged requests over a stored corpus, when ``--requests`` names them."""
    if args.requests is None and args.corpus is None:
        if not args.datasets:
            raise ConfigError("eval needs a DATASET_DIR, or --requests FILE --corpus REF")
        return None
    if args.requests is None or args.corpus is None or args.datasets:
        raise ConfigError("--requests FILE and --corpus REF go together, without a "
                          "DATASET_DIR")
    store = Store.from_settings(settings)
    return requests_collection(args.requests, store.corpora.load(
        store.corpora.resolve(args.corpus)))


def run(args: argparse.Namespace, settings: Settings) -> int:
    judged = _requests(args, settings)
    if judged is None and args.meta and not args.by_genre:
        raise ConfigError("--meta gives genres to --by-genre; add --by-genre or drop --meta")
    engines = [engine_spec(e).ref for e in (args.engines or [settings.engine])]
    if len(set(engines)) != len(engines):
        raise ConfigError(f"an engine is named twice: {', '.join(engines)}")
    params = engine_params(engines, args.params, args.synonyms)
    if judged is not None:
        return _run_requests(args, settings, judged, engines, params)
    if len(args.datasets) == 1 and len(engines) == 1 and not args.by_genre:
        return _single(args, settings, engines[0], params[engines[0]])
    if args.queries_split or args.run_out:
        raise ConfigError("--queries-split and --run-out take one collection and one engine")
    names = {Path(d).resolve().name or d: d for d in args.datasets}
    if len(names) != len(args.datasets):
        raise ConfigError("two collection directories have the same name")
    # Genres first: malformed metadata is reported before any collection is ranked.
    known = read_metadata(args.meta) if args.meta else None
    genres = ({name: collection_genre(d, known) for name, d in names.items()}
              if args.by_genre else {})
    collections = {name: _warned(name, load_collection(d, max_docs=settings.max_corpus_docs))
                   for name, d in names.items()}
    cells = {name: {e: evaluate_cell(c, e, params[e], budget=args.budget,
                                     seed=settings.default_seed,
                                     decompose=not args.no_decompose) for e in engines}
             for name, c in collections.items()}
    metrics = args.metrics or list(SHOWN)
    if genres:  # rows grouped by genre, then by name
        cells = {n: cells[n] for n in sorted(cells, key=lambda n: (genres[n], n))}
    report = comparison(cells, engines, metrics, args.test)
    report["params"] = params
    if genres:
        report["genres"] = genres
        report["by_genre"] = by_genre(report, genres)
    return _print(report, args.format)


def _run_requests(args: argparse.Namespace, settings: Settings, judged: Collection,
                  engines: list[str], params: dict[str, dict[str, Any]]) -> int:
    """Every engine on a catalog's judged requests, with the paired test against the first."""
    if args.queries_split or args.run_out or args.by_genre:
        raise ConfigError("--queries-split, --run-out and --by-genre take DATASET_DIRs")
    name = Path(args.requests).name
    _warned(name, judged)
    cells = {name: {e: evaluate_cell(judged, e, params[e], budget=args.budget,
                                     seed=settings.default_seed,
                                     decompose=not args.no_decompose) for e in engines}}
    report = comparison(cells, engines, args.metrics or REQUEST_METRICS, args.test)
    report["params"] = params
    report["requests"] = len(judged.queries)
    return _print(report, args.format)


def _print(report: dict[str, Any], fmt: str) -> int:
    """The comparison as one JSON object or as the aligned table."""
    print(orjson.dumps(report).decode() if fmt == "json" else _render(report))
    return 0


def _render(report: dict[str, Any]) -> str:
    engines, base = report["engines"], report["baseline"]
    headers = ["collection", "metric", *engines]
    for e in engines[1:]:
        headers += [f"{e}-{base}", "p"]
    genres = report.get("genres")
    if genres:
        headers.insert(0, "genre")
    # (genre, name, entry, a mean?): collections, then each genre's mean, then the mean of all.
    blocks = [(genres[n] if genres else "", n, e, False) for n, e in report["collections"].items()]
    blocks += [(g, f"mean {g}", v["mean"], True) for g, v in report.get("by_genre", {}).items()]
    blocks.append(("all", "mean", report["mean"], True))
    rows: list[list[object]] = []
    for genre, name, entry, is_mean in blocks:
        lead = [genre] if genres else []
        for metric in report["metrics"]:
            if is_mean:  # no test across collections
                rows.append([*lead, name, metric, *(f"{entry[e][metric]:.4f}" for e in engines),
                             *(x for e in engines[1:] for x in
                               (f"{entry[e][metric] - entry[base][metric]:+.4f}", ""))])
                continue
            row: list[object] = [*lead, name, metric,
                                 *(f"{entry[e][metric]:.4f}" for e in engines)]
            for e in engines[1:]:
                row += [f"{entry[e][metric + ':delta']:+.4f}", f"{entry[e][metric + ':p']:.3g}"]
            rows.append(row)
    return table(headers, rows) + f"\np: paired {report['test']} against {base}, per query"


def _single(args: argparse.Namespace, settings: Settings, engine: str,
            params: dict[str, Any]) -> int:
    collection = _warned(str(args.datasets[0]),
                         load_collection(args.datasets[0], max_docs=settings.max_corpus_docs))
    if args.run_out:  # refused before any query is ranked
        check_trec_ids([*collection.queries, *(d.id for d in collection.documents)])
    retriever = Retriever(collection.documents, engine, **params)
    only = read_split(args.queries_split) if args.queries_split else None
    result = run_collection(collection, retriever, budget=args.budget, seed=settings.default_seed,
                            decompose=not args.no_decompose, only=only)
    if args.run_out:
        write_trec_run(args.run_out, result.rankings, f"rookhaven-{_tag(args, engine)}")
    report = {**result.report(), "unknown_judged_queries": collection.unknown_queries,
              "judged_documents_not_in_corpus": collection.unknown_documents}
    if args.format == "json":
        print(orjson.dumps(report).decode())
    else:
        print(f"{'queries':<14}{len(result.rankings)}")
        for name in METRICS:
            print(f"{name:<14}{report[name]:.4f}")
        print(f"{'empty_queries':<14}{report['empty_queries']}")
    return 0


def _tag(args: argparse.Namespace, engine: str) -> str:
    """The run tag: what the user named (``bm25`` for ``--provider bm25``), else the engine."""
    return args.engines[0] if args.engines else engine
