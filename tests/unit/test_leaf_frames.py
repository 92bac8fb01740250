"""A leaf joined from its chunk's frame is the leaf ``Leaf`` encodes."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from rookhaven.transparency.leaf import Leaf, LeafFrame

# Digests, names and times hold no NUL (the frame's stand-ins begin with one).
_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                max_size=30)


@given(key=_TEXT, result=st.binary(max_size=300), audit=st.binary(max_size=300),
       corpus=_TEXT, stored=_TEXT,
       engine=st.dictionaries(_TEXT, _TEXT | st.integers(-2**63, 2**63 - 1), max_size=3))
def test_a_framed_leaf_is_the_encoded_leaf(key: str, result: bytes, audit: bytes, corpus: str,
                                           stored: str, engine: dict[str, object]) -> None:
    expected = Leaf(key=key, result_sha256=hashlib.sha256(result).hexdigest(),
                    audit_sha256=hashlib.sha256(audit).hexdigest(), corpus=corpus,
                    engine=engine, stored=stored).encode()
    assert LeafFrame(corpus, engine, stored).encode(key, result, audit) == expected
