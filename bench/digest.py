#!/usr/bin/env python3
"""One sha256 per engine over the canonical result bytes of every bench query: speed work
must leave it unchanged. Run by hand before and after a change (not a test):

    python bench/digest.py bench/data/syn100k [--engines bm25@2,bm25@3] [--k 1 10 100 1000]
    python bench/digest.py ../shared/datasets/npl --k 10 100 --decompose both

For each engine, each query (the directory's q3.jsonl then q8.jsonl, or a BEIR
collection's queries.jsonl), each ``--decompose`` setting and each ``--k`` (inner loop),
the request's result (``Retriever.result_data``, default seed) is encoded with
``canonical_bytes`` and fed to the hash; the line printed is the engine, the number of
results and the hex digest. Two trees compare by running this script with each tree's
``rookhaven`` (``sys.path`` starts at the script's repository: copy it into the other).
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
    parser.add_argument("--decompose", choices=("yes", "no", "both"), default="yes")
    parser.add_argument("--path", choices=("data", "bytes"), default="data",
                        help="hash result_data encoded (the reference) or result_bytes "
                             "(what a worker stores, compiled hit lists included)")
    args = parser.parse_args()
    docs = load_corpus(args.corpus / "corpus.jsonl", max_docs=10**8)
    names = ["queries.jsonl"] if (args.corpus / "queries.jsonl").exists() else [
        "q3.jsonl", "q8.jsonl"]
    queries = [orjson.loads(line)["text"] for name in names
               for line in (args.corpus / name).read_bytes().splitlines() if line.strip()]
    settings = {"yes": [True], "no": [False], "both": [True, False]}[args.decompose]
    for engine in args.engines.split(","):
        retriever = Retriever(docs, engine)
        digest = hashlib.sha256()
        for query in queries:
            for decompose in settings:
                for k in args.k:
                    request = RetrievalRequest(query=query, recall_budget=k,
                                               decompose=decompose)
                    digest.update(canonical_bytes(retriever.result_data(request))
                                  if args.path == "data" else retriever.result_bytes(request)[0])
        print(engine, len(queries) * len(settings) * len(args.k), digest.hexdigest(),
              flush=True)


if __name__ == "__main__":
    main()
