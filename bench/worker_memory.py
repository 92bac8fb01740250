"""A worker's peak memory building one index from a stored corpus: whole load or stream.

Run by hand (not a test), against a Redis you name; it stores the corpus under its own
key prefix, measures each way in a fresh process, and deletes what it stored:

    .venv/bin/python bench/worker_memory.py bench/data/syn1m --redis redis://127.0.0.1:6391/0

``load`` is ``CorpusStore.load`` (every chunk read, joined, parsed into a ``Corpus`` that
the Retriever then keeps); ``stream`` is ``CorpusStore.stream``, what every
``RetrieverCache`` uses since ADR 0028. Peak is the process's maximum resident size.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import orjson  # noqa: E402
from benchstore import bench_settings, delete_prefix  # noqa: E402

from rookhaven.core.corpus import Corpus  # noqa: E402
from rookhaven.pipeline import RetrieverCache  # noqa: E402
from rookhaven.store import Store  # noqa: E402


def _store(redis: str, prefix: str) -> Store:
    return Store.from_settings(bench_settings(redis, prefix))


def measure(redis: str, prefix: str, digest: str, how: str, engine: str) -> None:
    store = _store(redis, prefix)
    load = store.corpora.stream if how == "stream" else store.corpora.load
    began = time.perf_counter()
    retriever = RetrieverCache(load, 1).get(digest, engine, {})
    took = time.perf_counter() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(orjson.dumps({"how": how, "seconds": round(took, 1), "peak_mib": round(peak),
                        "documents": len(retriever.corpus)}).decode(), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus_dir", type=Path)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--engine", default="bm25@2")
    parser.add_argument("--measure", nargs=3, metavar=("PREFIX", "DIGEST", "HOW"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--put", metavar="PREFIX", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        prefix, digest, how = args.measure
        measure(args.redis, prefix, digest, how, args.engine)
        return
    if args.put:
        with open(args.corpus_dir / "corpus.jsonl", "rb") as lines:
            corpus = Corpus.from_records({"id": r["_id"], "text": r["text"]}
                                         for r in map(orjson.loads, lines))
        print(_store(args.redis, args.put).corpora.put(corpus, "bench").digest)
        return
    prefix = f"rh-wmem-{os.getpid()}"
    store = _store(args.redis, prefix)
    # Every step in a process of its own, started by this small one: Linux carries a
    # process's peak resident size across fork and exec, so a child of a process that held
    # the corpus would report that process's peak as its own.
    me = [sys.executable, __file__, str(args.corpus_dir), "--redis", args.redis,
          "--engine", args.engine]
    try:
        digest = subprocess.run([*me, "--put", prefix], check=True, capture_output=True,
                                text=True).stdout.strip()
        for how in ("load", "stream"):
            subprocess.run([*me, "--measure", prefix, digest, how], check=True)
    finally:
        delete_prefix(store, prefix)


if __name__ == "__main__":
    main()
