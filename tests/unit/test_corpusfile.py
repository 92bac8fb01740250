"""Corpus files: both formats load; every bad input is one line naming file, place and problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from rookhaven import Document, Retriever
from rookhaven.core.corpus import DocumentLimits
from rookhaven.corpusfile import FileLimits, load_corpus, load_documents
from rookhaven.errors import CorpusError


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_json_array_loads(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.json", '[{"id": "a", "text": "x", "fields": {"title": "T"}}]')
    (doc,) = load_documents(path, max_docs=10)
    assert (doc.id, doc.text, doc.fields) == ("a", "x", {"title": "T"})


def test_beir_jsonl_maps_id_and_title_and_keeps_extra_keys_as_metadata(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.jsonl",
                  '{"_id": "1", "title": "Crane", "text": "fault", "url": "u"}\n\n'
                  '{"_id": "2", "title": "", "text": "tide"}\n')
    first, second = load_documents(path, max_docs=10)
    assert (first.id, first.fields, first.metadata) == ("1", {"title": "Crane"}, {"url": "u"})
    assert second.fields == {}


def test_a_title_given_both_ways_alike_is_one_title(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.jsonl",
                  '{"_id": "1", "title": "Crane", "fields": {"title": "Crane"}, "text": "x"}\n')
    (doc,) = load_documents(path, max_docs=10)
    assert doc.fields == {"title": "Crane"}


@pytest.mark.parametrize(("name", "content", "message"), [
    ("bad.jsonl", '{"_id": "1", "text": "a"}\n{"_id": "2", "text": }\n',
     r"bad.jsonl: line 2: not valid JSON"),
    ("bad.json", '[{"id": "1", "text": "a"},\n {"id": }]', r"bad.json: line 2: not valid JSON"),
    ("num.jsonl", '{"_id": 7, "text": "a"}\n', r"num.jsonl: line 1: document id must be a "
     r"non-empty string, got 7"),
    ("num.json", '[{"id": "a"}, {"id": 3}]', r"num.json: index 1: document id must be"),
    ("dup.jsonl", '{"_id": "a"}\n{"_id": "b"}\n{"_id": "a"}\n',
     r"dup.jsonl: line 3: duplicate document id 'a' \(first at line 1\)"),
    ("dup.json", '[{"id": "a"}, {"id": "a"}]',
     r"dup.json: index 1: duplicate document id 'a' \(first at index 0\)"),
    ("noid.jsonl", '{"text": "a"}\n', r"noid.jsonl: line 1: document has no 'id'"),
    ("text.jsonl", '{"_id": "a", "text": 5}\n', r"'text' must be a string"),
    ("titles.jsonl", '{"_id": "a", "title": "crane", "fields": {"title": "tide"}}\n',
     r"titles.jsonl: line 1: document 'a': 'title' and 'fields.title' differ; keep one"),
    ("empty.jsonl", "\n\n", r"empty.jsonl: contains no documents"),
    ("scalar.json", '["x"]', r"scalar.json: index 0: a document must be a JSON object, got str"),
])
def test_each_bad_input_gives_one_line_naming_the_file_place_and_problem(
        tmp_path: Path, name: str, content: str, message: str) -> None:
    path = _write(tmp_path, name, content)
    with pytest.raises(CorpusError, match=message) as caught:
        load_documents(path, max_docs=10)
    assert "\n" not in str(caught.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match=r"nope.json: no such corpus file"):
        load_documents(tmp_path / "nope.json", max_docs=10)


def test_too_many_documents_names_the_limit_and_the_setting(tmp_path: Path) -> None:
    path = _write(tmp_path, "big.jsonl", "".join(f'{{"_id": "{i}"}}\n' for i in range(4)))
    with pytest.raises(CorpusError, match=r"more than 3 documents; raise ROOKHAVEN_MAX_CORPUS"):
        load_documents(path, max_docs=3)


def test_an_empty_corpus_is_allowed_where_none_is_required(tmp_path: Path) -> None:
    assert load_documents(_write(tmp_path, "e.json", "[]"), max_docs=3, required=False) == []


LIMITS = FileLimits(max_bytes=1 << 20, document=DocumentLimits(
    max_id_len=8, max_doc_bytes=4096, max_metadata_bytes=512, max_metadata_depth=4))


def _nested(depth: int) -> str:
    return '{"x":' * depth + "1" + "}" * depth


@pytest.mark.parametrize(("content", "message"), [
    ('{"_id": "abcdefghi"}\n', r"line 1: document id 'abcdefghi' is 9 characters; the limit "
     r"is 8 \(ROOKHAVEN_MAX_ID_LEN\)"),
    ('{"_id": "a", "text": "' + "x" * 5000 + '"}\n',
     r"line 1: longer than 4096 bytes; a document may be at most that \(ROOKHAVEN_MAX_DOC_BYTES\)"),
    ('[{"id": "a", "text": "' + "x" * 5000 + '"}]',
     r"index 0: document 'a' is 5\d\d\d bytes as canonical JSON; the limit is 4096 "
     r"\(ROOKHAVEN_MAX_DOC_BYTES\)"),
    ('{"_id": "a", "metadata": {"m": "' + "y" * 600 + '"}}\n',
     r"line 1: document 'a': 'metadata' is 6\d\d bytes as canonical JSON; the limit is 512 "
     r"\(ROOKHAVEN_MAX_METADATA_BYTES\)"),
    ('{"_id": "a", "metadata": ' + _nested(5) + '}\n',
     r"line 1: document 'a': 'metadata' has more than 4 levels of nesting at "
     r"metadata\['x'\]\['x'\]\['x'\]\['x'\] \(ROOKHAVEN_MAX_METADATA_DEPTH\)"),
    ('{"_id": "a", "metadata": ' + _nested(600) + '}\n', r"more than 4 levels of nesting"),
])
def test_a_document_over_a_limit_is_one_line_naming_the_place_the_limit_and_the_setting(
        tmp_path: Path, content: str, message: str) -> None:
    path = _write(tmp_path, "c.jsonl", content)
    for load in (load_documents, load_corpus):
        with pytest.raises(CorpusError, match=message) as caught:
            load(path, max_docs=10, limits=LIMITS)
        assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("content", "message"), [
    ('{"_id": "a", "metadata": ' + _nested(1000) + '}\n', r"line 1: document 'a': cannot be "
     r"encoded \(Recursion limit reached\)"),
    ('[{"id": "a", "metadata": ' + _nested(2000) + '}]', r"line 1: not valid JSON \(nested too "
     r"deep\)"),
])
def test_metadata_nested_past_the_encoder_is_an_error_not_a_recursion_error(
        tmp_path: Path, content: str, message: str) -> None:
    path = _write(tmp_path, "c.jsonl", content)
    with pytest.raises(CorpusError, match=message):
        load_corpus(path, max_docs=10)


def test_within_the_limits_a_document_loads_as_without_them(tmp_path: Path) -> None:
    path = _write(tmp_path, "c.jsonl", '{"_id": "a", "metadata": ' + _nested(3) + '}\n')
    assert load_corpus(path, max_docs=10, limits=LIMITS).digest == load_corpus(
        path, max_docs=10).digest


def test_an_endless_file_is_refused_at_the_line_limit_not_read_until_memory_runs_out() -> None:
    with pytest.raises(CorpusError, match=r"/dev/zero: line 1: longer than 4096 bytes"):
        load_corpus("/dev/zero", max_docs=10, limits=LIMITS)


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    small = FileLimits(max_bytes=100, document=LIMITS.document)
    for name, content in (("c.json", "[" + " " * 200 + "]"), ("c.jsonl", " " * 200),
                          ("d.jsonl", '{"_id": "a"}\n' * 20)):
        with pytest.raises(CorpusError, match=r"larger than 100 bytes; raise "
                                              r"ROOKHAVEN_MAX_CORPUS_BYTES"):
            load_corpus(_write(tmp_path, name, content), max_docs=100, limits=small)


def test_blank_bytes_before_the_first_document_are_counted_not_kept(tmp_path: Path) -> None:
    small = FileLimits(max_bytes=10_000, document=LIMITS.document)
    path = _write(tmp_path, "c.jsonl", "\n" * 9000 + '{"_id": "a"}\n')
    assert load_corpus(path, max_docs=10, limits=small).ids == ("a",)


@pytest.mark.parametrize("body", [b'[{"_id":"a","text":"crane"},{"_id":"b","text":"tide"}]',
                                  b'{"_id":"a","text":"crane"}\n{"_id":"b","text":"tide"}\n'])
def test_a_byte_order_mark_is_read_past_in_either_layout(tmp_path: Path, body: bytes) -> None:
    plain, marked = tmp_path / "plain.json", tmp_path / "marked.json"
    plain.write_bytes(body)
    marked.write_bytes(b"\xef\xbb\xbf" + body)
    assert load_corpus(marked, max_docs=10).digest == load_corpus(plain, max_docs=10).digest


def test_a_document_holding_a_lone_surrogate_is_a_corpus_error_naming_it() -> None:
    # The CLI's reader refuses such text; a library caller gets the same kind of error, not
    # the encoder's TypeError.
    with pytest.raises(CorpusError, match=r"document 'a' cannot be encoded .* lone surrogate"):
        Retriever([Document(id="a", text="x\ud800")])
