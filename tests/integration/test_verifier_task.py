"""The verifier task on a real worker against real Redis: a clean run, then an alarm."""

from __future__ import annotations

import orjson

from rookhaven.config import Settings
from rookhaven.pipeline import TASK_VERIFY, CeleryDispatcher, open_pipeline
from rookhaven.pipeline.inline import inline_pipeline
from tests.conftest import wait_until
from tests.integration.workerfarm import WorkerFarm, documents, requests


def test_the_verify_task_records_a_clean_run_then_alarms_on_tampering(
        env: dict[str, str], workers: WorkerFarm) -> None:
    settings = Settings.from_mapping(env)
    store = open_pipeline(settings).store
    history = inline_pipeline(store, settings)
    history.add_corpus(documents(), "port")
    refs = history.submit_many(requests(40), "port")
    workers.start("verifier", concurrency=1)
    producer = CeleryDispatcher(settings)

    producer.app.send_task(TASK_VERIFY, kwargs={"sample": 10, "seed": "night-1"})
    (run_id,) = wait_until(lambda: store.verifications.latest(), 60, what="a verification run")
    run = orjson.loads(store.verifications.get(run_id))
    assert (run["checked"], run["matched"], run["alarms"], run["sample_seed"]) == (
        10, 10, 0, "night-1")

    tampered = refs[0].job_id
    store.client.set(store.keys.result(tampered), b'{"hits":[],"audit":{}}')
    producer.app.send_task(TASK_VERIFY, kwargs={"sample": 40, "seed": "night-2"})
    wait_until(lambda: len(store.verifications.latest()) == 2, 60, what="a second run")
    (alert,) = store.verifications.alerts()
    assert (alert["key"], alert["outcome"]) == (tampered, "mismatch")
    assert store.verifications.counters()["verify_alarms"] == 1
    producer.close()
