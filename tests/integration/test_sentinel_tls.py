"""High availability over TLS: a Sentinel service whose every process listens on TLS only.

A primary, a replica and three Sentinels (``tests/integration/sentinels.py`` with a CA and a
server certificate of the test's own), replicating and monitoring over TLS. The store, a
real Celery worker (kombu's Sentinel transport), the submitter and the CLI reach them
through one ``sentinels://...?ssl_ca_certs=CA`` URL, with ``ROOKHAVEN_REDIS_MIN_REPLICAS=1``
so every acknowledgement waits for the replica over TLS; the primary is then SIGKILLed and
the same processes carry on through the promoted replica.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from rookhaven import Retriever, canonical_bytes
from tests.conftest import ROOT, wait_until
from tests.integration.sentinels import SentinelTopology, submitted, topology
from tests.integration.tls import certificates
from tests.integration.workerfarm import (
    WorkerFarm,
    all_done,
    documents,
    environment,
    farm,
    pipeline,
    requests,
)


@pytest.fixture
def nodes(tmp_path: Path) -> Iterator[SentinelTopology]:
    yield from topology(tmp_path / "redis", certificates(tmp_path / "tls"))


@pytest.fixture
def env(nodes: SentinelTopology) -> dict[str, str]:
    return environment(nodes.url, "rh-tls", ROOKHAVEN_BATCH_SIZE="4",
                       ROOKHAVEN_REDIS_MIN_REPLICAS="1", ROOKHAVEN_REDIS_REPLICA_TIMEOUT="1")


@pytest.fixture
def workers(env: dict[str, str], tmp_path: Path) -> Iterator[WorkerFarm]:
    (tmp_path / "logs").mkdir()
    yield from farm(env, tmp_path / "logs")


@pytest.mark.slow
def test_the_pipeline_runs_on_a_tls_only_sentinel_service_through_a_failover(
        nodes: SentinelTopology, env: dict[str, str], workers: WorkerFarm,
        tmp_path: Path) -> None:
    primary = nodes.ports["primary"]
    # TLS is really in force: no plaintext, and no certificate from another CA.
    with pytest.raises(redis.ConnectionError):
        redis.Redis(port=primary, socket_connect_timeout=2, socket_timeout=2).ping()
    stranger = certificates(tmp_path / "other-ca")
    with pytest.raises(redis.ConnectionError):
        redis.Redis(port=primary, socket_connect_timeout=2, socket_timeout=2,
                    **stranger.client_kwargs()).ping()  # type: ignore[arg-type]

    pipe = pipeline(env)
    docs = documents(300)
    pipe.add_corpus(docs, "port")
    workers.start("w1", concurrency=1)
    first, later = requests(40), requests(20, tag="after-")
    ids = [r.job_id for r in pipe.submit_many(first, "port")]
    wait_until(lambda: all_done(pipe, ids), 120, what="40 jobs done over TLS")

    nodes.kill("primary")
    wait_until(lambda: nodes.primary_port() not in (None, primary), 60,
               what="the Sentinels to promote the replica over TLS")
    nodes.restart("primary")  # MIN_REPLICAS=1: acknowledgements need a replica again
    wait_until(lambda: nodes.replica_of_primary("primary"), 60,
               what="the returned host to replicate the new primary over TLS")
    more = wait_until(lambda: submitted(pipe, later), 60, what="a submission after failover")
    everything = ids + [r.job_id for r in more]
    wait_until(lambda: all_done(pipe, everything), 120,
               what=f"all {len(everything)} jobs done after the failover")

    inline = Retriever(docs, pipe.settings.engine)
    for request, job_id in zip(first + later, everything, strict=True):
        assert pipe.result(job_id) == canonical_bytes(inline.retrieve(request))
    verify = subprocess.run(
        [sys.executable, "-m", "rookhaven.cli.main", "verify", "--all", "--json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert verify.returncode == 0, verify.stderr[-2000:]
    run = json.loads(verify.stdout)
    assert run["checked"] == len(everything) and run["matched"] == len(everything)
