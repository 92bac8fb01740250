"""The transparency log written by real worker processes on a real Redis: one tree whatever
the number of writers, and no result without its leaf (or leaf without its result) after a
worker is SIGKILLed mid-batch."""

from __future__ import annotations

from collections import Counter

import pytest

from rookhaven.pipeline import Pipeline
from rookhaven.store import Store
from rookhaven.transparency import merkle
from rookhaven.transparency.leaf import Leaf, parse_leaf
from tests.conftest import wait_until
from tests.integration.workerfarm import (
    WorkerFarm,
    all_done,
    documents,
    pipeline,
    requests,
    states,
)
from tests.reference_merkle import ReferenceTree


def stored(pipe: Pipeline, digest: str) -> int:
    """Results stored over ``digest``: one ZCARD, so polling costs the workers nothing."""
    return pipe.store.audits.count(corpus=digest)


def logged(store: Store) -> list[tuple[bytes, Leaf]]:
    """Every leaf in log order, raw and parsed (each must parse)."""
    found = []
    for index, data in store.log.leaves():
        leaf = parse_leaf(data)
        assert leaf is not None, f"leaf {index} is not a leaf: {data[:80]!r}"
        found.append((data, leaf))
    return found


def assert_log_matches_results(store: Store) -> list[tuple[bytes, Leaf]]:
    """One leaf per stored result and one result per leaf, each leaf the result's bytes."""
    results = set(store.results.keys())
    leaves = logged(store)
    keys = [leaf.key for _, leaf in leaves]
    twice = [key for key, n in Counter(keys).items() if n > 1]
    assert not twice, f"{len(twice)} key(s) logged twice, e.g. {twice[:3]}"
    assert results - set(keys) == set(), "results without a leaf"
    assert set(keys) - results == set(), "leaves without a result"
    assert store.log.size() == len(results)
    held = store.client.hgetall(store.keys.shards[0].log_index)
    index = {k.decode(): int(v) for k, v in held.items()}
    assert index == {key: at for at, key in enumerate(keys)}
    sorted_keys = sorted(keys)
    by_key = dict(zip(sorted_keys, zip(store.results.get_many(sorted_keys),
                                       store.results.audit_many(sorted_keys), strict=True),
                      strict=True))
    for _, leaf in leaves:
        result, audit = by_key[leaf.key]
        assert result is not None and audit is not None
        assert leaf.matches(result, audit), f"{leaf.key}: stored bytes differ from its leaf"
    # Level 0 of the tree is the leaves' hashes, in the same order.
    assert store.log.leaf_hashes(0, len(leaves)) == b"".join(
        merkle.leaf_hash(data) for data, _ in leaves)
    return leaves


@pytest.mark.slow
def test_five_thousand_results_from_two_workers_form_one_tree_whose_every_proof_verifies(
        env: dict[str, str], workers: WorkerFarm) -> None:
    pipe = pipeline(env)
    digest = pipe.add_corpus(documents(300), "port").digest
    workers.start("w1", concurrency=1)
    workers.start("w2", concurrency=1)
    refs = pipe.submit_many(requests(5000), "port")
    ids = [r.job_id for r in refs]
    wait_until(lambda: stored(pipe, digest) >= 5000, 150, interval=0.25,
               what="5,000 results stored")
    wait_until(lambda: all_done(pipe, ids), 30, what="5,000 jobs done")
    writers = Counter(record.worker if record else None
                      for record in pipe.store.jobs.get_many(ids))
    assert len(writers) == 2, f"both workers should have stored results: {writers}"

    store = pipe.store
    leaves = assert_log_matches_results(store)
    assert {leaf.key for _, leaf in leaves} == {r.result_key for r in refs}
    assert store.log.integrate() == 5000
    root = store.log.root(5000)
    hashes = [merkle.leaf_hash(data) for data, _ in leaves]
    assert root == ReferenceTree(hashes).mth(0, 5000)
    for index, leaf_hash in enumerate(hashes):
        proof = store.log.inclusion(index, 5000)
        assert merkle.verify_inclusion(index, 5000, leaf_hash, proof, root), index


@pytest.mark.slow
def test_a_worker_killed_mid_write_leaves_every_result_with_exactly_one_matching_leaf(
        env: dict[str, str], workers: WorkerFarm) -> None:
    pipe = pipeline({**env, "ROOKHAVEN_BATCH_SIZE": "25"})
    digest = pipe.add_corpus(documents(300), "port").digest
    victim = workers.start("victim", concurrency=2)
    refs = pipe.submit_many(requests(2000, tag="kill-"), "port")
    ids = [r.job_id for r in refs]
    # Kill with a batch in flight: between two batches nothing is running (ZCARDs only, so
    # the polling costs the victim nothing).
    wait_until(lambda: stored(pipe, digest) >= 300 and pipe.store.jobs.counts()["running"] > 0,
               60, interval=0.002, what="the victim to store some results, a batch in flight")
    workers.kill(victim)
    at_kill = states(pipe, ids)
    assert at_kill.get("done", 0) < len(ids), "the victim finished everything before the kill"
    assert at_kill.get("running", 0) > 0, f"nothing was in flight at the kill: {at_kill}"

    workers.start("rescuer", concurrency=2, beat=True)
    wait_until(lambda: stored(pipe, digest) >= len(ids), 90, interval=0.25,
               what="every result after the kill")
    wait_until(lambda: all_done(pipe, ids), 60, what="every job done after the kill")

    leaves = assert_log_matches_results(pipe.store)
    assert len(leaves) == len(ids)
    assert pipe.store.log.integrate() == len(ids)
    assert pipe.store.log.root(len(ids)) == ReferenceTree(
        [merkle.leaf_hash(data) for data, _ in leaves]).mth(0, len(ids))
    assert list(pipe.store.ledger.violations()) == []
