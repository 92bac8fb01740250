#!/usr/bin/env python3
"""Build time and full-retrieve speed of one engine on a synthetic corpus, for same-run
comparisons of two checkouts (or two engine versions) by hand:

    PYTHONPATH=. python bench/engine_speed.py bm25@2 bench/data/syn100k 3
    (cd ../other-checkout && PYTHONPATH=. python /path/to/bench/engine_speed.py bm25 ...)

It mirrors ``bench/ranking.py speed`` for engine ``rookhaven`` (canonical result bytes of
``Retriever.result_data``), but takes the engine as an argument and prints one JSON line:
load and build seconds, queries/s for q3/q8 at top-10 and top-100 (best of PASSES), peak MB.
Alternate the two sides several times: only same-run ratios mean anything here.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

import orjson

import rookhaven
from rookhaven import RetrievalRequest, Retriever, canonical_bytes
from rookhaven.core.corpus import Corpus


def main() -> None:
    engine, corpus_dir, passes = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    started = time.perf_counter()
    with open(corpus_dir / "corpus.jsonl", "rb") as lines:
        corpus = Corpus.from_records({"id": r["_id"], "text": r["text"]}
                                     for r in map(orjson.loads, lines))
    load = time.perf_counter() - started
    started = time.perf_counter()
    retriever = Retriever(corpus, engine)
    build = time.perf_counter() - started
    out: dict[str, object] = {"file": rookhaven.__file__, "engine": engine,
                              "load_s": round(load, 3), "build_s": round(build, 3)}

    def search(query: str, k: int) -> None:
        canonical_bytes(retriever.result_data(RetrievalRequest(query=query, recall_budget=k)))

    for name in ("q3", "q8"):
        queries = [orjson.loads(line)["text"]
                   for line in (corpus_dir / f"{name}.jsonl").read_bytes().splitlines() if line]
        search(queries[0], 10)
        for k in (10, 100):
            best = float("inf")
            for _ in range(passes):
                started = time.perf_counter()
                for query in queries:
                    search(query, k)
                best = min(best, time.perf_counter() - started)
            out[f"{name}@{k}"] = round(len(queries) / best)
    out["peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
