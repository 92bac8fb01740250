"""Print a digest of bm25 integer scores for a fixed corpus and queries (run by other Pythons).

Used by tests/crosspython/test_bm25_across_pythons.py: every interpreter must print the same
line.
"""

from __future__ import annotations

import hashlib
import random

from rookhaven.core.corpus import Corpus
from rookhaven.core.providers.bm25 import Bm25Provider
from rookhaven.models import Document

_VOCAB = ("tide pilot berth crane quay vessel cargo lock draft harbour harbours pilotage "
           "containerisation container syntax syntaxerrors")
WORDS = _VOCAB.split()


def fingerprint() -> str:
    rng = random.Random(20260101)
    docs = [Document(id=f"d{i:04d}", text=" ".join(rng.choice(WORDS)
                                                   for _ in range(rng.randint(1, 60))),
                     fields={"title": rng.choice(WORDS)}) for i in range(600)]
    h = hashlib.sha256()
    for k1, b in ((1.2, 0.75), (0.9, 0.4), (2.0, 1.0)):
        index = Bm25Provider(k1=k1, b=b).build(Corpus(docs))
        h.update(index.impacts.tobytes())
        for _ in range(30):
            ords, units = index.score([rng.choice(WORDS) for _ in range(rng.randint(1, 8))])
            h.update(ords.astype("<i8").tobytes() + units.astype("<i8").tobytes())
    return h.hexdigest()


if __name__ == "__main__":
    print(fingerprint())
