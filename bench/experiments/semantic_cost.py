"""What a hybrid request's semantic half can give up, and where its time goes.

Run by hand (not a test), from the repository root:

    .venv/bin/python bench/experiments/semantic_cost.py quality \
        $(for d in bench/collections/*/; do [ -f $d/qrels/test.tsv ] && echo $d; done) \
        ../shared/datasets/*/
    .venv/bin/python bench/experiments/semantic_cost.py speed bench/data/syn10k

``quality``: nDCG@10 (``--budget``, 100 unless said) of bm25@6, hybrid@1 and hybrid@1 with a
smaller exact set: a prefilter of 500, 250 or 100 documents, sign codes of the first 128 or
64 dimensions (``vectors.CODE_DIMS``, a constant of the engine, set here before each build),
and both lists' depths at 50 or 20 (what a depth tied to a budget of 10 would rank);
collections of at most 250 documents are skipped (no prefilter applies). Per collection,
then each genre's mean, then every setting significantly worse (paired t-test, p < 0.05)
than bm25@6 or than hybrid@1.

``speed``: microseconds a request (``result_bytes``, the best of three passes over 500
queries, every setting alternating in this process) of bm25@6, bm25@6 without its direct
path (the generic one every engine that fuses takes), hybrid@1, its smaller exact sets and
depths of 20.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from rookhaven import RetrievalRequest, Retriever  # noqa: E402
from rookhaven.core.providers import hybrid  # noqa: E402
from rookhaven.core.semantic import vectors  # noqa: E402
from rookhaven.corpusfile import load_corpus  # noqa: E402
from rookhaven.evaluation.beir import collection_genre, load_collection, read_metadata  # noqa: E402
from rookhaven.evaluation.metrics import ndcg  # noqa: E402
from rookhaven.evaluation.run import run_collection  # noqa: E402
from rookhaven.evaluation.significance import paired_p  # noqa: E402

SEED = "rookhaven-default"
# name: (engine, parameters, sign-code dimensions)
QUALITY = {
    "bm25@6": ("bm25@6", {}, 256), "hybrid@1": ("hybrid@1", {}, 256),
    "p500": ("hybrid@1", {"semantic_prefilter": 500}, 256),
    "p250": ("hybrid@1", {"semantic_prefilter": 250}, 256),
    "p100": ("hybrid@1", {"semantic_prefilter": 100}, 256),
    "p250-c128": ("hybrid@1", {"semantic_prefilter": 250}, 128),
    "p250-c64": ("hybrid@1", {"semantic_prefilter": 250}, 64),
    "p250-d50": ("hybrid@1", {"semantic_prefilter": 250, "lexical_depth": 50,
                              "semantic_depth": 50}, 256),
    "p250-d20": ("hybrid@1", {"semantic_prefilter": 250, "lexical_depth": 20,
                              "semantic_depth": 20}, 256),
}
SPEED = {
    "bm25@6": ("bm25@6", {}, 256), "hybrid@1": ("hybrid@1", {}, 256),
    "p250": ("hybrid@1", {"semantic_prefilter": 250}, 256),
    "p250-c128": ("hybrid@1", {"semantic_prefilter": 250}, 128),
    "p250-d20": ("hybrid@1", {"semantic_prefilter": 250, "lexical_depth": 20,
                              "semantic_depth": 20}, 256),
}


def built(documents: Any, engine: str, params: dict[str, Any], dims: int) -> Retriever:
    # Read when the index's codes are made; hybrid.py holds its own name for it.
    for module in (vectors, hybrid):
        setattr(module, "CODE_DIMS", dims)  # noqa: B010
    try:
        return Retriever(documents, engine, **params)
    finally:
        for module in (vectors, hybrid):
            setattr(module, "CODE_DIMS", 256)  # noqa: B010


def quality(paths: list[Path], budget: int) -> None:
    known = read_metadata(ROOT / "bench/collections/shared.json")
    by_genre: dict[str, list[list[float]]] = {}
    worse: dict[tuple[str, str], list[str]] = {}
    print("collection genre documents queries " + " ".join(QUALITY), flush=True)
    for directory in paths:
        collection = load_collection(directory, max_docs=10**7)
        if len(collection.documents) <= 250:
            continue
        qids = sorted(collection.qrels)
        scores = {}
        for name, (engine, params, dims) in QUALITY.items():
            run = run_collection(collection, built(collection.documents, engine, params, dims),
                                 budget=budget, seed=SEED).rankings
            scores[name] = [ndcg([d for d, _ in run.get(q, [])], collection.qrels[q], 10)
                            for q in qids]
        for name, values in scores.items():
            for reference in ("bm25@6", "hybrid@1"):
                drop = statistics.fmean(values) - statistics.fmean(scores[reference])
                if name != reference and drop < 0 and paired_p(values, scores[reference]) < 0.05:
                    worse.setdefault((name, reference), []).append(
                        f"{directory.name} {drop:+.3f}")
        row = [statistics.fmean(v) for v in scores.values()]
        by_genre.setdefault(collection_genre(directory, known), []).append(row)
        print(f"{directory.name} {collection_genre(directory, known)} "
              f"{len(collection.documents)} {len(qids)} " + " ".join(f"{v:.4f}" for v in row),
              flush=True)
    for genre, rows in sorted(by_genre.items()):
        print(f"MEAN {genre} ({len(rows)}) "
              + " ".join(f"{statistics.fmean(c):.4f}" for c in zip(*rows, strict=True)))
    for (name, reference), where in sorted(worse.items()):
        print(f"significantly worse than {reference}, {name}: {', '.join(where)}")


def speed(corpus: Path) -> None:
    documents = load_corpus(corpus / "corpus.jsonl", max_docs=10**7)
    retrievers = {name: built(documents, *spec) for name, spec in SPEED.items()}
    generic = Retriever(documents, "bm25@6")
    generic.__dict__["_direct"] = None  # the path a fusing engine takes
    timed(corpus, {"bm25@6": retrievers.pop("bm25@6"), "bm25@6 generic": generic,
                   **retrievers})


def timed(corpus: Path, retrievers: dict[str, Retriever]) -> None:
    """Microseconds a request of each of ``retrievers`` (the first the base of the ratios)
    at q3/q8 @10/@100: the best of three passes over 500 queries, alternating."""
    first = next(iter(retrievers))
    for file in ("q3.jsonl", "q8.jsonl"):
        texts = [orjson.loads(line)["text"] for line in (corpus / file).read_bytes().splitlines()
                 if line.strip()][:500]
        for k in (10, 100):
            requests = [RetrievalRequest(query=t, recall_budget=k) for t in texts]
            best = dict.fromkeys(retrievers, float("inf"))
            for _ in range(3):
                for name, retriever in retrievers.items():
                    for request in requests[:50]:
                        retriever.result_bytes(request)
                    began = time.perf_counter()
                    for request in requests:
                        retriever.result_bytes(request)
                    best[name] = min(best[name], (time.perf_counter() - began) / len(requests))
            base = best[first]
            print(f"{corpus.name} {file[:2]}@{k}: " + ", ".join(
                f"{name} {1e6 * s:.0f} us ({s / base:.2f}x)" for name, s in best.items()),
                flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("quality", "speed"))
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--budget", type=int, default=100,
                        help="quality: the recall budget of every request")
    args = parser.parse_args()
    if args.what == "quality":
        quality(args.paths, args.budget)
    else:
        for path in args.paths:
            speed(path)


if __name__ == "__main__":
    main()
