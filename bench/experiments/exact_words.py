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

``--presence`` measures the carrier a few bits a posting would give instead of a second
posting list: a document's score is bm25@6's plus beta times the own-stem impacts of the
query words it holds in their exact (casefolded) form, its bm25@6 score otherwise; the 1,000
documents of bm25@6's run re-ranked by it, ties in bm25@6's order. ``--form-bits N`` counts
only each stem's N forms held by the most documents, what N bits a posting can name.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from rookhaven import Document, Retriever  # noqa: E402
from rookhaven.core.providers.bm25 import WEIGHT_BITS  # noqa: E402
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


def form_bits(retriever: Retriever, words: Sequence[frozenset[str]], bits: int
              ) -> frozenset[str]:
    """The forms a posting's ``bits`` bits can name: each stem's ``bits`` forms held by the
    most documents (ties by form), as an index ranking its forms would choose them."""
    analyzer = retriever.provider.analyzer
    df: dict[str, int] = {}
    for held in words:
        for word in held:
            df[word] = df.get(word, 0) + 1
    by_stem: dict[str, list[str]] = {}
    for word in df:
        stems = analyzer.terms_of([word])
        if stems:
            by_stem.setdefault(stems[0], []).append(word)
    return frozenset(form for forms in by_stem.values()
                     for form in sorted(forms, key=lambda f: (-df[f], f))[:bits])


def presence_bonus(retriever: Retriever, documents: Sequence[Document],
                   words: Sequence[frozenset[str]], query: str,
                   ranked: list[tuple[str, float]], named: frozenset[str] | None = None,
                   ) -> dict[str, float]:
    """Per document of ``ranked``: the summed own-stem impacts (in the run's score units) of
    the query's words it holds in their exact, casefolded form (``words``: each document's
    tokens; ``named``: the only forms that count, where a posting names a few)."""
    analyzer, index = retriever.provider.analyzer, retriever.index
    term_ids, scale = index.index.term_ids, retriever.provider.scale
    ordinal = {d.id: at for at, d in enumerate(documents)}
    ords = sorted(ordinal[d] for d, _ in ranked)
    bonus = dict.fromkeys(ords, 0)
    for word in sorted(set(analyzer.split_tokens(query))):
        stems = analyzer.terms_of([word])
        tid = term_ids.get(stems[0]) if stems else None
        countable = tid is not None and (named is None or word in named)
        held = [o for o in ords if word in words[o]] if countable else []
        if not held:
            continue
        impacts = index.scorer.score_docs([(1, ((tid, 1 << WEIGHT_BITS),))],
                                          np.asarray(held, dtype=np.int64))
        for o, impact in zip(held, np.asarray(impacts).tolist(), strict=True):
            bonus[o] += impact
    return {documents[o].id: units / scale for o, units in bonus.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collections", nargs="+", type=Path)
    parser.add_argument("--meta", type=Path, default=ROOT / "bench/collections/shared.json")
    parser.add_argument("--variants", action="store_true",
                        help="the index-level rule: surface words, stems as weighted variants")
    parser.add_argument("--presence", action="store_true",
                        help="the bit-a-posting carrier: exact forms add beta times their "
                             "own-stem impact")
    parser.add_argument("--form-bits", type=int, default=0,
                        help="with --presence: only each stem's N most frequent forms count "
                             "(N bits a posting; 0: every form)")
    args = parser.parse_args()
    known = read_metadata(args.meta) if args.meta.exists() else {}
    by_genre: dict[str, list[list[float]]] = {}
    moved: dict[str, list[str]] = {}
    names = (["unstemmed", *(f"variants={w}" for w in VARIANT_WEIGHTS)] if args.variants
             else ["unstemmed", *(f"presence={b}" for b in BETAS)] if args.presence
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
        elif args.presence:
            listed = list(documents)
            analyzer = stemmed.provider.analyzer
            words = [frozenset(analyzer.split_tokens(" ".join(
                [*(d.fields or {}).values(), d.text]))) for d in listed]
            named = form_bits(stemmed, words, args.form_bits) if args.form_bits else None
            bonuses = {q: presence_bonus(stemmed, listed, words, collection.queries.get(q, ""),
                                         stem.get(q, []), named) for q in qids}
            for beta in BETAS:
                runs[f"presence={beta}"] = [ndcg(fused(stem.get(q, []), list(
                    bonuses[q].items()), beta), collection.qrels[q], 10) for q in qids]
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
