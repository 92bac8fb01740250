"""Prometheus exposition: cluster counts from the store, store-down reporting, MCP calls."""

from __future__ import annotations

import fakeredis
import pytest
import redis
from prometheus_client.parser import text_string_to_metric_families

from rookhaven import Document, RetrievalRequest
from rookhaven.config import Settings
from rookhaven.metrics import MCP_CALLS, exposition
from rookhaven.pipeline.inline import inline_pipeline
from rookhaven.store import Store
from rookhaven.verification import Selection, Verifier


def samples(text: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text.decode())
            for s in family.samples}


def test_job_result_and_verification_counts_come_from_the_store() -> None:
    client = fakeredis.FakeRedis()
    store = Store(client, "m")
    settings = Settings(engine="tfcosine@1")
    pipe = inline_pipeline(store, settings)
    pipe.add_corpus([Document(id="a", text="crane fault"), Document(id="b", text="tide")], "p")
    pipe.submit_many([RetrievalRequest(query="crane", seed=f"s{i}") for i in range(4)], "p")
    store.client.set(store.keys.result(next(store.audits.scan())[0]), b"{}")
    Verifier(store, settings).run(Selection(all=True))
    got = samples(exposition(store))
    assert got[("rookhaven_store_up", ())] == 1
    assert got[("rookhaven_job_events_total", (("event", "done"),))] == 4
    assert got[("rookhaven_job_events_total", (("event", "failed"),))] == 0
    assert got[("rookhaven_results_stored_total", ())] == 4
    assert got[("rookhaven_jobs_open", (("state", "queued"),))] == 0
    assert got[("rookhaven_verification_runs_total", ())] == 1
    assert got[("rookhaven_verification_alarms_total", ())] == 1
    assert got[("rookhaven_verified_results_total", (("outcome", "match"),))] == 3


def test_a_store_that_does_not_answer_is_reported_as_down_not_as_an_error() -> None:
    store = Store(redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2), "m")
    got = samples(exposition(store))
    assert got[("rookhaven_store_up", ())] == 0
    assert not any(name.startswith("rookhaven_job_events") for name, _ in got)


def test_mcp_calls_are_counted_by_operation_and_outcome() -> None:
    before = MCP_CALLS.labels("retrieve", "ok")._value.get()
    MCP_CALLS.labels("retrieve", "ok").inc()
    got = samples(exposition(None))
    assert got[("rookhaven_mcp_calls_total", (("operation", "retrieve"), ("outcome", "ok")))] \
        == before + 1


@pytest.mark.parametrize("variable", ["ROOKHAVEN_METRICS_PORT"])
def test_the_metrics_port_is_a_validated_setting(variable: str) -> None:
    assert Settings.from_mapping({variable: "9464"}).metrics_port == 9464
    assert Settings.from_mapping({}).metrics_port is None
