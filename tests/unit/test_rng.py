"""The seeded generators reproduce the cross-language vectors exactly."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rookhaven.core import rng as core_rng
from rookhaven.core.compiled import AVAILABLE as COMPILED
from rookhaven.core.rng import Labels, cyrb128_labelled, cyrb128_many
from rookhaven.rng import cyrb128, cyrb128_reference, mulberry32
from tests.conftest import ROOT, SHARED

# The shared cross-language vectors, with a checked-in copy so the test never skips.
SHARED_VECTORS = SHARED / "vectors" / "rng.json"
CHECKED_IN = ROOT / "tests" / "vectors" / "rng.json"
VECTORS_PATH = SHARED_VECTORS if SHARED_VECTORS.exists() else CHECKED_IN


def _vectors() -> dict:  # type: ignore[type-arg]
    return json.loads(VECTORS_PATH.read_text(encoding="utf-8"))


def test_the_checked_in_vectors_are_the_shared_ones_when_both_exist() -> None:
    if SHARED_VECTORS.exists():
        assert json.loads(CHECKED_IN.read_text()) == json.loads(SHARED_VECTORS.read_text())


def test_every_cyrb128_vector_and_its_mulberry32_stream_reproduce_exactly() -> None:
    cases = _vectors()["strings"]
    assert cases
    for case in cases:
        hashed = cyrb128(case["input"])
        assert list(hashed) == case["cyrb128"], case["input"]
        stream = mulberry32(hashed[0])
        assert [next(stream) for _ in range(8)] == case["mulberry32_from_h0_first8"]


def test_every_mulberry32_seed_vector_reproduces_exactly() -> None:
    cases = _vectors()["mulberry32_seeds"]
    assert cases
    for case in cases:
        stream = mulberry32(case["seed"])
        assert [next(stream) for _ in range(8)] == case["first8"]


def test_cyrb128_reads_utf16_code_units_so_astral_characters_hash_as_surrogate_pairs() -> None:
    assert cyrb128("🚢") == cyrb128("\ud83d\udea2".encode("utf-16-le", "surrogatepass")
                                     .decode("utf-16-le", "surrogatepass"))
    assert cyrb128("🚢") != cyrb128("\ud83d")


def test_mulberry32_rejects_a_seed_outside_uint32() -> None:
    with pytest.raises(ValueError, match="uint32"):
        mulberry32(2**32)


def test_below_stays_in_range_and_is_seeded() -> None:
    first = [mulberry32(7).below(3) for _ in range(3)]
    stream = mulberry32(7)
    draws = [stream.below(3) for _ in range(200)]
    assert set(draws) == {0, 1, 2}
    assert first == [first[0]] * 3


@pytest.mark.skipif(not COMPILED, reason="numba is not installed: no compiled path to compare")
def test_the_compiled_cyrb128_equals_the_reference_on_the_vectors() -> None:
    for case in _vectors()["strings"]:
        assert cyrb128(case["input"]) == cyrb128_reference(case["input"])


@pytest.mark.skipif(not COMPILED, reason="numba is not installed: no compiled path to compare")
@given(st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF),
               max_size=80))
def test_the_compiled_cyrb128_equals_the_reference_on_any_string(text: str) -> None:
    assert cyrb128(text) == cyrb128_reference(text)
    assert cyrb128(text + "\ud800") == cyrb128_reference(text + "\ud800")  # a lone surrogate


_ANY_TEXT = st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF),
                    max_size=20)


@given(_ANY_TEXT, st.lists(_ANY_TEXT, max_size=6))
def test_a_batch_hashes_each_text_after_the_prefix_exactly_as_one_call_would(
        prefix: str, texts: list[str]) -> None:
    expected = [list(cyrb128_reference(prefix + t)) for t in texts]
    assert cyrb128_many(prefix, texts).tolist() == expected
    assert cyrb128_many(prefix, texts).shape == (len(texts), 4)


@given(_ANY_TEXT, st.lists(_ANY_TEXT, min_size=1, max_size=4))
def test_labels_laid_out_once_hash_as_a_batch_of_them_does(prefix: str,
                                                           texts: list[str]) -> None:
    expected = [list(cyrb128_reference(prefix + t)) for t in texts]
    assert cyrb128_labelled(prefix, Labels(*texts)).tolist() == expected


def test_the_plain_python_batch_equals_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core_rng, "_COMPILED", None)
    texts = ["", "d1", "\ud83d", "\ude00x", "🚢 ship", "doc-000123"]
    for prefix in ("", "0badc0de\x00", "\ud83d"):
        assert cyrb128_many(prefix, texts).tolist() == [
            list(cyrb128_reference(prefix + t)) for t in texts]
    assert cyrb128_many("p", []).shape == (0, 4)
    assert cyrb128_labelled("\ud83d", Labels(*texts)).tolist() == [
        list(cyrb128_reference("\ud83d" + t)) for t in texts]
