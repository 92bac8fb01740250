"""The tamper-evidence attacks on a store on a real Redis Cluster.

``tests/unit/test_log_verify.py`` stages each attack of an attacker with full Redis write
access but not the signing key (an erasure with every index entry, a consistent rewrite for
another query, one edited byte, a log rebuilt and re-signed, a truncated log, a forged
checkpoint, an erasure of result and leaf seen through a mirror, a changed mirror) on
fakeredis, flat and with three log shards. The same test functions run here against a store
on three primaries and three replicas with the cluster's default 64 log shards, each with a
key prefix of its own: every one is caught, naming the key, as on one Redis.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from redis.cluster import RedisCluster

from rookhaven.config import Settings
from rookhaven.pipeline import Pipeline
from rookhaven.store import Store
from tests.integration.clusters import ClusterNodes, cluster
from tests.unit.test_log_verify import (  # noqa: F401 - collected here, with this pipeline
    six_results,
    test_a_log_rebuilt_and_signed_with_another_key_is_caught,
    test_a_pinned_checkpoint_with_a_forged_signature_is_refused,
    test_a_result_erased_with_every_index_entry_is_caught,
    test_a_result_rewritten_consistently_for_another_query_is_caught,
    test_a_truncated_log_is_caught,
    test_an_intact_log_and_mirror_verify_clean_and_a_changed_mirror_is_named,
    test_an_intact_log_verifies_clean_and_later_growth_is_consistent,
    test_one_edited_result_byte_is_caught_by_the_log_and_by_the_replay,
    test_with_a_mirror_an_erasure_of_result_and_leaf_names_the_key_and_no_other,
)


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterNodes]:
    yield from cluster(tmp_path_factory.mktemp("attacked-cluster"))


@pytest.fixture
def pipeline(nodes: ClusterNodes) -> Iterator[Pipeline]:
    """The unit module's six results, on the cluster store."""
    settings = Settings(redis_url=nodes.url, key_prefix=f"rh-attack-{uuid.uuid4().hex[:8]}",
                        engine="bm25@2", batch_size=10)
    store = Store.from_settings(settings)
    assert store.keys.sharded and len(store.keys.shards) == 64
    yield six_results(store, settings)
    store.close()


def test_the_attacks_above_run_on_the_cluster(pipeline: Pipeline) -> None:
    """The store under attack is the cluster's: six results spread over its primaries."""
    client = pipeline.store.client
    assert isinstance(client, RedisCluster)
    primaries = {client.get_node_from_key(pipeline.store.keys.result(key)).port
                 for key, _ in pipeline.store.audits.scan()}
    assert len(primaries) >= 2, primaries
