"""``rookhaven demo``: run the shipped auditor queries over the sample corpus and show the audit.

Needs no services. Each query is answered twice to show the bytes replay exactly.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..config import Settings
from ..core.canonical import canonical_bytes, sha256_digest
from ..core.engine import Retriever
from ..sample import sample_corpus, sample_requests
from .tables import audit_summary, hits_table


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("demo", help="run sample queries on the shipped corpus",
                                   description=__doc__)
    parser.add_argument("--provider", help="scoring provider (default: ROOKHAVEN_PROVIDER)")
    parser.add_argument("--queries", type=int, default=4, help="how many sample queries to run")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    out = sys.stdout
    documents = sample_corpus()
    retriever = Retriever(documents, args.provider or settings.provider)
    by_id = {doc.id: doc for doc in documents}
    print(f"Rookhaven demo: {len(documents)} port-operations documents, provider "
          f"{retriever.engine.name}, corpus {retriever.corpus.digest[:19]}…\n", file=out)
    replayed = 0
    requests = sample_requests()[: args.queries]
    for request in requests:
        result = retriever.retrieve(request)
        data = canonical_bytes(result)
        replayed += data == canonical_bytes(retriever.retrieve(request))
        print(f"query {request.query!r}", file=out)
        print(hits_table(result, by_id), file=out)
        print(audit_summary(result), file=out)
        print(f"  result bytes {sha256_digest(data)[:23]}… ({len(data)} bytes)\n", file=out)
    print(f"replayed {replayed}/{len(requests)} results byte for byte", file=out)
    return 0 if replayed == len(requests) else 1
