"""A brute-force BM25F reference: the formula of docs/ranking.md written out per document.

No inverted index, no numpy: every document is re-analysed field by field for every query.
It uses the same exact-arithmetic recipe (decimal IDF, IEEE basic operations, one floor),
so the index-based scorer must agree with it to the last integer unit.
"""

from __future__ import annotations

import math
from collections import Counter
from decimal import Context, Decimal

from rookhaven.core.analyzer import Analyzer
from rookhaven.models import Document

SCALE = 1 << 24


def _idf(df: int, n: int) -> float:
    ctx = Context(prec=40)
    return float(ctx.ln(ctx.add(Decimal(1), ctx.divide(Decimal(2 * (n - df) + 1),
                                                       Decimal(2 * df + 1)))))


class ReferenceBm25:
    """Scores one query against every document the slow, obvious way."""

    def __init__(self, docs: list[Document], analyzer: Analyzer, *, k1: float = 1.2,
                 b: float = 0.75, field_weights: dict[str, float] | None = None,
                 prefix_weight: float = 0.4, prefix_min_len: int = 4,
                 synonyms: dict[str, list[str]] | None = None, synonym_weight: float = 0.5,
                 coverage: float = 0.25) -> None:
        self.docs = sorted(docs, key=lambda d: d.id)
        self.k1, self.b = k1, b
        self.analyzer = analyzer
        weights = field_weights if field_weights is not None else {"title": 2.0,
                                                                   "keywords": 1.5, "text": 1.0}
        self.tf: list[Counter[str]] = []
        self.length: list[float] = []
        for doc in self.docs:
            counts: Counter[str] = Counter()
            total = 0.0
            for name, text in [*sorted(doc.fields.items()), ("text", doc.text)]:
                w = weights.get(name, 1.0)
                terms = analyzer.terms(text)
                for t in terms:
                    counts[t] += w
                total += w * len(terms)
            self.tf.append(counts)
            self.length.append(total)
        self.vocab = sorted({t for c in self.tf for t in c})
        self.prefix_weight, self.prefix_min_len = prefix_weight, prefix_min_len
        self.synonym_weight, self.coverage = synonym_weight, coverage
        self.synonyms: dict[str, set[str]] = {}
        for head, others in (synonyms or {}).items():
            for h in analyzer.terms(head):
                for o in others:
                    self.synonyms.setdefault(h, set()).update(
                        t for t in analyzer.terms(o) if t != h)

    def impact(self, term: str, d: int) -> int:
        n = len(self.docs)
        df = sum(1 for c in self.tf if term in c)
        avg_ratio = self.length[d] * float(n) / float(sum(self.length))
        norm = self.k1 * ((1.0 - self.b) + self.b * avg_ratio)
        tf = self.tf[d][term]
        return max(1, math.floor(_idf(df, n) * (tf * (self.k1 + 1.0) / (tf + norm)) * SCALE))

    def df(self, term: str) -> int:
        return sum(1 for c in self.tf if term in c)

    def weighted(self, term: str, d: int, w16: int) -> int:
        if w16 == 65536:
            return self.impact(term, d)
        return max(1, (self.impact(term, d) * w16) >> 16)

    def matches(self, q: str) -> dict[str, int]:
        """Vocabulary term -> weight in 1/65536 for query term ``q``."""
        n = len(self.docs)
        longer = []
        if self.prefix_weight and len(q) >= self.prefix_min_len:
            longer = [t for t in self.vocab if t.startswith(q) and t != q]
        if q in self.vocab:
            reference: float | None = _idf(self.df(q), n)
        elif longer:
            reference = _idf(max(self.df(t) for t in longer), n)
        else:
            reference = None
        out = {q: 65536} if q in self.vocab else {}
        variants = [(t, self.prefix_weight) for t in longer]
        variants += [(s, self.synonym_weight) for s in sorted(self.synonyms.get(q, ()))
                     if s in self.vocab and self.synonym_weight]
        for t, weight in variants:
            w16 = round(weight * 65536)
            own = _idf(self.df(t), n)
            if reference is not None and reference < own:
                w16 = max(1, (w16 * math.floor(reference / own * 65536)) >> 16)
            out[t] = max(out.get(t, 0), w16)
        return out

    def score(self, terms: list[str]) -> dict[str, int]:
        """Document id -> integer score, for the documents matching any term."""
        qtf = Counter(terms)
        scores: dict[str, int] = {}
        c = round(self.coverage * 256)
        for d, doc in enumerate(self.docs):
            total, matched = 0, 0
            for q, count in qtf.items():
                best = max((self.weighted(t, d, w) for t, w in self.matches(q).items()
                            if t in self.tf[d]), default=0)
                if best:
                    total += count * best
                    matched += 1
            if matched:
                n = len(qtf)
                scores[doc.id] = total * ((256 - c) * n + c * matched) // (256 * n) if c else total
        return scores
