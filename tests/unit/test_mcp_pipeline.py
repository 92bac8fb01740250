"""The MCP tools over the pipeline backend, on fakeredis: retrieve through a worker or
here, submit and read back, replay, and a Redis that is down."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import fakeredis
import orjson
import pytest
from mcp import Client

from rookhaven import Document, RetrievalRequest, canonical_bytes, retrieve
from rookhaven.config import Settings
from rookhaven.models import RetrievalResult
from rookhaven.pipeline import Pipeline
from rookhaven.server import build_server
from rookhaven.server.pipeline import PipelineBackend
from rookhaven.store import Store, connect
from rookhaven.transparency import checkpoints, merkle
from rookhaven.transparency.leaf import parse_leaf
from rookhaven.transparency.note import generate_key, verify_checkpoint
from tests.conftest import free_port
from tests.mcp_support import error_text, fake_store, ok, pipeline_backend, worker, write_corpus
from tests.results_support import forget_job

pytestmark = pytest.mark.anyio

# A well-formed key nothing is stored under.
MISSING = "sha256:" + "0" * 64

DOCS = [Document(id=f"d{i}", text=f"crane {i} berth {i % 4} tide {i % 3} delay")
        for i in range(30)]
QUERY = {"query": "crane delay and tide", "recallBudget": 4, "seed": "s1"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def settings() -> Settings:
    return Settings(redis_url="redis://unused")


@pytest.fixture
def file_settings(tmp_path: Path) -> Settings:
    """Redis and ROOKHAVEN_CORPUS_PATH both set: the file is the default corpus."""
    return Settings(corpus_path=write_corpus(tmp_path), redis_url="redis://unused")


@pytest.fixture
def store() -> Iterator[Store]:
    yield from fake_store()


@pytest.fixture
def backend(store: Store, settings: Settings) -> PipelineBackend:
    return pipeline_backend(store, settings, DOCS)


@pytest.fixture
async def client(settings: Settings, backend: PipelineBackend) -> AsyncIterator[Client]:
    async with Client(build_server(settings, backend=backend)) as connected:
        yield connected


def expected_bytes() -> bytes:
    request = RetrievalRequest(query=QUERY["query"], recallBudget=4, seed="s1")
    return canonical_bytes(retrieve(request, DOCS, Settings().engine))


def served_bytes(out: dict[str, Any]) -> bytes:
    return canonical_bytes(RetrievalResult.model_validate({"hits": out["hits"],
                                                           "audit": out["audit"]}))


async def test_without_a_live_worker_retrieve_ranks_here_and_stores_what_it_served(
        client: Client, backend: PipelineBackend, store: Store) -> None:
    out = ok(await client.call_tool("retrieve", QUERY))
    assert out["metadata"]["mode"] == "inline"
    assert "no live worker" in out["metadata"]["reason"]
    assert served_bytes(out) == expected_bytes()
    assert backend.pipeline.dispatcher.job_ids() == []  # type: ignore[attr-defined]
    # Served, so stored, logged and replayable like a worker's result.
    key = out["result_key"]
    assert store.results.get(key) == expected_bytes()
    assert ok(await client.call_tool("get_job", {"jobId": key}))["state"] == "done"
    assert ok(await client.call_tool("verify_result", {"resultKey": key}))["outcome"] == "match"
    assert store.log.size() == 1
    again = ok(await client.call_tool("retrieve", QUERY))
    assert again["metadata"]["reason"] == "result already stored"
    assert again["result_key"] == key and store.log.size() == 1


async def test_a_job_recorded_earlier_and_left_queued_is_run_here_when_no_worker_lives(
        client: Client, backend: PipelineBackend, store: Store) -> None:
    digest = store.corpora.resolve("latest")
    request = RetrievalRequest(query=QUERY["query"], recallBudget=4, seed="s1")
    spec = backend.pipeline.spec(request, digest)
    store.jobs.create(spec)  # recorded and queued, for a worker that never took it
    assert store.jobs.get(spec.key).state == "queued"
    out = ok(await client.call_tool("retrieve", QUERY))
    assert out["metadata"]["mode"] == "inline" and served_bytes(out) == expected_bytes()
    assert store.jobs.get(out["result_key"]).state == "done"


async def test_with_a_live_worker_retrieve_goes_through_the_pipeline(
        client: Client, store: Store) -> None:
    store.heartbeats.beat("w1", 60)
    first = ok(await client.call_tool("retrieve", QUERY))
    assert first["metadata"] == first["metadata"] | {"mode": "pipeline",
                                                     "reason": "a worker ranked it"}
    assert served_bytes(first) == expected_bytes()
    again = ok(await client.call_tool("retrieve", QUERY))
    assert again["metadata"]["reason"] == "result already stored"
    assert served_bytes(again) == served_bytes(first) and again["result_key"] == first["result_key"]


async def test_inline_and_pipeline_answers_share_key_and_bytes(
        client: Client, store: Store) -> None:
    here = ok(await client.call_tool("retrieve", QUERY))
    store.heartbeats.beat("w1", 60)
    there = ok(await client.call_tool("retrieve", QUERY))
    assert here["metadata"]["mode"] == "inline" and there["metadata"]["mode"] == "pipeline"
    assert here["result_key"] == there["result_key"] and served_bytes(here) == served_bytes(there)


async def test_submit_get_job_result_audit_and_verify(client: Client) -> None:
    job = ok(await client.call_tool("submit_retrieval", QUERY | {"corpus": "port"}))
    assert job["job_id"] == job["result_key"]
    state = ok(await client.call_tool("get_job", {"jobId": job["job_id"]}))
    assert state["state"] == "done" and state["attempts"] == 1 and state["error"] is None
    stored = ok(await client.call_tool("get_result", {"resultKey": job["result_key"]}))
    assert served_bytes(stored) == expected_bytes()
    audit = ok(await client.call_tool("get_audit", {"resultKey": job["result_key"]}))
    assert audit["audit"] == stored["audit"]
    verdict = ok(await client.call_tool("verify_result", {"resultKey": job["result_key"]}))
    assert verdict | {"match": True, "outcome": "match", "alarm": False} == verdict


async def test_submit_retrieval_says_when_the_job_was_created_and_updated_like_get_job(
        client: Client, store: Store) -> None:
    before = store.now()
    job = ok(await client.call_tool("submit_retrieval", QUERY | {"corpus": "port"}))
    assert isinstance(job["created_at"], float) and isinstance(job["updated_at"], float)
    assert before - 1 <= job["created_at"] <= job["updated_at"] <= store.now() + 1
    assert job == ok(await client.call_tool("get_job", {"jobId": job["job_id"]}))
    again = ok(await client.call_tool("submit_retrieval", QUERY | {"corpus": "port"}))
    assert again["created_at"] == job["created_at"] and again["state"] == "done"


async def test_submit_retrieval_of_a_stored_result_whose_record_is_gone_still_answers(
        client: Client, store: Store) -> None:
    job = ok(await client.call_tool("submit_retrieval", QUERY | {"corpus": "port"}))
    forget_job(store, job["job_id"])
    again = ok(await client.call_tool("submit_retrieval", QUERY | {"corpus": "port"}))
    assert again["state"] == "done" and again["job_id"] == job["job_id"]


async def test_get_result_and_get_audit_carry_the_inclusion_proof_once_a_checkpoint_covers_it(
        client: Client, store: Store) -> None:
    key = ok(await client.call_tool("submit_retrieval", QUERY))["result_key"]
    before = ok(await client.call_tool("get_result", {"resultKey": key}))
    assert before["proof"] is None  # no checkpoint signed yet
    private, verifier = generate_key("rookhaven.test/log", bytes(32))
    checkpoints.sign_now(store, private)
    stored = ok(await client.call_tool("get_result", {"resultKey": key}))
    audit = ok(await client.call_tool("get_audit", {"resultKey": key}))
    proof = stored["proof"]
    assert proof == audit["proof"] and proof["tree_size"] == store.log.size()
    checkpoint = verify_checkpoint(proof["checkpoint"], verifier)
    leaf = proof["leaf"].encode()
    assert parse_leaf(leaf) is not None and parse_leaf(leaf).key == key  # type: ignore[union-attr]
    assert merkle.verify_inclusion(proof["leaf_index"], checkpoint.size, merkle.leaf_hash(leaf),
                                   [base64.b64decode(p) for p in proof["proof"]],
                                   checkpoint.root)
    assert proof["shard"] == 0


async def test_a_proof_from_a_sharded_log_names_its_shard_and_the_set_signs_that_tree(
        settings: Settings) -> None:
    client = fakeredis.FakeRedis()
    store = Store(client, "mcp-shards", log_shards=4)
    backend = pipeline_backend(store, settings, DOCS)
    async with Client(build_server(settings, backend=backend)) as connected:
        key = ok(await connected.call_tool("submit_retrieval", QUERY))["result_key"]
        private, verifier = generate_key("rookhaven.test/log", bytes(32))
        checkpoints.sign_now(store, private)
        proof = ok(await connected.call_tool("get_result", {"resultKey": key}))["proof"]
    assert proof["shard"] == store.keys.shard_of(key)
    tree = checkpoints.checked(proof["checkpoint"], verifier).trees[proof["shard"]]
    assert (proof["tree_size"], base64.b64decode(proof["root"])) == (tree.size, tree.root)
    assert merkle.verify_inclusion(proof["leaf_index"], tree.size,
                                   merkle.leaf_hash(proof["leaf"].encode()),
                                   [base64.b64decode(p) for p in proof["proof"]], tree.root)
    client.close()


async def verify_after_tampering(client: Client, store: Store,
                                 edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Submit QUERY, edit its stored result bytes with ``edit``, and verify it."""
    key = ok(await client.call_tool("submit_retrieval", QUERY))["result_key"]
    redis_key = store.keys.result(key)
    tampered = orjson.loads(store.client.get(redis_key))
    edit(tampered)
    store.client.set(redis_key, canonical_bytes(tampered))
    return ok(await client.call_tool("verify_result", {"resultKey": key}))


async def test_verify_names_the_first_difference_of_tampered_bytes(
        client: Client, store: Store) -> None:
    def rename_first_hit(result: dict[str, Any]) -> None:
        result["hits"][0]["id"] = "d999"

    verdict = await verify_after_tampering(client, store, rename_first_hit)
    assert verdict | {"match": False, "outcome": "mismatch", "alarm": True,
                      "where": "hits[0].id"} == verdict
    assert "stored by its job, finished on worker " in verdict["detail"], verdict["detail"]


async def test_verify_catches_an_audit_edited_to_name_another_engine(
        client: Client, store: Store) -> None:
    def age_the_engine(result: dict[str, Any]) -> None:
        result["audit"]["engine"]["version"] = "0.0"

    verdict = await verify_after_tampering(client, store, age_the_engine)
    assert verdict["outcome"] == "unreplayable" and verdict["alarm"] is True, verdict


async def test_without_a_file_the_default_is_the_store_latest_corpus(
        client: Client, backend: PipelineBackend) -> None:
    out = ok(await client.call_tool("list_corpora", {}))
    assert out["pipeline"] is True
    assert [(c["name"], c["default"]) for c in out["corpora"]] == [("port@1", True)]
    backend.pipeline.add_corpus(DOCS[:10], "other")  # latest moves to whatever came last
    out = ok(await client.call_tool("list_corpora", {}))
    assert {c["name"]: c["default"] for c in out["corpora"]} == {"port@1": False,
                                                                 "other@1": True}


async def test_a_set_corpus_path_wins_over_the_store_latest_corpus(
        file_settings: Settings, store: Store) -> None:
    pipe = Pipeline(store, worker(store, file_settings), file_settings)
    pipe.add_corpus(DOCS, "port")  # stored after nothing: the store's latest
    async with Client(build_server(file_settings,
                                   backend=PipelineBackend(pipe, file_settings))) as c:
        listed = ok(await c.call_tool("list_corpora", {}))["corpora"]
        assert {c["name"]: c["default"] for c in listed} == {"port@1": False, "port": True}
        file_entry = next(c for c in listed if c["source"].endswith("port.jsonl"))
        # Not in the store: ranked from the file here, and a job is refused saying what to do.
        out = ok(await c.call_tool("retrieve", {"query": "crane"}))
        assert out["metadata"]["mode"] == "inline"
        assert "ROOKHAVEN_CORPUS_PATH" in out["metadata"]["reason"]
        assert out["audit"]["corpus_digest"] == file_entry["digest"]
        refused = error_text(await c.call_tool("submit_retrieval", {"query": "crane"}))
        assert "ROOKHAVEN_CORPUS_PATH" in refused and "rookhaven corpus add" in refused
        # Once its content is stored, the file's digest goes through the pipeline, though
        # another corpus was added after it.
        pipe.add_corpus(file_settings.load_corpus(file_settings.corpus_path or Path()), "filed")
        pipe.add_corpus(DOCS[:10], "newer")
        store.heartbeats.beat("w1", 60)
        out = ok(await c.call_tool("retrieve", {"query": "crane"}))
        assert out["metadata"]["mode"] == "pipeline"
        assert out["audit"]["corpus_digest"] == file_entry["digest"]
        job = ok(await c.call_tool("submit_retrieval", {"query": "crane tide"}))
        assert job["state"] == "done"


@pytest.mark.parametrize(("tool", "arguments", "says"), [
    ("get_job", {"jobId": MISSING}, MISSING),
    ("get_result", {"resultKey": MISSING}, f"no result stored under '{MISSING}'"),
    ("get_audit", {"resultKey": MISSING}, "no audit stored"),
    ("verify_result", {"resultKey": MISSING}, f"no result stored under '{MISSING}'"),
    ("retrieve", {"query": "crane", "corpus": "atlantis"}, "no corpus named 'atlantis'"),
])
async def test_unknown_things_are_tool_errors(
        client: Client, tool: str, arguments: dict[str, Any], says: str) -> None:
    assert says in error_text(await client.call_tool(tool, arguments))


@pytest.fixture
def down(settings: Settings) -> Iterator[PipelineBackend]:
    client = connect(f"redis://127.0.0.1:{free_port()}/0", timeout=0.5)
    store = Store(client, "mcp")
    yield PipelineBackend(Pipeline(store, worker(store, settings), settings), settings)
    client.close()


@pytest.mark.parametrize(("tool", "arguments"), [
    ("retrieve", {"query": "crane", "corpus": "port@1"}),
    ("submit_retrieval", {"query": "crane"}),
    ("get_job", {"jobId": MISSING}),
    ("get_result", {"resultKey": MISSING}),
    ("list_corpora", {}),
])
async def test_redis_down_is_a_tool_error_and_the_server_keeps_serving(
        settings: Settings, down: PipelineBackend, tool: str, arguments: dict[str, Any]) -> None:
    async with Client(build_server(settings, backend=down)) as c:
        assert "store unavailable" in error_text(await c.call_tool(tool, arguments))
        assert "store unavailable" in error_text(await c.call_tool(tool, arguments))


async def test_verify_of_an_erased_result_is_an_alarm_and_of_a_key_never_stored_an_error(
        client: Client, store: Store) -> None:
    job = ok(await client.call_tool("submit_retrieval", QUERY | {"corpus": "port"}))
    key = job["result_key"]
    # Erased with its job record: its log leaf remains, so it is an erasure, not a typo.
    forget_job(store, key)
    store.client.delete(store.keys.result(key), store.keys.audit(key))
    verdict = ok(await client.call_tool("verify_result", {"resultKey": key}))
    assert (verdict["outcome"], verdict["alarm"]) == ("missing-result", True)
    assert "no result stored" in error_text(
        await client.call_tool("verify_result", {"resultKey": MISSING}))
    refused = error_text(await client.call_tool("start_verification", {"keys": [MISSING]}))
    assert f"nothing was ever stored under {MISSING}" in refused


async def test_a_sample_seed_longer_than_the_seed_limit_is_refused(
        client: Client, settings: Settings) -> None:
    seed = "s" * (settings.max_seed_len + 1)
    refused = error_text(await client.call_tool("start_verification", {"seed": seed}))
    assert "ROOKHAVEN_MAX_SEED_LEN" in refused or "at most" in refused
