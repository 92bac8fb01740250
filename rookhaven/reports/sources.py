"""A run's page from the store: its records, its movers' two rankings and their titles."""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import IntegrityError, NotFoundError
from ..rerank.models import RerankRow, RerankSpec
from ..rerank.runner import hit_ids
from ..store import Store
from ..verification.models import VerificationRun
from .pages import rerank_page, verification_page
from .views import Hit, Made, Mover, RerankView, VerificationView, movers

# Characters of a document's text shown where it has no title field.
TITLE_CHARS = 80


def page_for(store: Store, run_id: str, made: Made) -> str:
    """The page of run ``run_id`` (a verification's ``verify-...`` or a re-ranking's);
    NotFoundError for an unknown run. A re-ranking still going gets a page of its chunks so
    far, saying how far it is."""
    if run_id.startswith("verify-"):
        run = VerificationRun.model_validate_json(store.verifications.get(run_id))
        return verification_page(VerificationView(run, made))
    return rerank_page(rerank_view(store, run_id, made))


def rerank_view(store: Store, run_id: str, made: Made) -> RerankView:
    spec = RerankSpec.model_validate_json(store.reranks.spec(run_id))
    finished = store.reranks.finished(run_id)
    rows = tuple(RerankRow.model_validate_json(line) for index in sorted(finished)
                 for line in finished[index].splitlines())
    chosen = movers(rows)
    stored = store.results.get_many([r.old_key for r in chosen]
                                    + [r.new_key or r.old_key for r in chosen])
    olds, news = stored[:len(chosen)], stored[len(chosen):]
    wanted: dict[str, set[str]] = {}
    for row, old, new in zip(chosen, olds, news, strict=True):
        wanted.setdefault(row.old_corpus, set()).update(hit_ids(old) or ())
        wanted.setdefault(row.new_corpus, set()).update(hit_ids(new) or ())
    titles = {digest: _titles(store, digest, ids) for digest, ids in wanted.items()}
    shown = tuple(Mover(row, _hits(hit_ids(old), titles[row.old_corpus], row),
                        _hits(hit_ids(new), titles[row.new_corpus], row))
                  for row, old, new in zip(chosen, olds, news, strict=True))
    digests = {d for d in (spec.corpus, spec.target_corpus, spec.baseline) if d}
    return RerankView(run_id=run_id, spec=spec, total=store.reranks.total(run_id) or 0,
                      rows=rows, movers=shown, made=made, names=_names(store, digests),
                      askers=tuple(store.reranks.askers(run_id)))


def _names(store: Store, digests: Iterable[str]) -> dict[str, str]:
    """name@version of each corpus digest the registry names (the first, if several)."""
    wanted, found = set(digests), dict[str, str]()
    for entry in store.corpora.entries():
        if entry.digest in wanted and entry.name is not None:
            found.setdefault(entry.digest, f"{entry.name}@{entry.version}")
    return found


def _hits(ids: list[str] | None, titles: dict[str, str], row: RerankRow) -> tuple[Hit, ...]:
    depth = (row.change or {}).get("k", row.recall_budget)
    return tuple(Hit(i, titles.get(i, "")) for i in (ids or [])[:depth])


def _titles(store: Store, digest: str, ids: Iterable[str]) -> dict[str, str]:
    """The title field (else the text's start) of each of ``ids`` in corpus ``digest``; none
    where the corpus is gone (the page still shows the ids)."""
    wanted = set(ids)
    try:
        corpus = store.corpora.load(digest)
    except (NotFoundError, IntegrityError):  # a page without titles is still a page
        return {}
    return {doc.id: doc.fields.get("title") or doc.text[:TITLE_CHARS]
            for doc in corpus if doc.id in wanted}
