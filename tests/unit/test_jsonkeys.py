"""A key given twice in one JSON object is found, whatever else the JSON holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rookhaven.corpusfile import load_corpus
from rookhaven.errors import CorpusError
from rookhaven.jsonkeys import repeated_key

_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | _TEXT,
                       lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(_TEXT, inner, max_size=3), max_leaves=12)


@given(st.dictionaries(_TEXT, _VALUES, max_size=5), st.booleans())
def test_json_without_a_repeated_key_passes_however_it_is_written(
        value: dict[str, Any], ascii_only: bool) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()  # \\u escapes, spaces
    assert repeated_key(raw, orjson.loads(raw)) is None


@given(st.dictionaries(_TEXT, _VALUES, min_size=1, max_size=5), _VALUES, st.booleans())
def test_a_repeated_key_is_found_wherever_it_is(value: dict[str, Any], again: Any,
                                                ascii_only: bool) -> None:
    key = next(iter(value))
    body = json.dumps(value, ensure_ascii=ascii_only)
    raw = (body[:-1] + (", " if len(value) else "") + json.dumps(key, ensure_ascii=ascii_only)
           + ": " + json.dumps(again, ensure_ascii=ascii_only) + "}").encode()
    nested = b'{"outer": [1, ' + raw + b"]}"
    assert repeated_key(raw, orjson.loads(raw)) == key
    assert repeated_key(nested, orjson.loads(nested)) == key


def test_a_quote_written_as_an_escape_cannot_hide_a_repeat() -> None:
    raw = b'{"a": "\\u0022\\u0022", "b": 1, "b": 2}'
    assert repeated_key(raw, orjson.loads(raw)) == "b"


@pytest.mark.parametrize("body", [b'{"_id":"a","text":"crane","_id":"b"}\n',
                                  b'[{"_id":"a","text":"crane","_id":"b"}]'])
def test_a_corpus_document_with_a_key_twice_is_refused(tmp_path: Path, body: bytes) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(body)
    with pytest.raises(CorpusError, match="the key '_id' is given twice"):
        load_corpus(path, max_docs=10)


def test_a_request_line_with_a_field_twice_is_refused_naming_the_line(tmp_path: Path) -> None:
    from rookhaven.cli.requestfile import Defaults, read_requests
    from rookhaven.config import Settings
    from rookhaven.errors import InputError
    path = tmp_path / "requests.jsonl"
    path.write_text('{"query": "crane"}\n{"query": "crane", "query": "tide"}\n')
    defaults = Defaults(recall_budget=None, seed=None, decompose=True, engine="bm25@2")
    with pytest.raises(InputError, match=r"line 2: the field 'query' is given twice"):
        read_requests(path, Settings(), defaults)
