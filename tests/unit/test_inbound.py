"""The checks a worker applies to broker messages (workers.inbound): each malformed shape is
a MessageError saying what is wrong, and a message Celery's own client sends passes."""

from __future__ import annotations

import base64
from typing import Any

import orjson
import pytest

from rookhaven.errors import MessageError
from workers.inbound import check_body, check_headers, envelope

GOOD = {"body": base64.b64encode(b'[["sha256:00"], {}, {}]').decode(),
        "content-type": "application/json", "content-encoding": "utf-8",
        "headers": {"task": "rookhaven.job", "id": "x1", "timelimit": [None, None],
                    "retries": 0},
        "properties": {"delivery_tag": "t1", "body_encoding": "base64",
                       "delivery_info": {"exchange": "", "routing_key": "rookhaven"}}}


def run_job(job_id: str) -> None:
    """A task's signature, as the worker checks arguments against it."""


def test_a_message_from_celerys_own_client_passes() -> None:
    payload = envelope(orjson.dumps(GOOD))
    check_headers(payload["headers"])
    check_body("application/json", "utf-8", base64.b64decode(payload["body"]), run_job)


@pytest.mark.parametrize(("item", "says"), [
    (b"not json", "not JSON"), (b"", "not JSON"), (b"\xff\xfe", "not JSON"),
    (b"[" * 50_000 + b"]" * 50_000, "not JSON"), (b"[1,2,3]", "JSON list"),
    (b"null", "JSON NoneType"), (b"{}", "no properties"),
    (orjson.dumps({**GOOD, "properties": {}}), "no delivery tag"),
    (orjson.dumps({**GOOD, "properties": {**GOOD["properties"], "body_encoding": "rot13"}}),
     "unknown body encoding"),
    (orjson.dumps({**GOOD, "body": 42}), "body is not a string"),
    (orjson.dumps({**GOOD, "headers": ["task"]}), "headers are not an object"),
])
def test_an_envelope_kombu_cannot_use_is_refused_saying_why(item: bytes, says: str) -> None:
    with pytest.raises(MessageError, match=says):
        envelope(item)


@pytest.mark.parametrize(("change", "says"), [
    ({"timelimit": ["a", "b"]}, "timelimit"), ({"timelimit": "soon"}, "timelimit"),
    ({"timelimit": [-1, 5]}, "timelimit"), ({"timelimit": [float("inf"), None]}, "timelimit"),
    ({"retries": "many"}, "retries"), ({"retries": True}, "retries"),
    ({"task": None}, "'task' header"), ({"id": 7}, "'id' header"),
])
def test_headers_the_main_process_cannot_act_on_are_refused(change: dict[str, Any],
                                                            says: str) -> None:
    with pytest.raises(MessageError, match=says):
        check_headers({**GOOD["headers"], **change})


@pytest.mark.parametrize(("content_type", "encoding", "body", "says"), [
    ("application/x-python-serialize", "binary", b"\x80", "content type"),
    (None, "utf-8", b"[[], {}, {}]", "content type"),
    ("application/json", "rot13", b"[[], {}, {}]", "content encoding"),
    ("application/json", "utf-8", b"not json", "not JSON"),
    ("application/json", "utf-8", b'{"job": 1}', r"\[args, kwargs, options\]"),
    ("application/json", "utf-8", b"[[], {}, {}]", "cannot take"),
    ("application/json", "utf-8", b'[["a", "b"], {}, {}]', "cannot take"),
    ("application/json", "utf-8", b'[[], {"nope": 1}, {}]', "cannot take"),
])
def test_a_body_the_task_cannot_take_is_refused(content_type: str | None, encoding: str,
                                               body: bytes, says: str) -> None:
    with pytest.raises(MessageError, match=says):
        check_body(content_type, encoding, body, run_job)


# kombu's own Redis read as workers/broker.py mirrors it (kombu 5.7.0). A kombu upgrade that
# changes it fails here, so the mirror is reviewed before it can drift from what it replaces.
MIRRORED_READ = "c42518699709f2df90f55a048fe6346612ae5527e5c4a6819f2c0920dc62088f"


def test_the_kombu_read_the_broker_edge_replaces_is_the_one_it_mirrors() -> None:
    import hashlib
    import inspect

    from kombu.transport import redis as kombu_redis

    from workers import broker

    read = kombu_redis.Channel._brpop_read
    if read is broker.read:  # installed in this process: nothing left to compare
        pytest.skip("workers.broker is installed in this process")
    source = inspect.getsource(read)
    assert hashlib.sha256(source.encode()).hexdigest() == MIRRORED_READ, (
        "kombu's Channel._brpop_read changed: bring workers/broker.read in step with it, "
        "then update MIRRORED_READ")
