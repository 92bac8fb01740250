"""The frozen canonical encoding: what orjson must write, checked once when Rookhaven loads.

Every stored, hashed or replayed byte is orjson's (``canonical``), so orjson's way of writing
a value is part of every engine's specification. Releases have changed it: orjson 3.11.6
and earlier wrote ``1e16`` where 3.11.7 and later write ``1e+16`` (a float's positive
exponent), which changes the digest of a corpus whose metadata holds such a number. The
probe below covers what can differ (floats of every magnitude, integers at the 64-bit
edges, every kind of string escape, key order, fragments); an orjson that writes any of
it otherwise is refused before it can write a stored byte (docs/adr/0038). Compiled hit lists
write a numpy array of scores (``core.hitlists``): that way must give the same bytes as a
list of the same floats, and is probed too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson

from ..errors import EncodingDriftError

# The documented floor: the first release writing exactly these bytes (pyproject.toml).
FIRST_GOOD = "3.11.7"


def _probe() -> dict[str, Any]:
    return {
        "floats": [0.0, -0.0, 1.0, -1.5, 0.1, 0.0001, 1e-05, 5e-324, 2.2250738585072014e-308,
                   1.7976931348623157e308, 1e15, 1e16, -1e16, 1.5e300, 123456789012345.6,
                   2.0**-24, 1 / 3, 9007199254740993.0, 1e21, 1e22],
        "ints": [0, -1, 2**53 + 1, 2**63 - 1, -(2**63), 2**64 - 1],
        "strings": ["\x00\x01\x08\t\n\x0b\x0c\r\x1f", "\x7f", "\"\\/", "\u2028\u2029",
                    "\u00e9\ufffd\U0001f6a2", "<>&'"],
        "keys": {"b": 1, "a": 2, "\u00e9": 3, "z": 4, "\U0001f6a2": 5, "Z": 6, "": 7, "a\x00": 8,
                 "\uffff": 9},
        "other": [True, False, None, [], {}, orjson.Fragment(b'{"f":[1]}')],
    }


_EXPECTED = (
    b'{"floats":[0.0,-0.0,1.0,-1.5,0.1,0.0001,0.00001,5e-324,2.2250738585072014e-308'
    b",1.7976931348623157e+308,1000000000000000.0,1e+16,-1e+16,1.5e+300,123456789012"
    b"345.6,5.960464477539063e-8,0.3333333333333333,9007199254740992.0,1e+21,1e+22],"
    b'"ints":[0,-1,9007199254740993,9223372036854775807,-9223372036854775808,1844674'
    b'4073709551615],"keys":{"":7,"Z":6,"a":2,"a\\u0000":8,"b":1,"z":4,"\xc3\xa9":3,'
    b'"\xef\xbf\xbf":9,"\xf0\x9f\x9a\xa2":5},"other":[true,false,null,[],{},{"f":[1]'
    b'}],"strings":["\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u001f","\x7f","\\"\\\\/",'
    b'"\xe2\x80\xa8\xe2\x80\xa9","\xc3\xa9\xef\xbf\xbd\xf0\x9f\x9a\xa2","<>&\'"]}'
)


def drift(dumps: Any = orjson.dumps) -> str | None:
    """Where ``dumps`` (orjson's, by default) departs from the frozen bytes, or None."""
    found: bytes = dumps(_probe(), option=orjson.OPT_SORT_KEYS)
    if found == _EXPECTED:
        return None
    at = next((i for i, (a, b) in enumerate(zip(found, _EXPECTED, strict=False)) if a != b),
              min(len(found), len(_EXPECTED)))
    return (f"byte {at}: writes {found[max(at - 12, 0):at + 12]!r} where the frozen "
            f"encoding has {_EXPECTED[max(at - 12, 0):at + 12]!r}")


def numpy_drift(dumps: Any = orjson.dumps) -> str | None:
    """Where ``dumps`` writes the probe's floats as a numpy array otherwise than as a list,
    or None."""
    floats = _probe()["floats"]
    listed: bytes = dumps(floats, option=0)
    found: bytes = dumps(np.array(floats, dtype=np.float64), option=orjson.OPT_SERIALIZE_NUMPY)
    return None if found == listed else f"a numpy array writes {found!r}, a list {listed!r}"


def check(dumps: Any = orjson.dumps) -> None:
    """Raise EncodingDriftError if ``dumps`` (the installed orjson's) does not write the
    frozen bytes, or writes a numpy array of floats otherwise than a list of them."""
    where = drift(dumps) or numpy_drift(dumps)
    if where is not None:
        raise EncodingDriftError(
            f"orjson {orjson.__version__} does not write Rookhaven's canonical encoding "
            f"({where}): its bytes would not replay. Install a release that does: "
            f"pip install 'orjson>={FIRST_GOOD}'")
