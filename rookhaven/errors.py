"""The exception tree: every error Rookhaven raises on purpose is a RookhavenError.

Subclasses of InputError are the caller's to fix (bad request, bad corpus file, bad
setting); the front ends show their message as is. Everything else is an operational fault.
"""

from __future__ import annotations


def shown(value: str, width: int = 40) -> str:
    """``value`` quoted for a one-line message: newlines escaped, cut to about ``width``."""
    return repr(value[:width]) + ("..." if len(value) > width else "")


class RookhavenError(Exception):
    """Raised for any failure Rookhaven detects and can explain."""


class InputError(RookhavenError):
    """Raised when the caller supplied something unusable; the message says what to change."""


class InvalidRequestError(InputError):
    """Raised when a retrieval request breaks a limit (query length, recall budget)."""


class ConfigError(InputError):
    """Raised when a setting (environment variable or flag) has an invalid value."""


class UnknownProviderError(InputError):
    """Raised when a scoring provider name is not registered."""


class CorpusError(InputError):
    """Raised when a corpus cannot be used: unreadable, malformed, empty or too large."""


class DuplicateDocumentError(CorpusError):
    """Raised when two documents in one corpus share an id."""


class EncodingDriftError(InputError):
    """Raised when the installed orjson writes some value otherwise than Rookhaven's frozen
    canonical encoding: its bytes could not be replayed by another install."""


class ModelUnavailableError(InputError):
    """Raised when an engine needs a static embedding model (by its sha256) that this
    install does not have; the message says which package or setting provides it."""


class NotFoundError(InputError):
    """Raised when a named thing (corpus, job, result) does not exist."""


class MessageError(InputError):
    """Raised when a broker message cannot be run as any task (undecodable, impossible
    headers, arguments no task takes); the worker drops it and records why."""


class IntegrityError(RookhavenError):
    """Raised when different bytes are offered under an existing content-addressed key."""


class StoreUnavailableError(RookhavenError):
    """Raised when the store (Redis) cannot be reached or answers with an error."""


class ReplicationError(StoreUnavailableError):
    """Raised when fewer replicas than ROOKHAVEN_REDIS_MIN_REPLICAS confirm a write in time."""


class PrimaryChangedError(ReplicationError):
    """Raised when a primary written to was replaced (a failover) before its replicas
    confirmed the writes: they may be lost with it, and must be made again."""


class ToolSourceError(RookhavenError):
    """Raised when a live MCP server's tools cannot be listed: it did not answer in time,
    refused, or died."""


class LimitError(RookhavenError):
    """A client is past one of its limits (open jobs a token); it may ask again once some
    of its work is done."""


class WaitTimeoutError(RookhavenError):
    """Raised when a job is not done or failed within the time a caller chose to wait."""


class JobFailedError(RookhavenError):
    """Raised when the job behind a synchronous retrieval ended failed."""


class EngineMismatchError(RookhavenError):
    """Raised when a job's key was computed for another engine or configuration than the
    worker runs (submitter and worker on different versions)."""


class RerankError(RookhavenError):
    """Raised when a re-ranking chunk's jobs do not finish within the wait limit."""


class MerkleRangeError(InputError):
    """Raised when a Merkle tree node or proof is asked for outside the tree (an index at or
    past the size, an old size above the new one, a size that is zero or negative)."""


class MissingNodeError(RookhavenError):
    """Raised when a Merkle computation needs a complete-subtree hash the caller did not supply."""


class NoteError(InputError):
    """Raised when a signed note, checkpoint or key cannot be used; subclasses say why."""


class NoteFormatError(NoteError):
    """Raised when a signed note, checkpoint body or key string is malformed."""


class UnknownNoteKeyError(NoteError):
    """Raised when no signature on a note is by a key the caller trusts."""


class NoteSignatureError(NoteError):
    """Raised when a signature by a trusted key does not verify over the note's text."""


class MirrorError(IntegrityError):
    """Raised when the log's mirror outside Redis and the store's log disagree, or a mirror
    file is not what was written there: one of the two was changed."""


class TileFormatError(MirrorError):
    """Raised when a tile or entry bundle of a mirror is malformed (cut short, wrong size)."""
