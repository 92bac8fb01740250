"""Would exact words outranking their stems help? bm25@6's scores plus a share of the same
engine's scores without stemming, fused per document, against bm25@6 alone.

Run by hand (not a test), from the repository root:

    .venv/bin/python bench/experiments/exact_words.py \
        $(for d in bench/collections/*/; do [ -f $d/qrels/test.tsv ] && echo $d; done) \
        ../shared/datasets/*/

A document's fused score is ``stemmed + beta * unstemmed``: its bm25@6 score and its score by
bm25@6 with ``stemmer=none`` (0 where that run did not retrieve it), each run to a budget of
1,000; a word matching exactly then counts in both, a word matching only by stem in one.
Ties keep bm25@6's order. This is the effect an engine weighting an exact match above a
stem-only match would aim for, measured before building it into the index. Prints nDCG@10
per collection and beta, each genre's mean, and the collections where a beta is
significantly worse (or better) than bm25@6 (paired t-test, p < 0.05).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from rookhaven import Document, Retriever  # noqa: E402
from rookhaven.evaluation.beir import collection_genre, load_collection, read_metadata  # noqa: E402
from rookhaven.evaluation.metrics import ndcg  # noqa: E402
from rookhaven.evaluation.run import run_collection  # noqa: E402
from rookhaven.evaluation.significance import paired_p  # noqa: E402

BETAS = (0.25, 0.5, 1.0, 2.0)
VARIANT_WEIGHTS = (0.5, 0.75, 0.9)
SEED = "rookhaven-default"
DEPTH = 1000


def fused(stemmed: list[tuple[str, float]], unstemmed: list[tuple[str, float]],
          beta: float) -> list[str]:
    """Documents by ``stemmed + beta * unstemmed`` score, ties in the stemmed run's order."""
    exact_of = dict(unstemmed)
    order = {d: at for at, (d, _) in enumerate(stemmed)}
    scores = {d: s + beta * exact_of.get(d, 0.0) for d, s in stemmed}
    for d, s in unstemmed:
        scores.setdefault(d, beta * s)
    return sorted(scores, key=lambda d: (-scores[d], order.get(d, DEPTH), d))


def stem_families(documents: Sequence[Document], surface: Retriever,
                  stemmed: Retriever) -> dict[str, list[str]]:
    """Each surface word of ``documents`` -> the other surface words sharing its stem."""
    unstemmed, stem_of = surface.provider.analyzer, stemmed.provider.analyzer
    families: dict[str, set[str]] = {}
    for document in documents:
        text = " ".join([*(document.fields or {}).values(), document.text])
        for word in set(unstemmed.terms(text)):
            for stem in stem_of.terms(word)[:1]:
                families.setdefault(stem, set()).add(word)
    return {word: sorted(family - {word}) for family in families.values() if len(family) > 1
            for word in family}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collections", nargs="+", type=Path)
    parser.add_argument("--meta", type=Path, default=ROOT / "bench/collections/shared.json")
    parser.add_argument("--variants", action="store_true",
                        help="the index-level rule: surface words, stems as weighted variants")
    args = parser.parse_args()
    known = read_metadata(args.meta) if args.meta.exists() else {}
    by_genre: dict[str, list[list[float]]] = {}
    moved: dict[str, list[str]] = {}
    names = (["unstemmed", *(f"variants={w}" for w in VARIANT_WEIGHTS)] if args.variants
             else ["unstemmed", *(f"beta={b}" for b in BETAS)])
    print("collection genre queries bm25@6 " + " ".join(names), flush=True)
    for directory in args.collections:
        collection = load_collection(directory, max_docs=10**7)
        genre = collection_genre(directory, known)
        documents = collection.documents
        stemmed = Retriever(documents, "bm25@6")
        surface = Retriever(documents, "bm25@6", stemmer="none")
        depth = 100 if args.variants else DEPTH
        stem = run_collection(collection, stemmed, budget=depth, seed=SEED).rankings
        exact = run_collection(collection, surface, budget=depth, seed=SEED).rankings
        qids = sorted(collection.qrels)
        base = [ndcg([d for d, _ in stem.get(q, [])], collection.qrels[q], 10) for q in qids]
        runs = {"unstemmed": [ndcg([d for d, _ in exact.get(q, [])], collection.qrels[q], 10)
                              for q in qids]}
        if args.variants:
            families = stem_families(list(documents), surface, stemmed)
            for weight in VARIANT_WEIGHTS:
                varied = Retriever(documents, "bm25@6", stemmer="none", synonyms=families,
                                   synonym_weight=weight)
                rankings = run_collection(collection, varied, budget=depth,
                                          seed=SEED).rankings
                runs[f"variants={weight}"] = [
                    ndcg([d for d, _ in rankings.get(q, [])], collection.qrels[q], 10)
                    for q in qids]
        else:
            for beta in BETAS:
                runs[f"beta={beta}"] = [ndcg(fused(stem.get(q, []), exact.get(q, []), beta),
                                             collection.qrels[q], 10) for q in qids]
        row = [statistics.fmean(base)] + [statistics.fmean(v) for v in runs.values()]
        for name, values in runs.items():
            diff = statistics.fmean(values) - statistics.fmean(base)
            if diff != 0 and paired_p(values, base) < 0.05:
                moved.setdefault(name, []).append(f"{directory.name} {diff:+.3f}")
        by_genre.setdefault(genre, []).append(row)
        print(f"{directory.name} {genre} {len(qids)} " + " ".join(f"{v:.3f}" for v in row),
              flush=True)
    for genre, rows in sorted(by_genre.items()):
        means = [statistics.fmean(col) for col in zip(*rows, strict=True)]
        print(f"MEAN {genre} ({len(rows)}) " + " ".join(f"{v:.3f}" for v in means))
    for name in names:
        print(f"significantly different from bm25@6, {name}: "
              + (", ".join(moved.get(name, [])) or "none"))


if __name__ == "__main__":
    main()
