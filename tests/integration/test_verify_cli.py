"""``rookhaven verify`` against a real Redis: clean exits 0; one tampered byte exits 1 naming
the key and the field; an engine this install lacks alarms; a deleted corpus alarms."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import orjson
import pytest

from rookhaven import Document, RetrievalRequest, Retriever, TfCosineProvider, canonical_bytes
from rookhaven.config import Settings
from rookhaven.pipeline import Executor, Pipeline, RecordingDispatcher
from rookhaven.store import Store

DOCS = [Document(id=f"d{i:03d}", text=f"crane {i % 7} berth {i % 5} tide {i % 3} reefer delay")
        for i in range(60)]


@pytest.fixture
def env(redis_url: str, key_prefix: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ROOKHAVEN_")}
    return {**clean, "ROOKHAVEN_REDIS_URL": redis_url, "ROOKHAVEN_KEY_PREFIX": key_prefix,
            "ROOKHAVEN_ENGINE": "tfcosine"}


@pytest.fixture
def pipeline(env: dict[str, str]) -> Iterator[Pipeline]:
    settings = Settings.from_mapping(env)
    store = Store.from_settings(settings)
    pipe = Pipeline(store, RecordingDispatcher(ledger=store), settings)
    pipe.add_corpus(DOCS, "port")
    refs = pipe.submit_many([RetrievalRequest(query=f"crane {i % 7} and tide {i % 3}",
                                              seed=f"s{i}") for i in range(25)], "port")
    Executor(store, settings).run([r.job_id for r in refs], "test")
    yield pipe
    store.close()


def verify(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rookhaven.cli.main", "verify", *args],
                          capture_output=True, text=True, env=env, timeout=120, check=False)


def test_an_untouched_store_verifies_clean_and_exits_0(
        pipeline: Pipeline, env: dict[str, str]) -> None:
    done = verify(env, "--all")
    assert done.returncode == 0, done.stderr
    assert "25 checked, 25 matched, 0 mismatched" in done.stdout


def test_one_tampered_byte_exits_1_and_names_the_key_and_field(
        pipeline: Pipeline, env: dict[str, str]) -> None:
    key = next(pipeline.store.audits.scan())[0]
    redis_key = pipeline.store.keys.result(key)
    data = pipeline.store.client.get(redis_key)
    at = data.index(b'"rank":2')
    pipeline.store.client.set(redis_key, data[:at] + b'"rank":3' + data[at + 8:])
    done = verify(env, "--all")
    assert done.returncode == 1
    assert "1 alarm" in done.stdout
    assert "ALARM mismatch" in done.stdout and key in done.stdout
    assert "hits[1].rank" in done.stdout
    record = orjson.loads(verify(env, "--key", key, "--json").stdout)
    assert record["verdicts"][0]["where"] == "hits[1].rank"


def test_a_result_of_an_engine_this_install_lacks_exits_1_naming_the_engine(
        pipeline: Pipeline, env: dict[str, str]) -> None:
    request = RetrievalRequest(query="reefer delay", seed="legacy")
    digest = pipeline.store.corpora.resolve("port")
    spec = pipeline.spec(request, digest, "tfcosine")
    pipeline.store.jobs.create(spec)
    old = Retriever(DOCS, TfCosineProvider(version="0")).retrieve(request)
    pipeline.store.results.put(spec.key, digest, canonical_bytes(old), canonical_bytes(old.audit))
    done = verify(env, "--key", spec.key)
    assert done.returncode == 1, done.stdout
    assert "ALARM unreplayable" in done.stdout and "engine tfcosine@0" in done.stdout


def test_a_deleted_corpus_is_an_alarm(pipeline: Pipeline, env: dict[str, str]) -> None:
    digest = pipeline.store.corpora.resolve("port")
    pipeline.store.client.delete(pipeline.store.keys.corpus_meta(digest))
    done = verify(env, "--sample", "5", "--seed", "n1")
    assert done.returncode == 1
    assert "ALARM missing-corpus" in done.stdout
    assert "sample seed 'n1'" in done.stdout


def test_a_key_never_stored_is_bad_input_not_an_alarm(
        pipeline: Pipeline, env: dict[str, str]) -> None:
    never = "sha256:" + "0" * 64
    done = verify(env, "--key", never)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert f"nothing was ever stored under {never}" in line
    assert pipeline.store.verifications.alerts(5) == []
    assert "verify_alarms" not in pipeline.store.verifications.counters()
    # An erased result keeps its log leaf: that is an alarm, exit 1.
    key = next(pipeline.store.audits.scan())[0]
    pipeline.store.client.delete(pipeline.store.keys.result(key), pipeline.store.keys.audit(key))
    erased = verify(env, "--key", key)
    assert erased.returncode == 1 and "ALARM missing-result" in erased.stdout


def test_a_sample_seed_over_the_seed_limit_exits_2(
        pipeline: Pipeline, env: dict[str, str]) -> None:
    done = verify({**env, "ROOKHAVEN_MAX_SEED_LEN": "16"}, "--sample", "2", "--seed", "s" * 17)
    assert done.returncode == 2 and "ROOKHAVEN_MAX_SEED_LEN" in done.stderr
    assert pipeline.store.verifications.latest(5) == []
