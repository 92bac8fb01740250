"""Corpus files: both formats load; every bad input is one line naming file, place and problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from rookhaven.corpusfile import load_documents
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
