"""The vendored BPE tokenizer gives the pinned token ids, and so does the library it copies."""

from __future__ import annotations

import importlib.util
import json
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rookhaven.core.semantic.bpe import BpeTokenizer, spec_from_json
from rookhaven.embedding import wordllama_files
from rookhaven.errors import ConfigError
from tests.conftest import SHARED
from tests.tokens_support import PINNED, digest, generated_texts, shared_texts

pytestmark = pytest.mark.no_kernels
FILES = wordllama_files()
needs_model = pytest.mark.skipif(FILES is None, reason="wordllama is not installed")
needs_library = pytest.mark.skipif(importlib.util.find_spec("tokenizers") is None,
                                   reason="the tokenizers library is not installed")
PIN = json.loads(PINNED.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def vendored() -> BpeTokenizer:
    assert FILES is not None
    return BpeTokenizer(spec_from_json(json.loads(FILES[1].read_bytes())))


@pytest.fixture(scope="module")
def library() -> object:
    from tokenizers import Tokenizer
    assert FILES is not None
    return Tokenizer.from_file(str(FILES[1]))


@needs_model
def test_the_vendored_tokenizer_gives_the_pinned_ids_on_generated_text(
        vendored: BpeTokenizer) -> None:
    assert digest(generated_texts(), vendored.ids) == PIN["digests"]["generated"]
    for text, ids in PIN["examples"].items():
        assert vendored.ids(text) == ids, text


@needs_model
@pytest.mark.skipif(not (SHARED / "datasets").is_dir(), reason="../shared is not beside "
                    "the checkout: the shared collections' digests are not checked")
@pytest.mark.parametrize("name", ["cacm", "cisi", "cranfield", "npl"])
def test_the_vendored_tokenizer_gives_the_pinned_ids_on_every_shared_text(
        vendored: BpeTokenizer, name: str) -> None:
    assert digest(shared_texts(name), vendored.ids) == PIN["digests"][name]


@needs_model
@needs_library
def test_the_installed_library_still_gives_the_pinned_ids(library: object) -> None:
    """The pin is the library's output: an upgrade that changed a token shows here."""
    def ids(text: str) -> list[int]:
        return list(library.encode(text, add_special_tokens=False).ids)  # type: ignore[attr-defined]
    assert digest(generated_texts(), ids) == PIN["digests"]["generated"]
    for text, expected in PIN["examples"].items():
        assert ids(text) == expected, text


@needs_model
@needs_library
@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_vendored_and_library_agree_on_any_text(text: str) -> None:
    ours, lib = _both()
    assert ours.ids(text) == lib.encode(text, add_special_tokens=False).ids


@cache
def _both() -> tuple[BpeTokenizer, Any]:
    """Both tokenizers, made once (hypothesis calls the test without fixtures)."""
    from tokenizers import Tokenizer
    assert FILES is not None
    return (BpeTokenizer(spec_from_json(json.loads(FILES[1].read_bytes()))),
            Tokenizer.from_file(str(FILES[1])))


def _tiny(**changes: object) -> dict[str, object]:
    data: dict[str, object] = {
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
        "pre_tokenizer": None,
        "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": True,
                  "fuse_unk": True, "vocab": {"<unk>": 0, "▁": 1, "a": 2, "b": 3, "▁a": 4,
                                              "ab": 5, "▁ab": 6},
                  "merges": ["▁ a", "a b", "▁a b"]}}
    data.update(changes)
    return data


def test_merges_follow_rank_and_unknown_characters_fuse_without_byte_tokens() -> None:
    tokenizer = BpeTokenizer(spec_from_json(_tiny()))
    assert tokenizer.ids("ab") == [6]  # "▁ a" (rank 0) first, then "▁a b"
    assert tokenizer.ids("ab ab") == [6, 6]
    assert tokenizer.ids("zz a") == [1, 0, 4]  # no <0x7A>: one fused unknown


@pytest.mark.parametrize(("change", "words"), [
    ({"pre_tokenizer": {"type": "Whitespace"}}, "pre-tokenizer"),
    ({"model": {"type": "WordPiece", "vocab": {}}}, "only a BPE model"),
    ({"normalizer": {"type": "NFKC"}}, "normalizer"),
])
def test_a_tokenizer_this_code_does_not_copy_is_refused_by_name(
        change: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        spec_from_json(_tiny(**change))
