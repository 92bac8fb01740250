"""The hit and contribution lists written by compiled code are the plain path's bytes.

``Retriever.result_bytes`` writes the lists with ``core.hitlists`` where the kernels are
live; ``result_data`` builds them as dicts, and orjson encodes those. Ids are drawn from
characters JSON escapes (quotes, backslashes, controls, U+2028), non-ASCII and astral ones,
and queries split into parts, overlap, backfill and tie, so every branch of the merge
writes its lists both ways.
"""

from __future__ import annotations

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rookhaven import Document, RetrievalRequest, Retriever, canonical_bytes
from rookhaven.core import compiled, hitlists, select
from rookhaven.core.canonical import result_bytes
from rookhaven.core.rng import CodeUnits, prefix_units
from rookhaven.core.select import TieKeys, top_k
from rookhaven.core.streams import derive_streams, tie_key
from rookhaven.sampledata import sample_corpus, sample_requests

pytestmark = pytest.mark.skipif(not compiled.AVAILABLE, reason="numba is not installed")

ID_CHARS = st.sampled_from(['"', "\\", "\n", "\x00", "\x1f", "\x7f", "\u2028", "/", ",", "]",
                            "é", "日", "😀", "n", "u", "l", "a", "7", " "])
IDS = st.lists(st.text(ID_CHARS, min_size=1, max_size=6), min_size=1, max_size=24, unique=True)
WORDS = ["crane", "berth", "tide", "pilot", "vessel", "cargo", "quay", "reefer"]
CONNECTORS = [" and ", ", ", " or ", "; ", " "]


@given(ids=IDS)
def test_each_id_is_found_as_orjson_writes_it(ids: list[str]) -> None:
    strings = hitlists.IdStrings(ids)
    for i, id_ in enumerate(ids):
        start, end = strings.offsets[i], strings.offsets[i + 1] - 1
        assert strings.blob[start:end].tobytes() == orjson.dumps(id_)


@settings(max_examples=60, deadline=None)
@given(ids=IDS, data=st.data())
def test_result_bytes_are_the_plain_results_bytes(ids: list[str], data: st.DataObject) -> None:
    texts = data.draw(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),
                               min_size=len(ids), max_size=len(ids)))
    engine = data.draw(st.sampled_from(["bm25@2", "bm25@3", "bm25@4", "bm25@6", "tfcosine@1"]))
    retriever = Retriever([Document(id=i, text=" ".join(t))
                           for i, t in zip(ids, texts, strict=True)], engine)
    for _ in range(4):
        words = data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5))
        query = words[0] + "".join(data.draw(st.sampled_from(CONNECTORS)) + w
                                   for w in words[1:])
        request = RetrievalRequest(query=query, recall_budget=data.draw(st.integers(1, 30)),
                                   seed=data.draw(st.text("ab", max_size=3)),
                                   decompose=data.draw(st.booleans()))
        plain = result_bytes(retriever.result_data(request))
        assert retriever.result_bytes(request) == plain
        assert plain[0] == canonical_bytes(retriever.retrieve(request))


@pytest.mark.parametrize("engine", ["bm25@2", "bm25@3", "tfcosine@1"])
def test_the_sample_gives_the_same_bytes_both_ways(engine: str) -> None:
    retriever = Retriever(sample_corpus(), engine)
    for request in sample_requests():
        for budget in (1, 10, 100):
            one = request.model_copy(update={"recall_budget": budget})
            assert retriever.result_bytes(one) == result_bytes(retriever.result_data(one))


def test_an_empty_list_is_an_empty_array() -> None:
    strings = hitlists.IdStrings(["a"])
    assert orjson.dumps(hitlists.contributions(strings, [], [], 2)) == b"[]"
    assert orjson.dumps(hitlists.picked(strings, [], [], 2)) == b"[[],[]]"


def test_hits_name_their_subqueries_and_ranks() -> None:
    strings = hitlists.IdStrings(["x", 'q"'])
    written = hitlists.hits(strings, [1, 0], [6, 3], 4, [(0, 12), ()])
    assert orjson.loads(orjson.dumps(written)) == [
        {"id": 'q"', "rank": 1, "score": 1.5, "subqueries": [0, 12]},
        {"id": "x", "rank": 2, "score": 0.75, "subqueries": []},
    ]


# Candidates as a cut gives them and beyond: fewer and more than FEW_SCORES and SHORT_SORT,
# few distinct scores (ties everywhere), zero and negative ones, some at the top of int64.
_CANDIDATES = st.tuples(
    st.one_of(st.integers(0, 40), st.integers(select.SHORT_SORT - 8, select.SHORT_SORT + 40)),
    st.randoms(use_true_random=False)).map(lambda nr: (
        sorted(nr[1].sample(range(300), nr[0])),
        [nr[1].choice([*range(-1, 9), 2**53 + 1, 2**63 - 1]) for _ in range(nr[0])]))


@settings(max_examples=150, deadline=None)
@given(ids=st.lists(st.text(ID_CHARS, min_size=1, max_size=6), min_size=300, max_size=300,
                    unique=True),
       candidates=_CANDIDATES, k=st.integers(0, 150), seed=st.integers(0, 2**32 - 1),
       scale=st.sampled_from([1, 2**16, 2**24]))
def test_ranked_picked_is_top_k_then_picked(ids: list[str], candidates: tuple[list[int],
                                            list[int]], k: int, seed: int, scale: int) -> None:
    ords = np.asarray(candidates[0], dtype=np.int64)
    units = np.asarray(candidates[1], dtype=np.int64)
    strings, id_units = hitlists.IdStrings(ids), CodeUnits(ids)
    keys = TieKeys(seed, ids, id_units)
    picks, contributed, hits = hitlists.ranked_picked(strings, keys, ords, units, k, scale)
    expected = top_k(ords, units, k, TieKeys(seed, ids, id_units))
    assert picks == expected
    both = (hitlists.picked(strings, *expected, scale) if expected[0]
            else (orjson.Fragment(b"[]"), orjson.Fragment(b"[]")))
    assert (orjson.dumps(contributed), orjson.dumps(hits)) == tuple(map(orjson.dumps, both))
    # What it hashed is remembered: the keys of tied picks are the seeded tie keys.
    tied = [o for o, u in zip(*expected, strict=True) if expected[1].count(u) > 1]
    assert all(keys.of(tied)[o] == tie_key(seed, ids[o]) for o in tied)


@given(st.integers(0, 2**32 - 1))
def test_the_compiled_prefix_of_a_seed_is_its_tie_key_prefix(seed: int) -> None:
    assert select.seed_prefix(seed).tolist() == prefix_units(f"{seed:08x}\x00").tolist()


@pytest.mark.parametrize(("copies", "budget"), [(200, 10), (5, 10), (40, 40), (0, 3)])
def test_a_direct_result_a_wide_cut_and_a_short_one_give_the_reference_bytes(
        copies: int, budget: int) -> None:
    # A one-part query's result is written without a dict (Retriever._direct_bytes) unless
    # its cut is wide (200 documents tied at the cut) or short of the budget; all are the
    # reference path's bytes.
    docs = ([Document(id=f"same-{i:03d}", text="crane berth") for i in range(copies)]
            + [Document(id=f"other-{i}", text=f"tide pilot {'crane ' * i}") for i in range(3)])
    retriever = Retriever(docs, "bm25@6")
    for query in ("crane", "crane berth", "tide", "quay"):
        request = RetrievalRequest(query=query, recall_budget=budget, seed="s")
        assert retriever.result_bytes(request) == result_bytes(retriever.result_data(request))


@settings(max_examples=80, deadline=None)
@given(seed=st.text(max_size=8), query=st.text(min_size=1, max_size=30),
       terms=st.lists(st.text(ID_CHARS, min_size=1, max_size=5), max_size=4, unique=True),
       candidates=_CANDIDATES.filter(lambda c: len(c[0]) > 0), k=st.integers(1, 150),
       decompose=st.booleans())
def test_one_part_writes_the_result_of_the_requests_streams_and_picks(
        seed: str, query: str, terms: list[str], candidates: tuple[list[int], list[int]],
        k: int, decompose: bool) -> None:
    # The frame a retriever makes (Retriever._audit_frame), here with stand-in values; the
    # engine's tests hold the whole result to the reference path.
    head = (b'{"backfill":[],"config":{"k1":1.2},"config_digest":"c","corpus_digest":"d",'
            b'"corpus_size":300,"decompose":')
    middle = b',"dropped":[],"engine":{"name":"e"},"query":'
    ids = [f"d{i}\u00e9" if i % 3 else f"d{i}" for i in range(300)]
    strings, id_units = hitlists.IdStrings(ids), CodeUnits(ids)
    ords = np.asarray(candidates[0], dtype=np.int64)
    units = np.asarray(candidates[1], dtype=np.int64)
    written = hitlists.one_part(strings, id_units, (head, middle), seed, query, decompose,
                                tuple(terms), ords, units, k, 2**16)
    streams = derive_streams(seed, query)
    picks, encoded, split, _ = hitlists.ranked_lists(strings, id_units, streams.ranking, ords,
                                                     units, k, 2**16)
    if len(picks[0]) != k:  # short: the merge's backfill decides
        assert written is None
        return
    assert written is not None
    result, audit = written
    contributed = orjson.Fragment(encoded[:split].tobytes())
    hits = orjson.Fragment(encoded[split:].tobytes())
    expected = {
        "backfill": [], "config": {"k1": 1.2}, "config_digest": "c", "corpus_digest": "d",
        "corpus_size": 300, "decompose": decompose, "dropped": [], "engine": {"name": "e"},
        "query": query, "recall_budget": k, "seed": seed, "streams": streams.as_dict(),
        "subqueries": [{"budget": k, "contributed": contributed, "terms": terms,
                        "text": query, "weight": len(terms)}],
    }
    assert audit == canonical_bytes(expected)
    assert result == canonical_bytes({"audit": expected, "hits": hits})
