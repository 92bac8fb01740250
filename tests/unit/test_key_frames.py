"""Keys and job records made from frames are the bytes their definitions give."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rookhaven.core.canonical import canonical_bytes, sha256_digest, to_plain
from rookhaven.core.engines import make_provider
from rookhaven.core.identity import engine_identity, key_frame, open_last, result_key
from rookhaven.models import RetrievalRequest
from rookhaven.store.jobs import recipe_frame, spec_bytes
from rookhaven.store.records import JobSpec

_REQUESTS = st.builds(
    RetrievalRequest,
    query=st.text(min_size=1, max_size=80).filter(lambda q: q.strip() != ""),
    recallBudget=st.integers(1, 10_000), seed=st.text(max_size=40), decompose=st.booleans())
_DIGEST = st.text(max_size=20).map(lambda t: "sha256:" + t)


@pytest.mark.parametrize("engine", ["bm25@6", "bm25@3", "tfcosine@1"])
@given(request=_REQUESTS, corpus=_DIGEST)
def test_a_framed_key_is_the_hash_of_the_whole_canonical_recipe(
        engine: str, request: RetrievalRequest, corpus: str) -> None:
    identity = engine_identity(make_provider(engine))
    defined = sha256_digest(canonical_bytes({
        "request": to_plain(request), "corpus_digest": corpus,
        "engine": identity.engine_data, "config_digest": identity.config_digest}))
    framed = key_frame(corpus, identity).key(canonical_bytes(to_plain(request)))
    assert framed == defined == result_key(request, corpus, identity)


@given(request=_REQUESTS, corpus=_DIGEST, provider=st.text(max_size=12),
       params=st.dictionaries(st.text(max_size=8), st.integers(-2**63, 2**63 - 1) | st.floats(
           allow_nan=False, allow_infinity=False) | st.text(max_size=8), max_size=4))
def test_a_framed_record_is_the_canonical_spec(request: RetrievalRequest, corpus: str,
                                               provider: str, params: dict[str, Any]) -> None:
    spec = JobSpec(key="k", request=request, corpus_digest=corpus, provider=provider,
                   params=params)
    defined = canonical_bytes({"corpus": corpus, "params": params, "provider": provider,
                               "request": to_plain(request)})
    assert spec_bytes(spec) == defined
    assert recipe_frame(corpus, provider, params) + canonical_bytes(
        to_plain(request)) + b"}" == defined


def test_only_a_mapping_whose_last_key_holds_none_is_opened() -> None:
    assert open_last(b'{"a":1,"z":null}') == b'{"a":1,"z":'
    with pytest.raises(ValueError):
        open_last(b'{"a":null,"z":1}')
