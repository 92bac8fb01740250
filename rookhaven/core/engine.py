"""The retrieval engine: decompose, allocate, rank each subquery, merge, backfill, audit.

``Retriever`` indexes a corpus once and answers many requests; ``retrieve`` is the one-shot
form. Both give the same bytes for the same (request, corpus, provider configuration).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from typing import Any, NamedTuple

import numpy as np
import orjson

from ..errors import ConfigError
from ..models import RetrievalRequest, RetrievalResult
from .allocate import largest_remainder
from .canonical import canonical_bytes, result_bytes
from .compiled import live
from .corpus import Corpus, as_corpus
from .corpusstream import CorpusStream, CorpusSummary
from .decompose import Decomposition, Part, decompose
from .engines import make_provider
from .hitlists import IdStrings, contributions, one_part, picked, ranked_picked
from .hitlists import hits as encoded_hits
from .identity import CORE_VERSION, engine_identity
from .providers import ScoringIndex, ScoringProvider, TopKIndex
from .rng import CodeUnits, mulberry32
from .select import IntArray, Picks, TieKeys, ranked, top_k
from .streams import Streams, derive_streams

__all__ = ["CORE_VERSION", "Retriever", "retrieve"]

MERGE_ORDERS = ("max-subquery", "whole-query")
# A one-part query's candidates are ranked and written in one call up to this many times its
# budget (and 64 more): each candidate's score is written, so many of them are cut first.
RANKED_WITH_LISTS = 2


def _in_one_call(candidates: int, budget: int) -> bool:
    """Whether a one-part query's cut is ranked and written in one call (RANKED_WITH_LISTS)."""
    return candidates <= RANKED_WITH_LISTS * budget + 64


def resolve_provider(provider: str | ScoringProvider, params: dict[str, Any]) -> ScoringProvider:
    """A provider object from a name and parameters, or the object itself (then no params)."""
    if isinstance(provider, str):
        return make_provider(provider, **params)
    if params:
        raise ConfigError("pass parameters either to the provider object or by name, not both")
    return provider


class Retriever:
    """A corpus indexed for one provider configuration, ready to answer requests."""

    corpus: Corpus | CorpusSummary

    def __init__(self, corpus: Corpus | CorpusStream | Iterable[Any],
                 provider: str | ScoringProvider = "bm25", **params: Any) -> None:
        whole = None if isinstance(corpus, CorpusStream) else as_corpus(corpus)
        self.provider = resolve_provider(provider, params)
        if self.provider.merge not in MERGE_ORDERS:
            raise ConfigError(f"unknown merge order {self.provider.merge!r}; "
                              f"choose one of: {', '.join(MERGE_ORDERS)}")
        if whole is not None:
            self.index = self.provider.build(whole)
            self.corpus = whole
        else:  # the lines pass through the build; only the ids and the digest stay
            assert isinstance(corpus, CorpusStream)
            self.index = self.provider.build(corpus)
            self.corpus = corpus.summary()
            if not self.corpus.ids:
                as_corpus(())  # the one message for an empty corpus
        self.identity = engine_identity(self.provider)
        self.engine = self.identity.engine
        self.config = self.identity.config
        self.config_digest = self.identity.config_digest
        self._engine_data = self.engine.model_dump()
        # The same for every request: encoded once, for ``result_bytes``.
        self._engine_bytes = orjson.Fragment(canonical_bytes(self._engine_data))
        self._config_bytes = orjson.Fragment(canonical_bytes(self.config))
        self._top = self.index if isinstance(self.index, TopKIndex) else None
        # Engines with query expansion (bm25@3) may rank subqueries unexpanded and explain
        # each expansion in the audit; for the others both stay as they were.
        sub = getattr(self.index, "subquery_index", None)
        self._parts: ScoringIndex = sub() if sub is not None else self.index
        self._explain = getattr(self.index, "explain", None)
        # Hybrid engines rank the text behind each term tuple, bound once per request.
        self._for_texts = getattr(self.index, "for_texts", None)
        # A one-part query ranked by a top-k index, merged whole-query, with nothing to
        # explain or fuse: where the kernels are live its result is written directly
        # (``_direct_bytes``) from this index's cut; None where the retriever has no such path.
        self._direct: TopKIndex | None = (
            self._top if self._top is not None and self._parts is self.index
            and self._explain is None and self._for_texts is None
            and self.provider.merge == "whole-query" else None)

    @cached_property
    def _id_units(self) -> CodeUnits:
        """The ids' code units, from which the compiled ranking hashes tie keys."""
        return CodeUnits(self.corpus.ids)

    @staticmethod
    def _order(units_by_ord: dict[int, int], keys: TieKeys, known: Picks | None) -> list[int]:
        """The ordinals of ``units_by_ord`` in the total order. ``known`` may hold the same
        documents and scores already ranked (a one-part query's picks): then no sort."""
        if known is not None and len(known[0]) == len(units_by_ord) and all(
                units_by_ord.get(o) == u for o, u in zip(*known, strict=True)):
            return known[0]
        return ranked(list(units_by_ord), list(units_by_ord.values()), keys)[0]

    def retrieve(self, request: RetrievalRequest) -> RetrievalResult:
        """Rank the corpus for ``request`` and explain how, deterministically.

        The result is assembled as plain data and validated once at the end: one pass in
        pydantic-core costs a third of building some thirty small models one by one.
        """
        return RetrievalResult.model_validate(self.result_data(request))

    def result_data(self, request: RetrievalRequest) -> dict[str, Any]:
        """What ``retrieve`` validates: the result as plain data, with the same canonical bytes.

        Read-only: it shares the retriever's config mapping, and sequences may be tuples
        where the model has lists.
        """
        return self._assemble(request, encoded=False)

    def result_bytes(self, request: RetrievalRequest) -> tuple[bytes, bytes]:
        """The canonical bytes of the result and of its audit: what a worker stores and a
        replay compares. The same bytes as ``result_data`` encoded; where the compiled code
        is live, the hit and contribution lists are written as bytes without a dict each."""
        if not live():
            return result_bytes(self._assemble(request, encoded=False))
        query = request.query
        parts = decompose(query, self.provider.analyzer, split=request.decompose)
        cut = None
        if self._direct is not None and len(parts.parts) == 1 and parts.parts[0].text == query:
            found = self._direct_bytes(self._direct, request, parts.parts[0])
            if not isinstance(found, _Cut):
                return found
            cut = found
        streams = derive_streams(request.seed, query)
        return result_bytes(self._assemble(request, True, (streams, parts), cut))

    @cached_property
    def _audit_frame(self) -> tuple[bytes, bytes]:
        """The canonical bytes of a one-part audit around the request's own values, keys in
        sorted order: before ``decompose``'s value, and from after it to ``query``'s."""
        head = b"".join((
            b'{"backfill":[],"config":', canonical_bytes(self.config), b',"config_digest":',
            orjson.dumps(self.config_digest), b',"corpus_digest":',
            orjson.dumps(self.corpus.digest), b',"corpus_size":',
            str(len(self.corpus)).encode(), b',"decompose":'))
        middle = b',"dropped":[],"engine":' + canonical_bytes(self._engine_data) + b',"query":'
        return head, middle

    def _direct_bytes(self, top: TopKIndex, request: RetrievalRequest, part: Part,
                      ) -> tuple[bytes, bytes] | _Cut:
        """``result_bytes`` of a query that is its own one part, for a retriever with a
        direct path (``top``, its index): the cut ranked and every byte of the result
        written in one compiled call (``hitlists.one_part``: the bytes ``_assemble`` gives,
        as the tests hold). Where the picks fall short of the budget or the cut is wide, the
        cut for ``_assemble``.

        After the kernel every call and object costs about twice its cached time (ADR 0048):
        this path makes one Python call, not a helper per value."""
        budget = request.recall_budget
        ords, units = top.top(part.terms, budget)
        if len(ords) > 0 and _in_one_call(len(ords), budget):
            written = one_part(self._id_strings, self._id_units, self._audit_frame,
                               request.seed, request.query, request.decompose, part.distinct,
                               ords, units, budget, self.provider.scale)
            if written is not None:
                return written
        return _Cut(part.terms, budget, ords, units)

    @cached_property
    def _id_strings(self) -> IdStrings:
        """The ids as JSON strings, from which compiled code writes the hit lists."""
        return IdStrings(self.corpus.ids)

    def _assemble(self, request: RetrievalRequest, encoded: bool,
                  made: tuple[Streams, Decomposition] | None = None,
                  cut: _Cut | None = None) -> dict[str, Any]:
        """The result as plain data; with ``encoded``, its hit and contribution lists are
        ``orjson.Fragment``s of their canonical bytes (for encoding only). ``made``: the
        request's streams and decomposition, if made already; ``cut``: an index answer
        already had."""
        analyzer, ids, scale = self.provider.analyzer, self.corpus.ids, self.provider.scale
        listed = self._encoded if encoded else self._contributions
        streams, parts = made or (derive_streams(request.seed, request.query),
                                  decompose(request.query, analyzer, split=request.decompose))
        keys = TieKeys(streams.ranking, ids, self._id_units)  # each hashed once per request
        # One part takes the whole budget and draws nothing from the stream (the method's
        # own one-part case, without making the stream).
        budgets = [request.recall_budget] if len(parts.parts) == 1 else largest_remainder(
            request.recall_budget, [p.weight for p in parts.parts],
            mulberry32(streams.allocation))

        # A query that is its own only piece was tokenized by the decomposition already.
        whole_terms = next((p.terms for p in parts.parts if p.text == request.query),
                           None) or tuple(analyzer.terms(request.query))
        ranking, fused = self.index, None
        if self._for_texts is not None:  # a hybrid index ranks the text behind the terms
            texts = {tuple(whole_terms): request.query}
            for part in parts.parts:
                texts.setdefault(tuple(part.terms), part.text)
            ranking = fused = self._for_texts(texts, request.recall_budget)
        scores = _ScoreCache(ranking, self._top)
        if cut is not None:
            scores.know(cut)
        unexpanded = scores if self._parts is self.index else _ScoreCache(
            self._parts, self._parts if isinstance(self._parts, TopKIndex) else None)
        best: dict[int, int] = {}
        # Each document's subqueries, ascending (parts are taken in order); tuples, which
        # pydantic reads into the hit's list like any sequence.
        sources: dict[int, tuple[int, ...]] = {}
        subqueries: list[dict[str, Any]] = []
        explained: dict[tuple[str, ...], dict[str, Any]] = {}
        alone = len(parts.parts) == 1
        picked_hits: Any = None
        for index, (part, budget) in enumerate(zip(parts.parts, budgets, strict=True)):
            # Under whole-query scope a subquery is expanded only if it is the whole query.
            expanded = unexpanded is scores or sorted(part.terms) == sorted(whole_terms)
            ords, units = (scores if expanded else unexpanded).top(part.terms, budget)
            contributed: Any
            if encoded and alone and _in_one_call(len(ords), budget):
                # Its hits are likely these picks: cut, ranked and both lists written in one
                # compiled call (a cut's few candidates; for many, the cut comes first).
                picks, contributed, picked_hits = ranked_picked(
                    self._id_strings, keys, np.asarray(ords, dtype=np.int64),
                    np.asarray(units, dtype=np.int64), budget, scale)
            else:
                picks = top_k(ords, units, budget, keys)
                if encoded and alone:
                    contributed, picked_hits = picked(self._id_strings, *picks, scale)
                else:
                    contributed = listed(picks)
            for ordinal, score in zip(*picks, strict=True) if not alone else ():
                if score > best.get(ordinal, 0):  # scores are positive
                    best[ordinal] = score
                sources[ordinal] = (*sources.get(ordinal, ()), index)
            subquery = {
                "text": part.text, "terms": list(part.distinct), "weight": part.weight,
                "budget": budget, "contributed": contributed,
            }
            if self._explain is not None and expanded:
                self._explained(subquery, part.terms, explained)
            if fused is not None:
                subquery["fusion"] = fused.account(part.terms, picks[0])
            subqueries.append(subquery)

        order: list[int] = []
        shown: dict[int, int] = {}
        backfill: Picks = ([], [])
        if parts.parts:
            # A one-part query's picks are already ranked, and the merge reuses their order
            # instead of sorting again: without it syn100k q3@100 answered 16% and q8 10%
            # fewer requests/s (Retriever.result_data, old and new in one run).
            # A one-part query ranked by its whole terms with the whole query's index
            # already holds the whole-query scores of its picks.
            whole = alone and expanded and tuple(part.terms) == whole_terms
            if (whole and self.provider.merge == "whole-query"
                    and len(picks[0]) == request.recall_budget):
                # The whole query's own ranking, full: ``_merge`` would return the picks'
                # order unchanged with no backfill, and nothing below reads the maps.
                order = picks[0]
            else:
                if alone:  # the picks are distinct documents: no maximum, one source each
                    best = dict(zip(*picks, strict=True))
                    sources = dict.fromkeys(picks[0], (0,))
                order, shown, backfill = self._merge(request, whole_terms, best, keys, scores,
                                                     picks if alone else None, whole)
        hits: Any
        ranked_ords = order[: request.recall_budget]
        if alone and order is picks[0]:
            # The picks in their own order (the merge returns that list itself only when
            # their scores are the ones shown): each hit is its contribution, ranked.
            hits = picked_hits if encoded else [
                {"id": c["id"], "rank": r, "score": c["score"], "subqueries": (0,)}
                for r, c in enumerate(subqueries[0]["contributed"][: request.recall_budget],
                                      start=1)]
        else:
            if encoded:
                hits = encoded_hits(self._id_strings, ranked_ords,
                                    [shown[o] for o in ranked_ords], scale,
                                    [sources.get(o, ()) for o in ranked_ords])
            else:
                hits = [{"id": ids[o], "rank": r, "score": shown[o] / scale,
                         "subqueries": sources.get(o, ())}
                        for r, o in enumerate(ranked_ords, start=1)]
        audit = {
            "seed": request.seed, "query": request.query,
            "recall_budget": request.recall_budget, "decompose": request.decompose,
            "subqueries": subqueries,
            "dropped": [{"text": t, "reason": r} for t, r in parts.dropped],
            "backfill": listed(backfill) if backfill[0] else [], "streams": streams.as_dict(),
            "corpus_digest": self.corpus.digest, "corpus_size": len(self.corpus),
            "engine": self._engine_bytes if encoded else self._engine_data,
            "config": self._config_bytes if encoded else self.config,
            "config_digest": self.config_digest,
        }
        if self._explain is not None and parts.parts:
            self._explained(audit, whole_terms, explained)
        if fused is not None:
            audit["fusion"] = fused.account(whole_terms, ranked_ords)
        return {"hits": hits, "audit": audit}

    def _explained(self, record: dict[str, Any], terms: tuple[str, ...],
                   explained: dict[tuple[str, ...], dict[str, Any]]) -> None:
        """Put into ``record`` the index's account of how ``terms`` were expanded (documents
        named by id), if it expanded them; ``explained`` holds the request's accounts by
        term multiset (a one-part query's subquery and whole query share one)."""
        assert self._explain is not None
        key = tuple(sorted(terms))
        if key not in explained:
            found: dict[str, Any] | None = self._explain(terms)
            if found is None:
                return
            ids = self.corpus.ids
            explained[key] = {**found,
                              "feedback_docs": [ids[o] for o in found["feedback_docs"]]}
        record["expansion"] = explained[key]

    def _contributions(self, picks: Picks) -> list[dict[str, Any]]:
        ids, scale = self.corpus.ids, self.provider.scale
        return [{"id": ids[o], "score": s / scale} for o, s in zip(*picks, strict=True)]

    def _encoded(self, picks: Picks) -> Any:
        """``_contributions``'s canonical bytes, as a fragment."""
        return contributions(self._id_strings, *picks, self.provider.scale)

    def _merge(self, request: RetrievalRequest, whole_terms: tuple[str, ...],
               best: dict[int, int], keys: TieKeys, scores: _ScoreCache,
               alone: Picks | None, whole: bool) -> tuple[list[int], dict[int, int], Picks]:
        """The final order, the score shown for each document, and the backfill picks.

        Duplicates picked by several subqueries leave the list short of the budget; the gap is
        filled from the whole query's ranking, so the caller gets what they asked for.
        ``whole``: the scores in ``best`` are the whole query's (``alone`` ranked them).
        """
        missing = request.recall_budget - len(best)
        backfill: Picks = ([], [])
        if missing > 0:
            # Candidates scoring at least the (missing + |best|)-th best score hold every
            # document top_k could pick once ``best`` is excluded.
            whole_ords, whole_units = scores.top(whole_terms, missing + len(best))
            backfill = top_k(whole_ords, whole_units, missing, keys, exclude=frozenset(best))
        if self.provider.merge == "whole-query":
            shown = dict(best) if whole else scores.of(whole_terms, best)
            if backfill[0]:
                shown.update(zip(*backfill, strict=True))
            elif whole and alone is not None:
                return alone[0], shown, backfill  # the picks' own order
            return self._order(shown, keys, alone), shown, backfill
        # max-subquery: the strongest subquery score ranks the picks; backfill follows in its
        # own (whole-query) order, since the two kinds of score are not comparable.
        shown = dict(best)
        shown.update(zip(*backfill, strict=True))
        # One part: ``best`` is its picks, in their order.
        order = alone[0] if alone is not None else self._order(best, keys, None)
        return order + backfill[0], shown, backfill


class _Cut(NamedTuple):
    """An index's top-k answer for ``terms``: the candidates' ordinals and scores."""

    terms: tuple[str, ...]
    k: int
    ords: IntArray
    units: IntArray


class _ScoreCache:
    """Scores per term tuple for one request: a one-part query is scored once, not twice.

    With a ``TopKIndex`` only the candidates of each cut are scored, and the merge asks for
    the few documents it lacks; without one every match is scored once per term tuple.
    """

    def __init__(self, index: ScoringIndex, top: TopKIndex | None) -> None:
        self._index = index
        self._top = top
        self._seen: dict[tuple[str, ...], tuple[IntArray, IntArray]] = {}
        self._known: dict[tuple[str, ...], dict[int, int]] = {}
        # Cuts not yet read into ``_known``: most requests never ask ``of`` for them.
        self._cuts: dict[tuple[str, ...], list[tuple[IntArray, IntArray]]] = {}
        self._given: _Cut | None = None

    def __call__(self, terms: tuple[str, ...]) -> tuple[IntArray, IntArray]:
        if terms not in self._seen:
            self._seen[terms] = self._index.score(terms)
        return self._seen[terms]

    def know(self, cut: _Cut) -> None:
        """Answer ``top(cut.terms, cut.k)`` with ``cut``, which the index gave already."""
        self._given = cut

    def top(self, terms: tuple[str, ...], k: int) -> tuple[IntArray, IntArray]:
        """Candidates for the best ``k`` under ``terms``: all matches, or the top-k cut."""
        if self._top is None or terms in self._seen:
            return self(terms)
        given = self._given
        if given is not None and given.terms == terms and given.k == k:
            self._given = None
            ords, units = given.ords, given.units
        else:
            ords, units = self._top.top(terms, k)
        self._cuts.setdefault(terms, []).append((ords, units))
        return ords, units

    def of(self, terms: tuple[str, ...], ords: Iterable[int]) -> dict[int, int]:
        """The score of each document of ``ords`` under ``terms`` (0: no match)."""
        if self._top is None or terms in self._seen:
            full = _lookup(*self(terms))
            return {o: full.get(o, 0) for o in ords}
        known = self._known.setdefault(terms, {})
        for cut in self._cuts.pop(terms, ()):
            known.update(_lookup(*cut))
        unknown = sorted(o for o in ords if o not in known)
        if unknown:
            units = self._top.score_of(terms, np.asarray(unknown, dtype=np.int64))
            known.update(zip(unknown, np.asarray(units).tolist(), strict=True))
        return {o: known[o] for o in ords}


def _lookup(ords: IntArray, units: IntArray) -> dict[int, int]:
    return dict(zip(np.asarray(ords).tolist(), np.asarray(units).tolist(), strict=True))


def retrieve(request: RetrievalRequest, corpus: Corpus | Iterable[Any],
             provider: str | ScoringProvider = "bm25", **params: Any) -> RetrievalResult:
    """Index ``corpus`` and answer one request; prefer ``Retriever`` for many requests."""
    return Retriever(corpus, provider, **params).retrieve(request)
