"""orjson's encoding is part of every engine's specification: frozen, and checked at load."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from rookhaven import Corpus, Document, canonical_bytes
from rookhaven.core import frozen_encoding
from rookhaven.errors import EncodingDriftError


def _as_3_11_6(value: Any, option: int) -> bytes:
    """orjson as 3.11.6 and earlier wrote floats: no '+' in a positive exponent."""
    return orjson.dumps(value, option=option).replace(b"e+", b"e")


def test_the_installed_orjson_writes_the_frozen_bytes() -> None:
    assert frozen_encoding.drift() is None
    assert frozen_encoding.numpy_drift() is None
    frozen_encoding.check()


def test_an_orjson_that_writes_numpy_floats_otherwise_than_floats_is_refused() -> None:
    def dumps(value: Any, option: int) -> bytes:
        found = orjson.dumps(value, option=option)
        return found.replace(b"e+", b"E+") if option & orjson.OPT_SERIALIZE_NUMPY else found
    where = frozen_encoding.numpy_drift(dumps)
    assert where is not None and "E+308" in where and "e+308" in where
    with pytest.raises(EncodingDriftError, match="numpy array"):
        frozen_encoding.check(dumps)


def test_an_orjson_that_writes_an_exponent_otherwise_is_refused_naming_the_fix() -> None:
    where = frozen_encoding.drift(_as_3_11_6)
    assert where is not None and "e308" in where and "e+308" in where
    with pytest.raises(EncodingDriftError, match=r"pip install 'orjson>=3\.11\.7'"):
        frozen_encoding.check(_as_3_11_6)


@pytest.mark.parametrize("change", [
    lambda b: b.replace(b"\\u0000", b"\\0"),                 # another escape
    lambda b: b.replace(b"\xe2\x80\xa8", b"\\u2028"),        # U+2028 escaped
    lambda b: b.replace(b"1000000000000000.0", b"1e+15"),    # another cut-over to exponents
    lambda b: b.replace(b'"Z":6,"a":2', b'"a":2,"Z":6'),     # another key order
])
def test_any_other_departure_is_found(change: Any) -> None:
    def dumps(value: Any, option: int) -> bytes:
        return bytes(change(orjson.dumps(value, option=option)))
    assert frozen_encoding.drift(dumps) is not None


def test_large_and_small_floats_have_their_frozen_form() -> None:
    assert canonical_bytes({"a": 1e16, "b": -2.5e300, "c": 1.5e-7, "d": 1e15}) == (
        b'{"a":1e+16,"b":-2.5e+300,"c":1.5e-7,"d":1000000000000000.0}')


def test_a_corpus_digest_with_such_floats_in_metadata_is_frozen() -> None:
    corpus = Corpus([Document(id="big", text="crane berth",
                              metadata={"tonnage": 1e16, "draft": 1.5e-7}),
                     Document(id="small", text="tide", metadata={"n": 3})])
    assert corpus.digest == (
        "sha256:48a96c329a3eb8352a2ef7d622d63a28e9f8e4ffcadafff73535e667ab145b98")
