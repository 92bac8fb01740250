"""The store's command packer writes the RESP redis-py's own packers write."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis.connection import HiredisRespSerializer, PythonRespSerializer
from redis.exceptions import DataError

from rookhaven.store.wire import Packer

_ARGS = st.lists(st.one_of(st.binary(max_size=300), st.text(max_size=50),
                           st.integers(), st.floats(allow_nan=False)), max_size=40)


def _encode(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    return repr(value).encode()


@given(_ARGS)
def test_any_arguments_are_packed_as_redis_pys_packers_pack_them(args: list[Any]) -> None:
    command = ("HSET", *args)
    expected = b"".join(PythonRespSerializer(6000, _encode).pack(*command))
    assert Packer().pack(*command) == [expected]
    assert [b"".join(HiredisRespSerializer().pack(*command))] == [expected]


def test_a_two_word_command_name_is_split_and_a_large_command_is_one_piece() -> None:
    assert Packer().pack("SCRIPT LOAD", "return 1") == [
        b"*3\r\n$6\r\nSCRIPT\r\n$4\r\nLOAD\r\n$8\r\nreturn 1\r\n"]
    pairs = [x for i in range(200) for x in (f"k{i}", bytes(2400))]
    (packed,) = Packer().pack("MSETNX", *pairs)
    assert packed == b"".join(HiredisRespSerializer().pack("MSETNX", *pairs))
    assert Packer().pack(b"GET", memoryview(b"key")) == [b"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n"]


@pytest.mark.parametrize("value", [True, None, [1], {"a": 1}])
def test_a_value_redis_py_would_refuse_is_refused(value: Any) -> None:
    with pytest.raises(DataError, match="Invalid input of type"):
        Packer().pack("SET", "key", value)
