"""The Redis store: corpora by digest, write-once results and audits, jobs and their ledger.

Layout and rules: docs/adr/0005-job-ledger.md. Front ends open it with
``Store.from_settings(settings)``.
"""

from .connection import connect
from .jobs import StaleJob
from .keys import Keys
from .records import CorpusEntry, JobRecord, JobSpec, JobState, LedgerEvent, Violation
from .store import Store
from .urls import redact

__all__ = [
    "CorpusEntry",
    "JobRecord",
    "JobSpec",
    "JobState",
    "Keys",
    "LedgerEvent",
    "StaleJob",
    "Store",
    "Violation",
    "connect",
    "redact",
]
