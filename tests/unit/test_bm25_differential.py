"""The index-based bm25 scorer against the brute-force reference in tests/reference_bm25.py."""

from __future__ import annotations

import random

import pytest

from rookhaven.core.analyzer import Analyzer
from rookhaven.core.corpus import Corpus
from rookhaven.core.providers.bm25 import Bm25Provider
from rookhaven.models import Document
from tests.reference_bm25 import ReferenceBm25

_VOCAB = ("harbor crane cranes container containers berth berthing tide tides pilot pilots "
           "vessel vessels draft drafting syntax syntaxerrors quay quays ship shipping the "
           "of and lock locks")
WORDS = _VOCAB.split()


def _corpus(rng: random.Random, n: int) -> list[Document]:
    docs = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 25)))
        fields = {"title": " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 4)))}
        if rng.random() < 0.3:
            fields["keywords"] = rng.choice(WORDS)
        docs.append(Document(id=f"d{i:03d}", text=text, fields=fields))
    return docs


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("stemmer", ["none", "english"])
def test_index_scores_equal_the_brute_force_reference_to_the_unit(seed: int, stemmer: str) -> None:
    rng = random.Random(seed)
    docs = _corpus(rng, rng.randint(1, 40))
    analyzer = Analyzer(stemmer=stemmer)
    synonyms = {"ship": ["vessel"], "quay": ["berth"]}
    params = {"k1": rng.choice([0.9, 1.2, 2.0]), "b": rng.choice([0.0, 0.4, 0.75, 1.0]),
              "coverage": rng.choice([0.0, 0.25, 1.0]), "prefix_weight": 0.4,
              "synonym_weight": 0.5}
    index = Bm25Provider(analyzer=analyzer, synonyms=synonyms, **params).build(Corpus(docs))
    reference = ReferenceBm25(docs, analyzer, synonyms=synonyms, **params)
    ids = Corpus(docs).ids
    for _ in range(8):
        terms = analyzer.terms(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))))
        ords, units = index.score(terms)
        got = {ids[o]: u for o, u in zip(ords.tolist(), units.tolist(), strict=True)}
        assert got == reference.score(terms), terms
