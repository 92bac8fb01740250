"""The engine registry: released versions by name@version, each rebuildable from its audit."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rookhaven import Document, RetrievalRequest, Retriever
from rookhaven.core.engines import (
    BY_REF,
    ENGINES,
    engine_of,
    engine_spec,
    make_provider,
    stored_engine,
)
from rookhaven.core.identity import engine_identity
from rookhaven.errors import ConfigError, UnknownProviderError

DOCS = [Document(id="a", text="crane faults at berth 7"), Document(id="b", text="tide windows")]


def test_a_bare_name_is_its_default_version_and_a_stored_bare_name_its_first() -> None:
    # bm25@3 and bm25@4 are previews: bm25@6 is what a bare name means (ADR 0024, 0040).
    assert engine_spec("bm25").ref == "bm25@6"
    assert engine_spec("bm25@4").ref == "bm25@4"
    assert engine_spec("bm25@1").ref == "bm25@1"
    assert engine_spec("bm25@3").ref == "bm25@3"
    assert stored_engine("bm25").ref == "bm25@1"  # records before versions meant bm25@1
    assert stored_engine("bm25@2").ref == "bm25@2"
    with pytest.raises(UnknownProviderError,
                       match="choose one of: tfcosine@1, bm25@1, bm25@2, bm25@3, bm25@4, "
                             "bm25@5, bm25@6"):
        engine_spec("bm25@7")


def test_each_engine_records_the_label_its_audits_name() -> None:
    for spec in ENGINES:
        provider = spec.build()
        assert engine_identity(provider).engine == spec.label
        assert engine_of(spec.label.model_dump()) is spec
    assert engine_of({"name": "bm25", "version": "9.9"}) is None
    assert len({s.label for s in ENGINES}) == len(ENGINES)


def test_the_first_bm25_records_the_config_it_always_did_and_the_second_its_pins() -> None:
    v1 = make_provider("bm25@1").config()
    v2 = make_provider("bm25@2").config()
    assert "unicode" not in v1["analyzer"] and "parameters" not in v1
    assert v2["analyzer"]["unicode"] == "14.0.0"
    assert v2["analyzer"]["stemmer_algorithm"] == "snowball-english@3.1.0"
    assert v2["parameters"]["k1"] == 1.2
    request = RetrievalRequest(query="crane faults", seed="s")
    one = Retriever(DOCS, "bm25@1").retrieve(request)
    two = Retriever(DOCS, "bm25@2").retrieve(request)
    assert [h.id for h in one.hits] == [h.id for h in two.hits]
    assert one.audit.config_digest != two.audit.config_digest


def test_unknown_parameters_name_the_engine_and_what_it_accepts() -> None:
    with pytest.raises(ConfigError, match=r"bm25@2 has no parameter\(s\) k3; it accepts "
                                          "stopwords, stemmer, k1, b"):
        make_provider("bm25@2", k3=1)


_BM25 = st.fixed_dictionaries({}, optional={
    "k1": st.sampled_from([0.9, 1.2, 1.5]), "b": st.sampled_from([0.3, 0.75, 1.0]),
    "prefix_weight": st.floats(0, 1), "coverage": st.floats(0, 1),
    "synonym_weight": st.floats(0, 1), "prefix_min_len": st.integers(1, 6),
    "prefix_max_terms": st.integers(0, 80), "stemmer": st.sampled_from(["none", "english"]),
    "stopwords": st.sampled_from(["none", "english-v1"]),
    "field_weights": st.sampled_from([{"title": 2.0}, {"title": 1.5, "text": 0.5}]),
})


@given(params=_BM25, synonyms=st.booleans(),
       ref=st.sampled_from(["bm25@1", "bm25@2", "bm25@3", "bm25@4"]))
def test_an_audit_alone_rebuilds_the_engine_that_made_it(params: dict[str, object],
                                                         synonyms: bool, ref: str) -> None:
    if synonyms:
        params = {**params, "synonyms": {"quay": ["berth", "wharf"]}}
    if ref == "bm25@4":
        params = {**params, "identifiers": "none", "fb_min_length": 7, "fb_max_gap": 1.5}
    spec = BY_REF[ref]
    identity = engine_identity(spec.build(**params))
    rebuilt = spec.params_from_config(identity.config)
    if rebuilt is None:  # bm25@1 kept only a digest of the synonyms
        assert ref == "bm25@1" and synonyms
        return
    assert engine_identity(spec.build(**rebuilt)).config_digest == identity.config_digest


def test_tfcosine_rebuilds_from_its_config_too() -> None:
    spec = BY_REF["tfcosine@1"]
    identity = engine_identity(spec.build(stemmer="english"))
    rebuilt = spec.params_from_config(identity.config)
    assert rebuilt is not None
    assert engine_identity(spec.build(**rebuilt)).config_digest == identity.config_digest
