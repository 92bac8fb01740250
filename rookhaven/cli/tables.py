"""Plain-text rendering of results and audits for people (the bytes stay canonical JSON)."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence

from ..core.engines import engine_of, engine_ref
from ..models import Document, RetrievalResult


def _columns(ch: str) -> int:
    """How many terminal columns ``ch`` takes: CJK wide and full-width forms two, combining
    marks and format characters none (display only: no stored byte depends on it)."""
    if unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def width(text: str) -> int:
    """The columns ``text`` takes in a terminal."""
    return len(text) if text.isascii() else sum(map(_columns, text))


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A left-aligned text table with a rule under the headers; columns line up in a
    terminal also for wide (CJK) text and combining marks."""
    cells = [[str(c) for c in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(width(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(c + " " * (w - width(c)) for c, w in zip(row, widths, strict=True))
             .rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def short(text: str, columns: int) -> str:
    """``text`` cut to ``columns`` terminal columns, an ellipsis marking a cut."""
    if width(text) <= columns:
        return text
    kept, used = [], 0
    for ch in text:
        used += _columns(ch)
        if used > columns - 1:
            break
        kept.append(ch)
    return "".join(kept) + "…"


def score_scale(result: RetrievalResult) -> int | None:
    """How many units the engine that made ``result`` counts in 1.0 of score (bm25@2:
    2**24), or None for an engine this install lacks. The audit's recorded ``scale_bits``
    where it has them: bm25@3's scale depends on its parameters (2**36 with feedback)."""
    params = result.audit.config.get("params")
    bits = params.get("scale_bits") if isinstance(params, dict) else None
    if isinstance(bits, int) and not isinstance(bits, bool) and 0 <= bits < 64:
        return 1 << bits
    spec = engine_of(result.audit.engine.model_dump())
    return None if spec is None else int(spec.provider.scale)


def exact_score(score: float, scale: int | None) -> str:
    """The engine's own integer for ``score`` (the JSON carries ``units / scale``); the
    float as stored when it is not a whole number of units."""
    # The scale is a power of two, so the product is exact.
    if scale is not None and (score * scale).is_integer():
        return str(int(score * scale))
    return repr(score)


def hits_table(result: RetrievalResult, documents: Mapping[str, Document]) -> str:
    """Rank, id, exact integer score, the subqueries that picked each hit, and its title."""
    rows = []
    scale = score_scale(result)
    for hit in result.hits:
        doc = documents.get(hit.id)
        title = doc.fields.get("title", doc.text) if doc else ""
        via = ",".join(str(i) for i in hit.subqueries) or "backfill"
        rows.append((hit.rank, hit.id, exact_score(hit.score, scale), via, short(title, 48)))
    if not rows:
        return "(no hits)"
    return table(("rank", "id", "score", "via", "title"), rows)


def audit_summary(result: RetrievalResult) -> str:
    """The audit record in a few lines: seed, subqueries and budgets, corpus and engine."""
    audit = result.audit
    spec = engine_of(audit.engine.model_dump())
    engine = spec.ref if spec else f"{engine_ref(audit.engine.model_dump())} (not installed)"
    lines = [f"seed {audit.seed!r}; budget {audit.recall_budget}; engine {engine}; "
             f"corpus {audit.corpus_digest[:19]}… ({audit.corpus_size} docs)"]
    for i, sub in enumerate(audit.subqueries):
        lines.append(f"  subquery {i}: {sub.text!r} terms={sub.terms} weight={sub.weight} "
                     f"budget={sub.budget} contributed={len(sub.contributed)}")
    for dropped in audit.dropped:
        lines.append(f"  dropped: {dropped.text!r} ({dropped.reason})")
    if audit.backfill:
        lines.append(f"  backfill: {len(audit.backfill)} from the whole query")
    return "\n".join(lines)
