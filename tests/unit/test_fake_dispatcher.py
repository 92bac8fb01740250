"""The shipped test dispatcher records what it is sent, checks the ledger, and fails on demand."""

from __future__ import annotations

import fakeredis
import pytest

from rookhaven.errors import RookhavenError, StoreUnavailableError
from rookhaven.pipeline import QUEUE, QUEUE_RECOVERY, RecordingDispatcher
from rookhaven.pipeline.fake import Send
from rookhaven.store import Store


def test_every_send_is_recorded_as_given_and_split_into_batches() -> None:
    fake = RecordingDispatcher()
    fake.send(["a", "b", "c"], 2)
    fake.send([], 2)
    fake.send(["d"], 4, QUEUE_RECOVERY)
    assert fake.sends == [Send(["a", "b", "c"], 2, QUEUE), Send([], 2, QUEUE),
                          Send(["d"], 4, QUEUE_RECOVERY)]
    assert fake.batches() == [["a", "b"], ["c"], ["d"]]
    assert fake.job_ids() == ["a", "b", "c", "d"]


def test_while_fail_is_set_a_send_raises_it_and_records_nothing() -> None:
    fake = RecordingDispatcher(fail=StoreUnavailableError("broker down"))
    with pytest.raises(StoreUnavailableError, match="broker down"):
        fake.send(["a"], 1)
    fake.fail = None
    fake.send(["a"], 1)
    assert fake.job_ids() == ["a"]


def test_with_a_ledger_a_job_sent_before_its_record_is_queued_is_refused() -> None:
    fake = RecordingDispatcher(ledger=Store(fakeredis.FakeRedis(), "f"))
    with pytest.raises(RookhavenError, match="job nope was sent while its record is missing"):
        fake.send(["nope"], 1)
    assert fake.sends == []
