"""The retrieval engine: the seed's example, budgets, ties, backfill, audit, determinism."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rookhaven import (
    Document,
    RetrievalRequest,
    Retriever,
    TfCosineProvider,
    canonical_bytes,
    engine_identity,
    result_key,
    retrieve,
)
from rookhaven.core.streams import derive_streams, tie_key
from rookhaven.errors import ConfigError, CorpusError, DuplicateDocumentError, UnknownProviderError

SEED_CORPUS = [Document(id="d1", text="crane maintenance schedule for berth 7"),
               Document(id="d2", text="berth delays caused by tide windows")]


def test_the_seed_example_returns_both_documents_from_two_subqueries() -> None:
    request = RetrievalRequest(query="crane faults and tide windows", recallBudget=4, seed="run-1")
    result = retrieve(request, SEED_CORPUS, TfCosineProvider())
    assert [s.text for s in result.audit.subqueries] == ["crane faults", "tide windows"]
    assert {h.id for h in result.hits} == {"d1", "d2"}
    assert result.audit.seed == "run-1"
    assert [s.budget for s in result.audit.subqueries] == [2, 2]


def test_the_audit_records_what_each_subquery_contributed_and_the_corpus_and_engine() -> None:
    request = RetrievalRequest(query="crane faults and tide windows", recallBudget=4, seed="run-1")
    audit = retrieve(request, SEED_CORPUS, TfCosineProvider()).audit
    assert [[c.id for c in s.contributed] for s in audit.subqueries] == [["d1"], ["d2"]]
    assert audit.corpus_digest.startswith("sha256:") and audit.corpus_size == 2
    assert audit.engine.name == "tfcosine"
    assert audit.config_digest == engine_identity(TfCosineProvider()).config_digest


def test_camel_case_recall_budget_alias_and_snake_case_name_are_both_accepted() -> None:
    assert (RetrievalRequest(query="q", recallBudget=3)
            == RetrievalRequest(query="q", recall_budget=3))


def test_hits_never_exceed_the_budget_and_backfill_fills_gaps_left_by_duplicates() -> None:
    # Both subqueries prefer the same three documents, so their picks coincide entirely.
    docs = [Document(id=f"x{i}", text="crane tide" if i < 3 else "crane berth berth")
            for i in range(8)]
    result = retrieve(RetrievalRequest(query="crane and tide", recallBudget=6, seed="s"), docs)
    assert len(result.hits) == 6
    assert len({h.id for h in result.hits}) == 6
    assert result.audit.backfill, "duplicates between subqueries should be backfilled"


def test_a_stop_word_query_returns_no_hits_and_says_why() -> None:
    result = retrieve(RetrievalRequest(query="and the of", seed="s"), SEED_CORPUS)
    assert result.hits == []
    assert result.audit.subqueries == []
    assert {d.reason for d in result.audit.dropped} == {"no content terms"}


def test_ties_are_ordered_by_the_seeded_key_and_the_order_changes_with_the_seed() -> None:
    docs = [Document(id=f"t{i:02d}", text="crane fault") for i in range(20)]
    orders = {tuple(h.id for h in retrieve(RetrievalRequest(query="crane", recallBudget=5,
                                                            seed=seed), docs).hits)
              for seed in ("a", "b", "c")}
    assert len(orders) == 3


def test_adding_an_unrelated_document_never_reorders_existing_ties() -> None:
    docs = [Document(id=f"t{i:02d}", text="crane fault") for i in range(12)]
    request = RetrievalRequest(query="crane", recallBudget=12, seed="stable")
    before = [h.id for h in retrieve(request, docs).hits]
    after = [h.id for h in retrieve(request, [*docs, Document(id="zz", text="tide")]).hits]
    assert before == after


def test_tie_key_is_a_pure_function_of_the_ranking_seed_and_document_id() -> None:
    streams = derive_streams("seed", "query")
    assert tie_key(streams.ranking, "d1") == tie_key(streams.ranking, "d1")
    assert tie_key(streams.ranking, "d1") != tie_key(streams.ranking, "d2")


def test_allocation_and_ranking_streams_are_seeded_distinctly() -> None:
    streams = derive_streams("run-1", "crane faults and tide windows")
    assert streams.allocation != streams.ranking


docs_st = st.lists(
    st.builds(lambda i, words: Document(id=f"d{i}", text=" ".join(words)),
              st.integers(0, 10_000),
              st.lists(st.sampled_from(["crane", "tide", "berth", "reefer", "fault", "pilot"]),
                       max_size=6)),
    min_size=1, max_size=25, unique_by=lambda d: d.id)


@given(docs_st, st.integers(1, 30), st.randoms(use_true_random=False),
       st.sampled_from(["crane and tide", "reefer fault, pilot berth", "crane"]))
def test_output_never_depends_on_corpus_order_and_never_exceeds_the_budget(
        docs: list[Document], budget: int, shuffler: object, query: str) -> None:
    request = RetrievalRequest(query=query, recallBudget=budget, seed="prop")
    shuffled = list(docs)
    shuffler.shuffle(shuffled)  # type: ignore[attr-defined]
    first = retrieve(request, docs)
    assert canonical_bytes(first) == canonical_bytes(retrieve(request, shuffled))
    assert len(first.hits) <= budget
    assert [h.rank for h in first.hits] == list(range(1, len(first.hits) + 1))


def test_a_retriever_answers_with_the_same_bytes_as_one_shot_retrieve() -> None:
    retriever = Retriever(SEED_CORPUS, "tfcosine")
    for query in ("crane faults and tide windows", "berth", "tide"):
        request = RetrievalRequest(query=query, recallBudget=3, seed="r")
        assert canonical_bytes(retriever.retrieve(request)) == canonical_bytes(
            retrieve(request, SEED_CORPUS, "tfcosine"))


def test_result_key_changes_with_every_input_that_changes_bytes() -> None:
    identity = engine_identity(TfCosineProvider())
    base = RetrievalRequest(query="crane", seed="s")
    key = result_key(base, "sha256:a", identity)
    assert key == result_key(RetrievalRequest(query="crane", seed="s"), "sha256:a", identity)
    assert key != result_key(base.model_copy(update={"seed": "t"}), "sha256:a", identity)
    assert key != result_key(base, "sha256:b", identity)


def test_bad_corpora_and_providers_are_refused_with_what_to_do() -> None:
    request = RetrievalRequest(query="crane")
    with pytest.raises(CorpusError, match="empty"):
        retrieve(request, [])
    with pytest.raises(DuplicateDocumentError, match="'d1'"):
        retrieve(request, [SEED_CORPUS[0], SEED_CORPUS[0]])
    with pytest.raises(UnknownProviderError, match="tfcosine"):
        retrieve(request, SEED_CORPUS, "nope")
    with pytest.raises(ConfigError, match=r"no parameter\(s\) k1; it accepts stopwords, stemmer$"):
        retrieve(request, SEED_CORPUS, "tfcosine", k1=1.2)
