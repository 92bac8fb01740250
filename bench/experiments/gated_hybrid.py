"""The hybrid@2 candidate (``GatedHybridProvider``) against bm25@6 and hybrid@1: quality on
the tuning collections, and its speed.

Run by hand (not a test), from the repository root:

    .venv/bin/python bench/experiments/gated_hybrid.py quality \
        $(for d in bench/collections/*/; do [ -f $d/qrels/test.tsv ] && echo $d; done) \
        ../shared/datasets/*/
    .venv/bin/python bench/experiments/gated_hybrid.py speed bench/data/syn10k bench/data/syn100k

``quality``: per collection nDCG@10, recall@100 and MRR@10 (``--budget``, 100 unless said;
at 10 the candidate ranks both lists to its depth floor, 50) of bm25@6, hybrid@1 and the
candidate; each genre's mean (held-out sets apart); the collections where the candidate is
significantly worse or better (paired t-test, p < 0.05, nDCG@10) than bm25@6 and than
hybrid@1. ``speed``: microseconds a request (``result_bytes``, best of three passes over 500
queries, engines alternating in this process) at q3/q8 @10/@100, and each engine's ratio to
bm25@6's. ``build CORPUS ENGINE``: one engine's build time and this process's peak
resident memory (run once per engine, each in a process of its own:
``.venv/bin/python bench/experiments/gated_hybrid.py build bench/data/syn1m candidate``).
``--set NAME=NUMBER`` (repeatable) gives the candidate a parameter other than its
default, e.g. ``--set exact_weight=0.25``; ``speed --variant NAME=NUMBER`` times the
candidate with that parameter too, in the same run.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from semantic_cost import timed  # noqa: E402  (this directory: the same timing loop)

from rookhaven import Retriever  # noqa: E402
from rookhaven.core.analyzer import Analyzer  # noqa: E402
from rookhaven.core.providers.hybrid import GatedHybridProvider  # noqa: E402
from rookhaven.corpusfile import load_corpus  # noqa: E402
from rookhaven.evaluation.beir import collection_genre, load_collection, read_metadata  # noqa: E402
from rookhaven.evaluation.metrics import ndcg, recall, reciprocal_rank  # noqa: E402
from rookhaven.evaluation.run import run_collection  # noqa: E402
from rookhaven.evaluation.significance import paired_p  # noqa: E402

SEED = "rookhaven-default"
ENGINES = ("bm25@6", "hybrid@1", "candidate")
METRICS = (("nDCG@10", ndcg, 10), ("R@100", recall, 100), ("MRR@10", reciprocal_rank, 10))


CANDIDATE: dict[str, Any] = {}  # the candidate's parameters beyond its defaults (--set)


def built(documents: object, name: str) -> Retriever:
    if name != "candidate":
        return Retriever(documents, name)
    # hybrid@1's analysis (bm25@6's), the candidate's own defaults for the rest.
    provider = GatedHybridProvider(analyzer=Analyzer(stemmer="english", split="visible-words"),
                                   version="2", record_parameters=True, **CANDIDATE)
    return Retriever(documents, provider)


def quality(paths: list[Path], budget: int) -> None:
    known = read_metadata(ROOT / "bench/collections/shared.json")
    by_genre: dict[str, list[list[float]]] = {}
    moved: dict[str, list[str]] = {}
    print("collection genre queries " + " ".join(
        f"{e}:{m}" for m, _, _ in METRICS for e in ENGINES), flush=True)
    for directory in paths:
        collection = load_collection(directory, max_docs=10**7)
        qids = sorted(collection.qrels)
        scores: dict[tuple[str, str], list[float]] = {}
        for engine in ENGINES:
            run = run_collection(collection, built(collection.documents, engine),
                                 budget=budget, seed=SEED).rankings
            for metric, measure, k in METRICS:
                scores[engine, metric] = [
                    measure([d for d, _ in run.get(q, [])], collection.qrels[q], k)
                    for q in qids]
        candidate = scores["candidate", "nDCG@10"]
        for reference in ("bm25@6", "hybrid@1"):
            base = scores[reference, "nDCG@10"]
            change = statistics.fmean(candidate) - statistics.fmean(base)
            if change and paired_p(candidate, base) < 0.05:
                side = "worse" if change < 0 else "better"
                moved.setdefault(f"{side} than {reference}", []).append(
                    f"{directory.name} {change:+.3f}")
        row = [statistics.fmean(scores[e, m]) for m, _, _ in METRICS for e in ENGINES]
        genre = collection_genre(directory, known)
        by_genre.setdefault(genre, []).append(row)
        print(f"{directory.name} {genre} {len(qids)} " + " ".join(f"{v:.4f}" for v in row),
              flush=True)
    for genre, rows in sorted(by_genre.items()):
        print(f"MEAN {genre} ({len(rows)}) "
              + " ".join(f"{statistics.fmean(c):.4f}" for c in zip(*rows, strict=True)))
    for what in ("worse than bm25@6", "better than bm25@6", "worse than hybrid@1",
                 "better than hybrid@1"):
        print(f"candidate significantly {what}: {', '.join(moved.get(what, [])) or 'none'}")


def speed(corpus: Path, variants: list[str]) -> None:
    documents = load_corpus(corpus / "corpus.jsonl", max_docs=10**7)
    retrievers = {name: built(documents, name) for name in ENGINES}
    base = dict(CANDIDATE)
    for variant in variants:  # the candidate again, one parameter changed
        CANDIDATE.update(_setting(variant))
        retrievers[f"candidate {variant}"] = built(documents, "candidate")
        CANDIDATE.clear()
        CANDIDATE.update(base)
    timed(corpus, retrievers)


def _setting(text: str) -> dict[str, Any]:
    name, _, value = text.partition("=")
    return {name: float(value) if "." in value else int(value)}


def build(corpus: Path, engine: str) -> None:
    documents = load_corpus(corpus / "corpus.jsonl", max_docs=10**7)
    began = time.perf_counter()
    built(documents, engine)
    took = time.perf_counter() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{corpus.name} {engine} {CANDIDATE or ''}: build {took:.1f} s, peak {peak:.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    q = sub.add_parser("quality")
    q.add_argument("collections", nargs="+", type=Path)
    q.add_argument("--budget", type=int, default=100)
    s = sub.add_parser("speed")
    s.add_argument("corpora", nargs="+", type=Path)
    s.add_argument("--variant", action="append", default=[], metavar="NAME=NUMBER",
                   help="also the candidate with this parameter, timed in the same run")
    b = sub.add_parser("build")
    b.add_argument("corpus", type=Path)
    b.add_argument("engine", choices=ENGINES)
    for sub_parser in (q, s, b):
        sub_parser.add_argument("--set", action="append", default=[], metavar="NAME=NUMBER",
                                help="a candidate parameter, e.g. exact_weight=0.25")
    args = parser.parse_args()
    for setting in args.set:
        CANDIDATE.update(_setting(setting))
    if args.mode == "quality":
        quality(args.collections, args.budget)
    elif args.mode == "build":
        build(args.corpus, args.engine)
    else:
        for corpus in args.corpora:
            speed(corpus, args.variant)


if __name__ == "__main__":
    main()
