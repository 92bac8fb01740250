"""The peers Rookhaven is measured against: bm25s, tantivy and rank_bm25, each a search(query, k).

Two ways to feed them:
- their own analysis (``build_bm25s``, ``build_tantivy``): what a user of the library gets;
- the same tokens Rookhaven ranks (``same_tokens``): documents and queries are reduced to
  one engine's analysed terms, joined by spaces, so the gap left is the ranking formula
  alone. The quality table's "best peer" is the best of these.
A peer that is not installed raises ImportError; callers report it, never fake it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from rookhaven import Document

WORD = re.compile(r"\w+")
Search = Callable[[str, int], list[str]]


def document_text(doc: Document) -> str:
    """A document as one text: its fields in name order, then its body."""
    return " ".join([*(doc.fields[f] for f in sorted(doc.fields)), doc.text])


def _stemmer(stem: bool) -> Any:
    import Stemmer
    return Stemmer.Stemmer("english") if stem else None


def bm25s_model(texts: list[str], *, stem: bool = False,
                backend: str = "numpy") -> tuple[Any, Callable[[str], list[str]]]:
    """bm25s indexed with its own tokenizer (English stop words; Snowball stems with
    ``stem``), and that tokenizer for a query."""
    import bm25s
    stemmer = _stemmer(stem)
    tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False)
    model = bm25s.BM25(backend=backend)
    model.index(tokens, show_progress=False)

    def tokenize(query: str) -> list[str]:
        q = bm25s.tokenize([query], stopwords="en", stemmer=stemmer, return_ids=False,
                           show_progress=False)
        return q[0] if q else []  # type: ignore[no-any-return]
    return model, tokenize


def build_bm25s(ids: list[str], texts: list[str], *, stem: bool = False,
                backend: str = "numpy") -> Search:
    """bm25s with its own tokenizer (English stop words; Snowball stems with ``stem``)."""
    model, tokenize = bm25s_model(texts, stem=stem, backend=backend)
    return bm25s_search(ids, model, tokenize, backend)


def bm25s_search(ids: list[str], model: Any, tokenize: Callable[[str], list[str]],
                 backend: str) -> Search:
    """A search over a ``bm25s_model``, as the peer benches time it."""
    selection = "numba" if backend == "numba" else "numpy"

    def search(query: str, k: int) -> list[str]:
        q = [tokenize(query)]
        if not q[0]:
            return []
        docs, scores = model.retrieve(q, k=min(k, len(ids)), show_progress=False, n_threads=1,
                                      backend_selection=selection)
        return [ids[d] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]
    return search


def build_tantivy(ids: list[str], texts: list[str], tokenizer: str = "en_stem") -> Search:
    """tantivy (BM25, k1 1.2, b 0.75) with ``tokenizer`` on one text field."""
    import tantivy
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field("text", stored=False, tokenizer_name=tokenizer)
    index = tantivy.Index(builder.build())
    writer = index.writer()
    for doc_id, text in zip(ids, texts, strict=True):
        writer.add_document(tantivy.Document(id=doc_id, text=text))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()

    def search(query: str, k: int) -> list[str]:
        words = " ".join(WORD.findall(query.lower()))
        if not words:
            return []
        try:
            parsed = index.parse_query(words, ["text"])
        except ValueError:  # every word dropped by the tokenizer (e.g. over 40 bytes of CJK)
            return []
        hits = searcher.search(parsed, k).hits
        return [searcher.doc(address)["id"][0] for _, address in hits]
    return search


def build_rank_bm25(ids: list[str], tokens: Sequence[list[str]],
                    analyze: Callable[[str], list[str]]) -> Search:
    """rank_bm25's Okapi BM25 over pre-analysed ``tokens``; queries go through ``analyze``."""
    from rank_bm25 import BM25Okapi
    model = BM25Okapi([t or [""] for t in tokens])

    def search(query: str, k: int) -> list[str]:
        scores = model.get_scores(analyze(query))
        order = sorted(range(len(ids)), key=lambda i: (-scores[i], i))[:k]
        return [ids[i] for i in order if scores[i] > 0]
    return search


def _bm25s_tokens(ids: list[str], tokens: list[list[str]],
                  analyze: Callable[[str], list[str]]) -> Search:
    import bm25s
    model = bm25s.BM25()
    model.index([t or [""] for t in tokens], show_progress=False)

    def search(query: str, k: int) -> list[str]:
        q = [t for t in analyze(query) if t in model.vocab_dict]
        if not q:
            return []
        docs, scores = model.retrieve([q], k=min(k, len(ids)), show_progress=False,
                                      n_threads=1)
        # bm25s leaves ties in an unspecified order; id order makes the run repeatable.
        ranked = sorted(zip(scores[0].tolist(), docs[0].tolist(), strict=True),
                        key=lambda p: (-p[0], p[1]))
        return [ids[d] for s, d in ranked if s > 0]
    return search


def _tantivy_tokens(ids: list[str], tokens: list[list[str]],
                    analyze: Callable[[str], list[str]]) -> Search:
    inner = build_tantivy(ids, [" ".join(t) for t in tokens], tokenizer="whitespace")
    return lambda query, k: inner(" ".join(analyze(query)), k)


SAME_TOKEN_PEERS: dict[str, Callable[[list[str], list[list[str]], Callable[[str], list[str]]],
                                     Search]] = {
    "bm25s": _bm25s_tokens,
    "tantivy": _tantivy_tokens,
    "rank_bm25": build_rank_bm25,
}


def same_tokens(documents: Sequence[Document], analyze: Callable[[str], list[str]]
                ) -> dict[str, Search]:
    """Every installed peer, fed the terms ``analyze`` gives (documents and queries)."""
    ids = [d.id for d in documents]
    tokens = [analyze(document_text(d)) for d in documents]
    peers: dict[str, Search] = {}
    for name, make in SAME_TOKEN_PEERS.items():
        try:
            peers[name] = make(ids, tokens, analyze)
        except ImportError:
            continue
    return peers
