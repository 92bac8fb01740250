"""Does the semantic half help only where its model can read the query? hybrid@1 per query
where the model's vocabulary holds enough of the query's words whole, bm25@6 elsewhere.

Run by hand (not a test), from the repository root:

    .venv/bin/python bench/experiments/semantic_coverage.py bench/collections/*/ \
        ../shared/datasets/*/

A query's coverage is the share of its words (white-space separated, lower-cased, outer
punctuation stripped) that the default model's tokenizer encodes as one token: an integer
rule in 1/256 units, as an engine would record it. With semantic weight 0 the fusion ranks
exactly as its lexical list, bm25@6's ranking, so "hybrid where coverage >= t, else bm25@6"
is what a gate at t would serve; each collection's nDCG@10 is printed for bm25@6, hybrid@1
and the gate at each threshold, with each genre's mean (held-out sets apart); then, for
hybrid@1 and each gate, the collections where it is significantly worse than bm25@6 (paired
t-test, p < 0.05) and by how much. ``--steps`` adds rules whose weight falls in steps with
coverage (``STEPS``), from runs of hybrid@1 at each of their weights: what the fusion would
serve at that weight, not a choice between two rankings.
"""

from __future__ import annotations

import argparse
import statistics
import string
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from rookhaven import Retriever  # noqa: E402
from rookhaven.core.semantic.shelf import SHELF  # noqa: E402
from rookhaven.evaluation.beir import collection_genre, load_collection, read_metadata  # noqa: E402
from rookhaven.evaluation.metrics import ndcg  # noqa: E402
from rookhaven.evaluation.run import run_collection  # noqa: E402
from rookhaven.evaluation.significance import paired_p  # noqa: E402

THRESHOLDS = (64, 128, 160, 192, 224, 256)  # in 1/256
SEED = "rookhaven-default"


def coverage(query: str, tokens_of: object) -> int:
    """The share (in 1/256, floored) of the query's words the tokenizer holds whole."""
    words = [w.strip(string.punctuation) for w in query.lower().split()]
    words = [w for w in words if w]
    if not words:
        return 256
    whole = sum(len(tokens_of.ids(w)) == 1 for w in words)  # type: ignore[attr-defined]
    return whole * 256 // len(words)


# A weight that falls in steps with coverage: (coverage floor in 1/256, semantic weight),
# the first floor the query reaches giving its weight; below every floor, bm25@6's ranking.
STEPS = {
    "steps-a": ((224, 0.2), (192, 0.15), (160, 0.1), (128, 0.05)),
    "steps-b": ((192, 0.2), (160, 0.1)),
    "steps-c": ((224, 0.2), (192, 0.1)),
}
DEFAULT_WEIGHT = 0.2  # hybrid@1's semantic_weight


def chosen(cover: int, steps: tuple[tuple[int, float], ...]) -> float:
    """The semantic weight a stepped rule gives a query of ``cover`` (0: bm25@6 alone)."""
    return next((weight for floor, weight in steps if cover >= floor), 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collections", nargs="+", type=Path)
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--meta", type=Path, default=ROOT / "bench/collections/shared.json")
    parser.add_argument("--steps", action="store_true",
                        help="also the stepped weights of STEPS (runs hybrid@1 at each)")
    args = parser.parse_args()
    tokenizer = SHELF.model(SHELF.default_digest()).tokenizer
    known = read_metadata(args.meta) if args.meta.exists() else {}
    by_genre: dict[str, list[list[float]]] = {}
    worse: dict[str, list[str]] = {}
    rules = [f"gate@{t}" for t in THRESHOLDS] + (list(STEPS) if args.steps else [])
    weights = sorted({w for steps in STEPS.values() for _, w in steps} - {DEFAULT_WEIGHT}
                     ) if args.steps else []
    print("collection genre queries mean-coverage bm25@6 hybrid@1 " + " ".join(rules),
          flush=True)
    for directory in args.collections:
        collection = load_collection(directory, max_docs=10**7)
        genre = collection_genre(directory, known)
        retrievers = {0.0: Retriever(collection.documents, "bm25@6"),
                      DEFAULT_WEIGHT: Retriever(collection.documents, "hybrid@1")}
        for weight in weights:
            retrievers[weight] = Retriever(collection.documents, "hybrid@1",
                                           semantic_weight=weight)
        runs = {weight: run_collection(collection, retriever, budget=args.budget,
                                       seed=SEED).rankings
                for weight, retriever in retrievers.items()}
        qids = sorted(collection.qrels)
        cover = {q: coverage(collection.queries.get(q, ""), tokenizer) for q in qids}
        scores = {weight: {q: ndcg([d for d, _ in run.get(q, [])], collection.qrels[q], 10)
                           for q in qids} for weight, run in runs.items()}
        base = [scores[0.0][q] for q in qids]
        served = {"hybrid@1": [scores[DEFAULT_WEIGHT][q] for q in qids]}
        for t in THRESHOLDS:
            served[f"gate@{t}"] = [scores[DEFAULT_WEIGHT if cover[q] >= t else 0.0][q]
                                   for q in qids]
        for name in rules[len(THRESHOLDS):]:
            served[name] = [scores[chosen(cover[q], STEPS[name])][q] for q in qids]
        row = [statistics.fmean(base)] + [statistics.fmean(v) for v in served.values()]
        for name, values in served.items():
            drop = statistics.fmean(values) - statistics.fmean(base)
            if drop < 0 and paired_p(values, base) < 0.05:
                worse.setdefault(name, []).append(f"{directory.name} {drop:+.3f}")
        by_genre.setdefault(genre, []).append(row)
        mean_cover = statistics.fmean(cover.values()) / 256
        print(f"{directory.name} {genre} {len(qids)} {mean_cover:.2f} "
              + " ".join(f"{v:.3f}" for v in row), flush=True)
    for genre, rows in sorted(by_genre.items()):
        means = [statistics.fmean(col) for col in zip(*rows, strict=True)]
        print(f"MEAN {genre} ({len(rows)}) " + " ".join(f"{v:.3f}" for v in means))
    for name in ("hybrid@1", *rules):
        print(f"significantly worse than bm25@6, {name}: "
              + (", ".join(worse.get(name, [])) or "none"))


if __name__ == "__main__":
    main()
