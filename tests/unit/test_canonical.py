"""The canonical encoding: sorted keys, no whitespace, and no non-finite float ever written."""

from __future__ import annotations

import math

import pytest

from rookhaven import canonical_bytes
from rookhaven.core.canonical import audit_of, result_bytes


def test_keys_are_sorted_and_there_is_no_whitespace() -> None:
    assert canonical_bytes({"b": [1, 2.5], "a": {"d": None, "c": "x y"}}) == (
        b'{"a":{"c":"x y","d":null},"b":[1,2.5]}')


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("shape", ["top", "nested", "beside-a-null", "beside-null-text"])
def test_a_non_finite_float_is_refused_wherever_it_is(bad: float, shape: str) -> None:
    value = {"top": bad, "nested": {"hits": [{"score": bad}]},
             "beside-a-null": {"x": None, "score": [1.0, bad]},
             "beside-null-text": {"id": "nullable", "score": bad}}[shape]
    with pytest.raises(ValueError, match="non-finite"):
        canonical_bytes(value)


def test_nulls_and_the_word_null_alone_are_fine() -> None:
    assert canonical_bytes({"id": "null", "meta": None, "s": 0.25}) == (
        b'{"id":"null","meta":null,"s":0.25}')


def _results() -> list[dict[str, object]]:
    from rookhaven import Document, RetrievalRequest, Retriever
    docs = [Document(id=f"d{i}-é\u2028\"q\"", text=f"crane {i % 5} berth tide {i % 3}")
            for i in range(40)]
    retriever = Retriever(docs, "bm25")
    found = [retriever.result_data(RetrievalRequest(query=q, recall_budget=k, seed=s))
             for q in ("crane berth", "tide, and \"hits\": 3", "nothing-matches", "ß 🚢")
             for k in (1, 5, 40) for s in ("a", "\"hits\":")]
    return [*found, {"hits": [], "audit": {"hits": [1], "z": None}}]


def test_a_results_bytes_are_its_audit_and_hits_framed_as_one_encoding_gives() -> None:
    from rookhaven.core.canonical import result_bytes
    for result in _results():
        assert result_bytes(result) == (canonical_bytes(result),
                                        canonical_bytes(result["audit"]))


def test_result_bytes_takes_the_general_path_for_other_shapes() -> None:
    from rookhaven.core.canonical import result_bytes
    odd = {"audit": {"a": 1}, "hits": [], "extra": True}
    assert result_bytes(odd) == (canonical_bytes(odd), canonical_bytes(odd["audit"]))
    with pytest.raises(ValueError, match="non-finite"):
        result_bytes({"audit": {"score": math.nan}, "hits": []})


def test_the_audit_a_result_frames_is_read_back_exactly() -> None:
    # Hits whose text holds the frame's own words cannot fool the slice: inside a JSON
    # string their quotes are escaped.
    audit = {"query": 'a ,"hits": b', "seed": "s", "nested": {"hits": [1]}}
    hits = [{"id": 'x},"hits":[', "score": 1.5}]
    result, audit_bytes = result_bytes({"audit": audit, "hits": hits})
    assert audit_of(result) == audit_bytes == canonical_bytes(audit)


@pytest.mark.parametrize(("stored", "expected"), [
    # Framed otherwise (spaces, keys out of order): the audit it parses to, re-encoded.
    (b'{"hits": [], "audit": {"b": 1, "a": 2}}', b'{"a":2,"b":1}'),
    (b'{"audit":{"a":1},"hits":[],"more":{"x":1,"hits":{}}}', b'{"a":1}'),
    (b"planted", None),
    (b'{"hits":[]}', None),
    (b'{"audit":[1],"hits":[]}', None),
    (b'[{"audit":{}}]', None),
])
def test_bytes_not_framed_by_rookhaven_give_their_parsed_audit_or_none(
        stored: bytes, expected: bytes | None) -> None:
    assert audit_of(stored) == expected
