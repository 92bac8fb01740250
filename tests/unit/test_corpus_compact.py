"""The compact corpus: canonical lines in, the same documents, ids and digest out."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rookhaven.core.analyzer import Analyzer
from rookhaven.core.corpus import Corpus
from rookhaven.core.index import build_index
from rookhaven.corpusfile import load_corpus, load_documents
from rookhaven.errors import CorpusError, DuplicateDocumentError
from rookhaven.models import Document

DOCS = [
    Document(id="b", text="Crane fault at berth 4", fields={"title": "Crane", "keywords": "k"}),
    Document(id="a", text="", metadata={"port": "Rotterdam", "n": [1, 2.5, None, True],
                                        "nested": {"z": {"y": "x"}, "a": -0.0}}),
    Document(id="é", text="Straße – ümlaut ☃ \u2028 \"quoted\" \\ back"),
    Document(id="c", text="tide " * 50, fields={"title": ""}),
    Document(id="A", text="upper-case ids sort first"),
]


def _old_lines(docs: list[Document]) -> list[bytes]:
    """The canonical lines as the tuple-of-models corpus made them."""
    return [orjson.dumps(d.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS) + b"\n"
            for d in sorted(docs, key=lambda d: d.id)]


def _old_digest(docs: list[Document]) -> str:
    return "sha256:" + hashlib.sha256(b"".join(_old_lines(docs))).hexdigest()


def test_documents_come_back_equal_in_id_order() -> None:
    corpus = Corpus(DOCS)
    expected = sorted(DOCS, key=lambda d: d.id)
    assert corpus.ids == tuple(d.id for d in expected)
    assert list(corpus) == expected
    assert [corpus[i] for i in range(len(corpus))] == expected
    assert corpus[-1] == expected[-1]
    assert corpus[1:3] == tuple(expected[1:3])
    with pytest.raises(IndexError):
        corpus[len(DOCS)]


def test_digest_and_canonical_lines_are_the_bytes_the_models_give() -> None:
    for docs in (DOCS, sorted(DOCS, key=lambda d: d.id)):  # shuffled input, and in order
        corpus = Corpus(docs)
        assert list(corpus.canonical_lines()) == _old_lines(DOCS)
        assert corpus.digest == _old_digest(DOCS)
        assert [corpus.line(i) + b"\n" for i in range(len(corpus))] == _old_lines(DOCS)


def test_records_are_the_plain_documents() -> None:
    corpus = Corpus(DOCS)
    plain = [d.model_dump(mode="json") for d in corpus]
    assert list(corpus.records()) == plain
    assert list(corpus.records(1, 3)) == plain[1:3]
    assert list(corpus.records(3, 99)) == plain[3:]


def test_an_empty_corpus_has_the_digest_of_no_bytes() -> None:
    corpus = Corpus([])
    assert (len(corpus), corpus.ids, list(corpus)) == (0, (), [])
    assert corpus.digest == "sha256:" + hashlib.sha256(b"").hexdigest()


def test_from_records_is_the_same_corpus_as_from_documents() -> None:
    records = [d.model_dump() for d in DOCS]
    records.append({"id": "z"})  # text, fields and metadata left to their defaults
    via_records = Corpus.from_records(records)
    via_models = Corpus([*DOCS, Document(id="z")])
    assert via_records.ids == via_models.ids
    assert via_records.digest == via_models.digest
    assert list(via_records) == list(via_models)


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.text(max_size=8)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                 max_size=3),
    max_leaves=6)
_records = st.lists(st.fixed_dictionaries(
    {"id": st.text(min_size=1, max_size=6)},
    optional={"text": st.text(max_size=40),
              "fields": st.dictionaries(st.text(max_size=6), st.text(max_size=12), max_size=3),
              "metadata": st.dictionaries(st.text(max_size=6), _json, max_size=3)}),
    max_size=8, unique_by=lambda r: r["id"])


@settings(max_examples=150, deadline=None)
@given(_records, st.randoms(use_true_random=False))
def test_any_valid_records_round_trip_with_the_models_digest(
        records: list[dict[str, Any]], rnd: random.Random) -> None:
    docs = [Document(**r) for r in records]
    rnd.shuffle(records)
    corpus = Corpus.from_records(records)
    assert list(corpus) == sorted(docs, key=lambda d: d.id)
    assert corpus.digest == _old_digest(docs) == Corpus(docs).digest
    assert list(corpus.canonical_lines()) == _old_lines(docs)


@pytest.mark.parametrize(("record", "message"), [
    ("d1", r"record 1: a document must be a mapping, got str"),
    ({"id": "d1", "title": "T"}, r"record 1: unknown document keys \['title'\]; a document has "
     r"only id, text, fields, metadata"),
    ({"text": "x"}, r"record 1: document id must be a non-empty string, got None"),
    ({"id": ""}, r"record 1: document id must be a non-empty string, got ''"),
    ({"id": 7}, r"record 1: document id must be a non-empty string, got 7"),
    ({"id": "d1", "text": b"x"}, r"record 1: document 'd1': 'text' must be a string, got bytes"),
    ({"id": "d1", "fields": ["t"]}, r"document 'd1': 'fields' must be a dict of names to "
     r"strings, got list"),
    ({"id": "d1", "fields": {"title": 3}}, r"document 'd1': 'fields' must map names to "
     r"strings, got 'title': int"),
    ({"id": "d1", "metadata": "m"}, r"document 'd1': 'metadata' must be a dict, got str"),
    ({"id": "d1", "metadata": {"tags": {"a"}}}, r"document 'd1': 'metadata' holds a value of "
     r"type set at metadata\['tags'\]; only JSON values are accepted"),
    ({"id": "d1", "metadata": {"at": [1, (2,)]}}, r"holds a value of type tuple at "
     r"metadata\['at'\]\[1\]"),
    ({"id": "d1", "metadata": {"k": {1: "v"}}}, r"holds a key of type int \(1\) at "
     r"metadata\['k'\]"),
    ({"id": "d1", "metadata": {"big": 2**70}}, r"document 'd1': cannot be encoded"),
])
def test_from_records_names_the_record_and_the_problem(record: Any, message: str) -> None:
    with pytest.raises(CorpusError, match=message) as caught:
        Corpus.from_records([{"id": "d0"}, record])
    assert "\n" not in str(caught.value)


def test_duplicate_ids_raise_the_same_error_either_way() -> None:
    with pytest.raises(DuplicateDocumentError) as from_models:
        Corpus([Document(id="x"), Document(id="a"), Document(id="x", text="again")])
    with pytest.raises(DuplicateDocumentError) as from_records:
        Corpus.from_records([{"id": "x"}, {"id": "a"}, {"id": "x", "text": "again"}])
    assert str(from_models.value) == str(from_records.value) == (
        "duplicate document id 'x': every document needs its own id")


def test_the_index_is_built_from_records_without_a_model_per_document(
        monkeypatch: pytest.MonkeyPatch) -> None:
    expected = build_index(Corpus(DOCS), Analyzer(), {"title": 2.0})

    def refuse(*_: Any) -> Document:
        raise AssertionError("build_index made a Document")

    monkeypatch.setattr(Corpus, "__getitem__", refuse)
    monkeypatch.setattr(Corpus, "__iter__", refuse)
    index = build_index(Corpus(DOCS), Analyzer(), {"title": 2.0})
    assert index.vocabulary == expected.vocabulary
    for name in ("offsets", "docs", "tfs", "lengths"):
        assert np.array_equal(getattr(index, name), getattr(expected, name)), name


@pytest.mark.parametrize("content", [
    '{"_id": "2", "title": "Crane", "text": "fault", "url": "u"}\n\n{"_id": "1", "text": "t"}\n',
    '[{"id": "2", "text": "x", "fields": {"title": "T"}, "metadata": {"m": [1]}}, {"id": "1"}]',
    '\ufeff{"_id": "2", "text": "byte order mark first"}\n{"_id": "1"}',
])
def test_load_corpus_is_the_corpus_of_load_documents(tmp_path: Path, content: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(content, encoding="utf-8")
    compact = load_corpus(path, max_docs=10)
    models = Corpus(load_documents(path, max_docs=10))
    assert compact.ids == models.ids == ("1", "2")
    assert compact.digest == models.digest
    assert list(compact) == list(models)


def test_load_corpus_reports_a_duplicate_with_both_places(tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    path.write_text('{"_id": "a"}\n{"_id": "b"}\n{"_id": "a"}\n', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"dup.jsonl: line 3: duplicate document id 'a' "
                                          r"\(first at line 1\)"):
        load_corpus(path, max_docs=10)
