"""Settings: every ROOKHAVEN_* variable, its default and unit, parsed from a mapping once.

Each default is written once, on ``Settings``; ``SPECS`` says how each is read and what it
means (docs/configuration.md's table is checked against it). Precedence is flag > environment >
default, decided in ``Settings.with_overrides`` alone. Tests pass a dict, never touch
``os.environ``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .core.corpus import Corpus, DocumentLimits
from .core.engines import engine_spec
from .corpusfile import FileLimits, load_corpus
from .errors import ConfigError, InvalidRequestError, shown
from .models import DEFAULT_RECALL, DEFAULT_SEED, RetrievalRequest
from .settingvalues import (
    HOUR,
    PORT_MAX,
    WEEK,
    check_utf8,
    choice,
    clock_time,
    engine,
    is_utf8,
    key_prefix,
    per_second,
    seconds,
    text,
    whole,
)

LOG_LEVELS = ("debug", "info", "warning", "error")
STRATIFY = ("none", "corpus", "age")
KERNEL_WARMUPS = ("background", "none")


# Log shards: at most one slot range each of a cluster's 16,384 slots can hold many of; a
# cluster store's default leaves room for 64 primaries (docs/adr/0030-log-shards.md).
MAX_SHARDS = 1024
# The largest verification sample, by setting or by an MCP client (`all` checks every result).
MAX_VERIFY_SAMPLE = 1_000_000
CLUSTER_SHARDS = 64

@dataclass(frozen=True)
class Settings:
    """Validated settings; build with ``Settings.from_mapping(os.environ)`` at an edge."""

    corpus_path: Path | None = None
    default_recall: int = DEFAULT_RECALL
    max_recall: int = 1000
    max_query_len: int = 4096
    max_corpus_docs: int = 100_000
    max_corpus_bytes: int = 2 << 30
    max_doc_bytes: int = 1 << 20
    max_id_len: int = 256
    max_metadata_bytes: int = 64 << 10
    max_metadata_depth: int = 32
    max_seed_len: int = 256
    default_seed: str = DEFAULT_SEED
    engine: str = "bm25@6"
    log_level: str = "info"
    # May carry a password: kept out of repr like the token below.
    redis_url: str | None = dataclasses.field(default=None, repr=False)
    broker_url: str | None = dataclasses.field(default=None, repr=False)
    key_prefix: str = "rookhaven"
    mcp_host: str = "127.0.0.1"
    mcp_port: int = 8765
    # A secret: kept out of repr so it never reaches a log line or a traceback.
    mcp_token: str | None = dataclasses.field(default=None, repr=False)
    mcp_tokens_file: Path | None = None
    mcp_read_timeout: float = 30.0
    mcp_sessions_per_token: int = 32
    mcp_session_idle: float = 120.0
    mcp_requests_per_second: float = 50.0
    mcp_open_jobs_per_token: int = 1000
    redis_timeout: float = 5.0
    redis_min_replicas: int = 0
    log_shards: int | None = None
    redis_replica_timeout: float = 2.0
    corpus_chunk_bytes: int = 1 << 20
    batch_size: int = 500
    job_max_attempts: int = 3
    sweep_after: float = 300.0
    sweep_interval: float = 10.0
    task_time_limit: float = 120.0
    visibility_timeout: float = 600.0
    unacked_restore_interval: float = 2.0
    worker_heartbeat: float = 10.0
    index_cache_size: int = 4
    worker_prefetch: int = 1
    kernel_warmup: str = "background"
    beat_schedule_file: Path | None = None
    metrics_host: str = "127.0.0.1"
    metrics_port: int | None = None
    verify_at: str = "02:30"
    verify_sample: int = 200
    verify_stratify: str = "corpus"
    log_key_file: Path | None = None
    checkpoint_interval: float = 60.0
    log_mirror_dir: Path | None = None
    embedding_model: Path | None = None
    heal_interval: float = 3600.0
    verify_checkpoint: Path | None = None
    verify_verifier_key: str | None = None

    @classmethod
    def from_mapping(cls, env: Mapping[str, str]) -> Settings:
        """Parse every ROOKHAVEN_* variable present in ``env``; unknown ones are ignored."""
        if env.get("ROOKHAVEN_PROVIDER"):
            raise ConfigError("ROOKHAVEN_PROVIDER was renamed ROOKHAVEN_ENGINE (NAME or "
                              "NAME@VERSION, e.g. bm25@2); set that instead")
        values: dict[str, Any] = {}
        for spec in SPECS:
            raw = env.get(spec.variable)
            if raw is None or raw == "":
                continue
            values[spec.field] = spec.read(raw)
        settings = cls(**values)
        settings.check()
        return settings

    def check(self) -> None:
        """Refuse values and combinations that cannot work (flags arrive unparsed)."""
        engine_spec(self.engine)
        if self.default_recall > self.max_recall:
            raise ConfigError(
                f"ROOKHAVEN_DEFAULT_RECALL ({self.default_recall}) exceeds "
                f"ROOKHAVEN_MAX_RECALL ({self.max_recall}); lower one or raise the other"
            )

        if len(self.default_seed) > self.max_seed_len:
            raise ConfigError(
                f"ROOKHAVEN_DEFAULT_SEED is {len(self.default_seed)} characters, longer than "
                f"ROOKHAVEN_MAX_SEED_LEN ({self.max_seed_len}); shorten one or raise the other"
            )
        if self.redis_min_replicas and self.redis_replica_timeout >= self.redis_timeout:
            raise ConfigError(
                f"ROOKHAVEN_REDIS_REPLICA_TIMEOUT ({self.redis_replica_timeout:g} s) must be "
                f"below ROOKHAVEN_REDIS_TIMEOUT ({self.redis_timeout:g} s), or the socket gives "
                "up before WAIT answers; lower the first or raise the second"
            )
        if self.worker_prefetch > self.index_cache_size:
            raise ConfigError(
                f"ROOKHAVEN_WORKER_PREFETCH ({self.worker_prefetch}) exceeds "
                f"ROOKHAVEN_INDEX_CACHE_SIZE ({self.index_cache_size}): the cache would drop "
                "what was prefetched; lower the first or raise the second"
            )
        if self.visibility_timeout <= self.task_time_limit:
            raise ConfigError(
                f"ROOKHAVEN_VISIBILITY_TIMEOUT ({self.visibility_timeout:g} s) must exceed "
                f"ROOKHAVEN_TASK_TIME_LIMIT ({self.task_time_limit:g} s), or a slow task is "
                "delivered twice at once; raise the first or lower the second"
            )

    def with_overrides(self, **overrides: Any) -> Settings:
        """These settings with the non-None ``overrides`` (from flags) applied: the one place
        where flag > environment > default is decided."""
        return self._overridden(overrides, {})

    def with_flags(self, flags: Mapping[str, Any], named: Mapping[str, str] | None = None,
                   ) -> Settings:
        """``with_overrides`` for the ``flags`` named like a setting (argparse dests);
        ``named``: how the user spelled each (``--engine``), for the errors."""
        return self._overridden({k: v for k, v in flags.items() if k in _DEFAULTS},
                                named or {})

    def _overridden(self, overrides: Mapping[str, Any], named: Mapping[str, str]) -> Settings:
        changed = {k: v for k, v in overrides.items() if v is not None}
        for spec in SPECS:  # a flag is held to its setting's rules (a port <= 65535, ...)
            if spec.field in changed:
                spec.read(str(changed[spec.field]), named.get(spec.field,
                                                              f"the flag for {spec.variable}"))
        settings = dataclasses.replace(self, **changed)
        settings.check()
        return settings

    def request(self, query: str, recall_budget: int | None = None, seed: str | None = None,
                decompose: bool = True) -> RetrievalRequest:
        """The request a front end received, defaults from these settings, within the limits.

        Every front end (CLI, MCP tools) builds its requests here, so a default or a limit
        means the same everywhere.
        """
        check_utf8(query=query, seed=seed)
        try:
            request = RetrievalRequest(
                query=query,
                recall_budget=self.default_recall if recall_budget is None else recall_budget,
                seed=self.default_seed if seed is None else seed,
                decompose=decompose,
            )
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"]) or "request"
            # In the words of every front end (``recallBudget``, ``--budget``), not pydantic's.
            said = str(first["msg"]).removeprefix("Value error, ")
            said = _PLAIN.get(said, said[:1].lower() + said[1:])
            raise InvalidRequestError(f"invalid {_FIELDS.get(where, where)}: {said}") from None
        return self.check_request(request)

    def check_request(self, request: RetrievalRequest) -> RetrievalRequest:
        """``request`` if it is within the limits, else an error saying which and by how much."""
        if len(request.query) > self.max_query_len:
            raise InvalidRequestError(
                f"query is {len(request.query)} characters; the limit is {self.max_query_len} "
                "(ROOKHAVEN_MAX_QUERY_LEN)"
            )
        if request.recall_budget > self.max_recall:
            raise InvalidRequestError(
                f"recall budget {request.recall_budget} is over the maximum {self.max_recall} "
                "(ROOKHAVEN_MAX_RECALL)"
            )
        if len(request.seed) > self.max_seed_len:
            raise InvalidRequestError(
                f"seed is {len(request.seed)} characters; the limit is {self.max_seed_len} "
                "(ROOKHAVEN_MAX_SEED_LEN)"
            )
        check_utf8(query=request.query, seed=request.seed)
        return request

    def check_sample_seed(self, seed: str | None) -> str | None:
        """A verification sample's ``seed`` if it is within ROOKHAVEN_MAX_SEED_LEN (it is
        stored with the run's record, forever), else an error saying so."""
        if seed is not None and len(seed) > self.max_seed_len:
            raise InvalidRequestError(
                f"sample seed is {len(seed)} characters; the limit is {self.max_seed_len} "
                "(ROOKHAVEN_MAX_SEED_LEN)")
        check_utf8(seed=seed)
        return seed

    @property
    def broker(self) -> tuple[str | None, str]:
        """The broker's URL and the setting it comes from: ROOKHAVEN_BROKER_URL, else the
        store's ROOKHAVEN_REDIS_URL."""
        if self.broker_url is not None:
            return self.broker_url, "ROOKHAVEN_BROKER_URL"
        return self.redis_url, "ROOKHAVEN_REDIS_URL"

    @property
    def document_limits(self) -> DocumentLimits:
        """How large one document may be (ids, canonical bytes, metadata size and depth)."""
        return DocumentLimits(max_id_len=self.max_id_len, max_doc_bytes=self.max_doc_bytes,
                              max_metadata_bytes=self.max_metadata_bytes,
                              max_metadata_depth=self.max_metadata_depth)

    def load_corpus(self, path: Path | str, *, required: bool = True) -> Corpus:
        """The corpus file at ``path``, within every limit of these settings.

        Every front end (CLI, MCP server) reads corpus files here, so a limit means the
        same everywhere.
        """
        limits = FileLimits(max_bytes=self.max_corpus_bytes, document=self.document_limits)
        return load_corpus(path, max_docs=self.max_corpus_docs, required=required,
                           limits=limits)


# A request's fields and pydantic's messages as Settings.request reports them.
_FIELDS = {"recall_budget": "recall budget"}
_PLAIN = {"String should have at least 1 character": "it is empty"}


@dataclass(frozen=True)
class Spec:
    """One setting: its variable, field, parser and what it means (with unit)."""

    variable: str
    field: str
    parse: Callable[[str], Any]
    meaning: str

    def read(self, raw: str, name: str | None = None) -> Any:
        """``raw`` parsed, or a one-line ConfigError naming where it came from (``name``, a
        flag; else the variable) and what it accepts."""
        who = name or self.variable
        if not is_utf8(raw):
            raise ConfigError(f"{who} is not valid UTF-8")
        try:
            return self.parse(raw)
        except ValueError as exc:
            said = str(exc)
            value = shown(raw, 60)
            raise ConfigError(f"{who} {said}" + ("" if value in said else f", got {value}")
                              ) from None

    @property
    def default(self) -> Any:
        """The default, from ``Settings``: the one place each default is written."""
        return _DEFAULTS[self.field]


SPECS: tuple[Spec, ...] = (
    Spec("ROOKHAVEN_CORPUS_PATH", "corpus_path", lambda raw: Path(text(raw)),
         "corpus file (JSON array or JSON Lines) used when no corpus is named"),
    Spec("ROOKHAVEN_DEFAULT_RECALL", "default_recall", whole(1, 1_000_000),
         "recall budget when a request gives none (documents)"),
    Spec("ROOKHAVEN_MAX_RECALL", "max_recall", whole(1, 1_000_000),
         "largest recall budget a request may ask for (documents)"),
    Spec("ROOKHAVEN_MAX_QUERY_LEN", "max_query_len", whole(1, 1 << 20),
         "longest query accepted (characters)"),
    Spec("ROOKHAVEN_MAX_CORPUS_DOCS", "max_corpus_docs", whole(1, 100_000_000),
         "most documents a loaded corpus may hold (documents)"),
    Spec("ROOKHAVEN_MAX_CORPUS_BYTES", "max_corpus_bytes", whole(1, 1 << 40),
         "largest corpus file read (bytes)"),
    Spec("ROOKHAVEN_MAX_DOC_BYTES", "max_doc_bytes", whole(64, 256 << 20),
         "largest document accepted, as its line in a JSON Lines file and as canonical JSON "
         "(bytes)"),
    Spec("ROOKHAVEN_MAX_ID_LEN", "max_id_len", whole(1, 4096),
         "longest document id accepted (characters)"),
    Spec("ROOKHAVEN_MAX_METADATA_BYTES", "max_metadata_bytes", whole(2, 256 << 20),
         "largest metadata of one document, as canonical JSON (bytes)"),
    Spec("ROOKHAVEN_MAX_METADATA_DEPTH", "max_metadata_depth", whole(1, 256),
         "deepest nesting of one document's metadata; the object itself is level 1 (levels)"),
    Spec("ROOKHAVEN_MAX_SEED_LEN", "max_seed_len", whole(1, 4096),
         "longest seed a request may give (characters)"),
    Spec("ROOKHAVEN_DEFAULT_SEED", "default_seed", text,
         "seed when a request gives none"),
    Spec("ROOKHAVEN_ENGINE", "engine", engine,
         "engine (NAME@VERSION, or NAME for its default version) when none is named; "
         "see `rookhaven engines`"),
    Spec("ROOKHAVEN_EMBEDDING_MODEL", "embedding_model", lambda raw: Path(text(raw)),
         "a model2vec-format directory (model.safetensors + tokenizer.json) whose static "
         "embedding model hybrid engines use when none is named; the wordllama wheel's "
         "stays installed for replays (directory; default: that wheel's model)"),
    Spec("ROOKHAVEN_LOG_LEVEL", "log_level", choice(LOG_LEVELS),
         "least severe log level written to stderr (a worker writes a line a message at "
         "info, a line a job at debug)"),
    Spec("ROOKHAVEN_REDIS_URL", "redis_url", text,
         "Redis for the store (and the Celery broker, unless ROOKHAVEN_BROKER_URL names "
         "another): redis://, rediss:// (TLS) or unix://, "
         "with user:password@ and /db, or sentinel://HOST:PORT,.../SERVICE/DB for the primary "
         "Redis Sentinel names, or redis+cluster://HOST:PORT,... for a Redis Cluster (the "
         "broker then needs ROOKHAVEN_BROKER_URL)"),
    Spec("ROOKHAVEN_BROKER_URL", "broker_url", text,
         "Redis for the Celery broker when it is not the store's (same forms as "
         "ROOKHAVEN_REDIS_URL; a Redis Cluster cannot be a broker); default: "
         "ROOKHAVEN_REDIS_URL"),
    Spec("ROOKHAVEN_KEY_PREFIX", "key_prefix", key_prefix,
         "prefix of every Redis key Rookhaven writes: 1 to 64 letters, digits, '.', '_' or '-', "
         "starting with a letter or digit"),
    Spec("ROOKHAVEN_MCP_HOST", "mcp_host", text,
         "address `rookhaven mcp --http` binds; anything but loopback needs ROOKHAVEN_MCP_TOKEN"),
    Spec("ROOKHAVEN_MCP_PORT", "mcp_port", whole(1, PORT_MAX),
         "TCP port `rookhaven mcp --http` listens on"),
    Spec("ROOKHAVEN_MCP_TOKEN", "mcp_token", text,
         "bearer token HTTP clients must send (Authorization: Bearer <token>); "
         "required to bind a non-loopback address"),
    Spec("ROOKHAVEN_MCP_TOKENS_FILE", "mcp_tokens_file", lambda raw: Path(text(raw)),
         "file of named tokens with scopes (read, submit, operate) HTTP clients may send; "
         "`rookhaven token add` writes it, and the server reads it again when it changes"),
    Spec("ROOKHAVEN_MCP_READ_TIMEOUT", "mcp_read_timeout", seconds(HOUR),
         "a connection to `rookhaven mcp --http` whose request is not wholly received this "
         "long after it began (or the connection opened) is dropped (seconds, at most an hour)"),
    Spec("ROOKHAVEN_MCP_SESSIONS_PER_TOKEN", "mcp_sessions_per_token", whole(1, 100_000),
         "MCP sessions one token may hold open over HTTP; past it that token alone gets 429 "
         "with Retry-After (sessions)"),
    Spec("ROOKHAVEN_MCP_SESSION_IDLE", "mcp_session_idle", seconds(HOUR),
         "an MCP session over HTTP with no request for this long is closed and stops "
         "counting against its token (seconds, at most an hour)"),
    Spec("ROOKHAVEN_MCP_REQUESTS_PER_SECOND", "mcp_requests_per_second",
         per_second(100_000),
         "HTTP requests a second one token may send on average (bursts of twice that); past "
         "it that token alone gets 429 with Retry-After (requests a second)"),
    Spec("ROOKHAVEN_MCP_OPEN_JOBS_PER_TOKEN", "mcp_open_jobs_per_token",
         whole(1, 10_000_000),
         "jobs one token may have queued or running through submit_retrieval; past it that "
         "token's submissions are refused with a tool error until some are done (jobs)"),
    # The job pipeline (store, workers, sweeper); see docs/adr/0005-job-ledger.md.
    Spec("ROOKHAVEN_REDIS_TIMEOUT", "redis_timeout", seconds(HOUR),
         "how long one Redis connect or command may take, and how long a command that lost "
         "its connection, or a write its replicas have not confirmed, is retried (a "
         "failover, a restart) before the store gives up (seconds, at most an hour)"),
    Spec("ROOKHAVEN_LOG_SHARDS", "log_shards", whole(1, MAX_SHARDS),
         "log shards of a new store (each its own Merkle log and hash slot; recorded when the "
         "store is created and fixed after); default: none (one flat log) on a single Redis, "
         f"{CLUSTER_SHARDS} on a Redis Cluster"),
    Spec("ROOKHAVEN_REDIS_MIN_REPLICAS", "redis_min_replicas", whole(0, 100),
         "replicas that must confirm (Redis WAIT) a job's writes before a worker acknowledges "
         "it, and a submission's before it returns; 0 trusts the primary alone (replicas)"),
    Spec("ROOKHAVEN_REDIS_REPLICA_TIMEOUT", "redis_replica_timeout", seconds(HOUR),
         "how long one WAIT for ROOKHAVEN_REDIS_MIN_REPLICAS may block; WAITs are repeated "
         "for up to ROOKHAVEN_REDIS_TIMEOUT before the write is refused (seconds, below "
         "ROOKHAVEN_REDIS_TIMEOUT, at most an hour)"),
    Spec("ROOKHAVEN_CORPUS_CHUNK_BYTES", "corpus_chunk_bytes", whole(1024, 512 << 20),
         "largest piece a stored corpus is split into (bytes)"),
    Spec("ROOKHAVEN_BATCH_SIZE", "batch_size", whole(1, 10_000),
         "jobs carried by one batch task when many are submitted at once; a larger "
         "message costs the queue less a job, a smaller one spreads a small submission "
         "over more pool processes (jobs)"),
    Spec("ROOKHAVEN_JOB_MAX_ATTEMPTS", "job_max_attempts", whole(1, 1000),
         "runs a job may start before the sweeper marks it failed (attempts)"),
    Spec("ROOKHAVEN_SWEEP_AFTER", "sweep_after", seconds(WEEK),
         "age at which a queued job with no result is enqueued again (seconds, at most a week)"),
    Spec("ROOKHAVEN_SWEEP_INTERVAL", "sweep_interval", seconds(WEEK),
         "how often the beat schedule runs the sweeper (seconds, at most a week)"),
    Spec("ROOKHAVEN_TASK_TIME_LIMIT", "task_time_limit", seconds(WEEK),
         "hard limit on one task, single or batch; the pool child is killed after it "
         "(seconds, at most a week)"),
    Spec("ROOKHAVEN_VISIBILITY_TIMEOUT", "visibility_timeout", seconds(WEEK),
         "time before the broker redelivers an unacknowledged message; "
         "must exceed ROOKHAVEN_TASK_TIME_LIMIT (seconds, at most a week)"),
    Spec("ROOKHAVEN_UNACKED_RESTORE_INTERVAL", "unacked_restore_interval", seconds(WEEK),
         "how often workers look for unacknowledged messages to restore "
         "(seconds, at most a week)"),
    Spec("ROOKHAVEN_WORKER_HEARTBEAT", "worker_heartbeat", seconds(WEEK),
         "a worker silent this long is dead and its running jobs are swept "
         "(seconds, at most a week)"),
    Spec("ROOKHAVEN_INDEX_CACHE_SIZE", "index_cache_size", whole(1, 1000),
         "built corpus indexes each worker process keeps in memory (indexes)"),
    Spec("ROOKHAVEN_WORKER_PREFETCH", "worker_prefetch", whole(0, 1000),
         "corpora (the most recently stored) a worker indexes with the default engine before "
         "it starts its pool, so every pool process begins with them built and shares their "
         "memory; at most ROOKHAVEN_INDEX_CACHE_SIZE (corpora)"),
    Spec("ROOKHAVEN_KERNEL_WARMUP", "kernel_warmup", choice(KERNEL_WARMUPS),
         "how a worker or MCP server that starts gets the engine's compiled kernels: "
         "background (compiled, or loaded from numba's cache, in a process of their own "
         "while requests are answered on the reference paths) or none (loaded at the first "
         "request: for a machine or image whose numba cache is already filled, as `python -m "
         "rookhaven.pipeline.warmup ENGINE` fills it; from an empty cache that request waits "
         "for the compile)"),
    Spec("ROOKHAVEN_METRICS_HOST", "metrics_host", text,
         "address the Prometheus /metrics endpoint of a worker or `rookhaven metrics` binds"),
    Spec("ROOKHAVEN_METRICS_PORT", "metrics_port", whole(1, PORT_MAX),
         "port of a worker's Prometheus /metrics endpoint (unset: the worker serves none)"),
    Spec("ROOKHAVEN_VERIFY_AT", "verify_at", clock_time,
         "time of day (HH:MM, UTC) the nightly verifier runs"),
    Spec("ROOKHAVEN_VERIFY_SAMPLE", "verify_sample", whole(1, MAX_VERIFY_SAMPLE),
         "stored results the nightly verifier replays (results)"),
    Spec("ROOKHAVEN_VERIFY_STRATIFY", "verify_stratify", choice(STRATIFY),
         "how the nightly sample is spread: by corpus, by month stored, or not"),
    # The transparency log; see docs/adr/0013-transparency-log.md.
    Spec("ROOKHAVEN_LOG_KEY_FILE", "log_key_file", lambda raw: Path(text(raw)),
         "private key (C2SP note format, mode 0600) that signs log checkpoints; "
         "`rookhaven log keygen` writes one"),
    Spec("ROOKHAVEN_HEAL_INTERVAL", "heal_interval", seconds(WEEK),
         "how often beat looks for done jobs whose result was lost, to recompute them: a "
         "scan of every job record (seconds, at most a week)"),
    Spec("ROOKHAVEN_CHECKPOINT_INTERVAL", "checkpoint_interval", seconds(WEEK),
         "how often beat signs a checkpoint of the log when it grew (seconds, at most a week)"),
    Spec("ROOKHAVEN_LOG_MIRROR_DIR", "log_mirror_dir", lambda raw: Path(text(raw)),
         "a directory outside Redis where beat keeps a copy of the log as C2SP tlog-tiles "
         "files after each checkpoint, and `verify --mirror` reads it (directory)"),
    Spec("ROOKHAVEN_VERIFY_CHECKPOINT", "verify_checkpoint", lambda raw: Path(text(raw)),
         "a signed checkpoint kept outside Redis that the nightly verifier checks the log "
         "against (file)"),
    Spec("ROOKHAVEN_VERIFY_VERIFIER_KEY", "verify_verifier_key", text,
         "the log's verifier key (NAME+HASH+KEY) that must have signed every checkpoint"),
    Spec("ROOKHAVEN_BEAT_SCHEDULE_FILE", "beat_schedule_file", lambda raw: Path(text(raw)),
         "where celery beat keeps its schedule state (file; default: in the temp directory)"),
)

_DEFAULTS: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(Settings)}
