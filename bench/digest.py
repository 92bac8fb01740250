#!/usr/bin/env python3
"""One sha256 per engine over the canonical result bytes of every bench query: speed work
must leave it unchanged. Run by hand before and after a change (not a test):

    python bench/digest.py bench/data/syn100k [--engines bm25@2,bm25@3] [--k 1 10 100 1000]

For each engine, each query of the directory's q3.jsonl then q8.jsonl, and each ``--k``
(inner loop), the request's result (``Retriever.result_data``, default seed) is encoded
with ``canonical_bytes`` and fed to the hash; the line printed is the engine, the number
of results and the hex digest. Two trees compare by running each one's copy of this script
with that tree's ``rookhaven`` (``sys.path`` starts at the script's repository).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from rookhaven import RetrievalRequest, Retriever, canonical_bytes  # noqa: E402
from rookhaven.corpusfile import load_corpus  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path, help="a directory from make_synthetic.py")
    parser.add_argument("--engines", default="bm25@2,bm25@3")
    parser.add_argument("--k", type=int, nargs="+", default=[1, 10, 100, 1000])
    args = parser.parse_args()
    docs = load_corpus(args.corpus / "corpus.jsonl", max_docs=10**8)
    queries = [orjson.loads(line)["text"] for name in ("q3.jsonl", "q8.jsonl")
               for line in (args.corpus / name).read_bytes().splitlines() if line.strip()]
    for engine in args.engines.split(","):
        retriever = Retriever(docs, engine)
        digest = hashlib.sha256()
        for query in queries:
            for k in args.k:
                request = RetrievalRequest(query=query, recall_budget=k)
                digest.update(canonical_bytes(retriever.result_data(request)))
        print(engine, len(queries) * len(args.k), digest.hexdigest(), flush=True)


if __name__ == "__main__":
    main()
