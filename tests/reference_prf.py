"""A brute-force reference of bm25@3: lower-bounded tf and RM3/Bo1 feedback, written out.

Built on ``ReferenceBm25`` (every document re-analysed, no index); the feedback weights use
``fractions.Fraction`` where the engine uses integer floors, so each floor is stated once.
"""

from __future__ import annotations

import math
from collections import Counter
from decimal import Context, Decimal
from fractions import Fraction

from rookhaven.core.analyzer import Analyzer
from rookhaven.models import Document
from tests.reference_bm25 import SCALE, ReferenceBm25, _idf


def _log2(x: Decimal) -> float:
    ctx = Context(prec=40)
    return float(ctx.divide(ctx.ln(x), ctx.ln(Decimal(2))))


class ReferencePrf(ReferenceBm25):
    """bm25@3 the slow way: ``score`` is the final (expanded) score of every document."""

    def __init__(self, docs: list[Document], analyzer: Analyzer, *, tf_bound: str = "bm25+",
                 delta: float = 1.0, feedback: str = "rm3", fb_docs: int = 10,
                 fb_terms: int = 10, original_weight: float = 0.5, fb_max_df: float = 0.1,
                 **params: object) -> None:
        super().__init__(docs, analyzer, **params)  # type: ignore[arg-type]
        self.bound, self.delta = tf_bound, (delta if tf_bound != "none" else 0.0)
        self.method, self.fb_docs, self.fb_terms = feedback, fb_docs, fb_terms
        self.original = round(original_weight * 4096)
        self.max_df = round(fb_max_df * 65536)

    def impact(self, term: str, d: int) -> int:
        n = len(self.docs)
        lengths = (1.0 - self.b) + self.b * (self.length[d] * float(n) / float(sum(self.length)))
        tf = self.tf[d][term]
        if self.bound == "bm25l":
            c = tf / lengths
            part = (self.k1 + 1.0) * (c + self.delta) / ((self.k1 + c) + self.delta)
        else:
            part = tf * (self.k1 + 1.0) / (tf + self.k1 * lengths)
            if self.bound == "bm25+":
                part = part + self.delta
        return max(1, math.floor(_idf(self.df(term), n) * part * SCALE))

    def _units(self, d: int, term: str) -> int:
        return round(self.tf[d][term] * 16)

    def _eligible(self, term: str) -> bool:
        return 2 <= len(term) <= 20 and self.df(term) * 65536 <= len(self.docs) * self.max_df

    def feedback_terms(self, terms: list[str]) -> tuple[list[int], dict[str, int]]:
        """The feedback documents (positions) and the chosen terms' raw weights."""
        first = super().score(terms)
        order = sorted((i for i, d in enumerate(self.docs) if d.id in first),
                       key=lambda i: (-first[self.docs[i].id], i))[: self.fb_docs]
        raw: dict[str, int] = {}
        if self.method == "rm3":
            for i in order:
                vector = sorted(((t, self._units(i, t)) for t in self.tf[i] if self._eligible(t)),
                                key=lambda p: (-p[1], p[0]))[: self.fb_terms]
                norm = sum(u for _, u in vector)
                for t, u in vector:
                    raw[t] = raw.get(t, 0) + math.floor(
                        Fraction(first[self.docs[i].id] * u * 2**32, norm))
        else:
            n = len(self.docs)
            ctx = Context(prec=40)
            for t in sorted({t for i in order for t in self.tf[i] if self._eligible(t)}):
                tfx = sum(self._units(i, t) for i in order if t in self.tf[i]) / 16
                cf = sum(self._units(i, t) for i in range(n) if t in self.tf[i])
                pn = ctx.divide(Decimal(cf), Decimal(16 * n))
                w = tfx * _log2(ctx.divide(ctx.add(Decimal(1), pn), pn)) + _log2(
                    ctx.add(Decimal(1), pn))
                raw[t] = math.floor(w * 2**20)
        ranked = sorted((t for t in raw if raw[t] > 0), key=lambda t: (-raw[t], t))
        return order, {t: raw[t] for t in ranked[: self.fb_terms]}

    def weights(self, terms: list[str]) -> dict[str, int]:
        """Every query and feedback term's weight in 1/4096."""
        _, chosen = self.feedback_terms(terms)
        qtf = Counter(terms)
        q, total = sum(qtf.values()), sum(chosen.values())
        if total == 0:
            return {t: math.floor(Fraction(4096 * c, q)) for t, c in qtf.items()}
        a = Fraction(self.original, 4096)
        out = {t: math.floor(4096 * (a * Fraction(qtf.get(t, 0), q)
                                     + (1 - a) * Fraction(chosen.get(t, 0), total)))
               for t in {*qtf, *chosen}}
        return {t: w for t, w in out.items() if w}

    def score(self, terms: list[str]) -> dict[str, int]:
        if not terms:
            return {}
        weights = self.weights(terms)
        qtf = Counter(terms)
        c = round(self.coverage * 256)
        scores: dict[str, int] = {}
        for d, doc in enumerate(self.docs):
            total, matched = 0, 0
            for t, w in weights.items():
                if t in qtf:
                    best = max((self.weighted(v, d, vw) for v, vw in self.matches(t).items()
                                if v in self.tf[d]), default=0)
                else:
                    best = self.impact(t, d) if t in self.tf[d] else 0
                if best:
                    total += w * best
                    matched += 1
            if matched:
                n = len(weights)
                scores[doc.id] = total * ((256 - c) * n + c * matched) // (256 * n) if c else total
        return scores
