"""Who stored a result that fails its check: the worker whose job finished it, or nobody's job.

Every result a worker stores is stored by the script that finishes its job (store.scripts),
so a stored result whose key has no finished job was written by something else sharing the
database and key prefix: a test run, another checkout, a hand. A verdict that says so names
the cause of the alarm instead of leaving it to guesswork (ADR 0025). A finished job names
the worker that stored the first bytes; it cannot say whether they were changed since.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from ..errors import RookhavenError
from ..store import Store
from ..store.records import JobRecord
from .models import Verdict

# The alarms about bytes that are stored: who put them there is the first question.
ATTRIBUTED = frozenset({"mismatch", "wrong-key", "no-recipe"})
# What a job record that does not parse raises (JSON, text, fields, the request's model).
_UNPARSED = (ValueError, KeyError, TypeError)


def stored_by(record: JobRecord | None) -> str:
    """One sentence on who stored the result under a job's key, from its job record."""
    if record is None:
        return ("no Rookhaven job under this key stored it: another writer shares this "
                "database and key prefix (a test run, another checkout), or the job record "
                "was deleted")
    if record.state != "done":
        return (f"its job is {record.state}, not done, so no Rookhaven job stored it: another "
                "writer shares this database and key prefix")
    when = ("" if record.finished is None else
            f" at {datetime.fromtimestamp(record.finished, UTC):%Y-%m-%dT%H:%M:%SZ}")
    return f"stored by its job, finished on worker {record.worker or '(unnamed)'}{when}"


def attributed(store: Store, verdicts: Sequence[Verdict]) -> list[Verdict]:
    """``verdicts`` with each alarm about stored bytes saying who stored them (one read for
    all of them); the others, and every verdict when job records cannot be read, as given."""
    keys = [v.key for v in verdicts if v.outcome in ATTRIBUTED]
    if not keys:
        return list(verdicts)
    try:
        said = dict(zip(keys, map(stored_by, store.jobs.get_many(keys)), strict=True))
    except RookhavenError:  # an unmigrated store or a lost connection: the verdict stands
        return list(verdicts)
    except _UNPARSED:  # a record that does not parse, edited as the bytes may have been
        said = {key: _one(store, key) for key in keys}
    return [v.model_copy(update={"detail": "; ".join(filter(None, (v.detail, said[v.key])))})
            if v.outcome in ATTRIBUTED else v for v in verdicts]


def _one(store: Store, key: str) -> str:
    try:
        return stored_by(store.jobs.get_many([key])[0])
    except RookhavenError:
        return ""
    except _UNPARSED as exc:
        return f"its job record does not parse ({exc.__class__.__name__}): it was edited too"
