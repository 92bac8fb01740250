"""Bringing an earlier release's store to today's: job records, and audit copies.

Job records: form 1 kept each job as a hash of its own; form 2 keeps a job as a field of
three per-shard hashes (spec, state, error: store.scripts). Each job is written in the new
form before its old hash is deleted, and the layout records form 2 only once every job has
moved, so an interrupted migration is finished by running it again.

Audit copies: earlier releases stored each result's audit under a key of its own as well as
inside the result; today's read it from the result (ADR 0064), so a copy equal to the audit
its result frames holds nothing else and is deleted. A copy that differs, or whose result
is gone, is kept and counted: it is evidence (``rookhaven verify`` judges the result).
Nothing else differs: results, the log, the indexes and the ledger stay as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ..core.canonical import audit_of, canonical_bytes
from ..errors import ConfigError
from . import layout
from .connection import translated
from .context import StoreContext, text
from .heartbeats import Heartbeats
from .records import STATE_FIELDS

_PAGE = 1000


def v1_record(raw: dict[bytes, bytes]) -> tuple[bytes, bytes, bytes | None]:
    """A form-1 job hash as form 2's (spec, state string, error or None)."""
    f = {text(k): text(v) for k, v in raw.items()}
    spec = canonical_bytes({"corpus": f["corpus"], "params": orjson.loads(f["params"]),
                            "provider": f["provider"], "request": orjson.loads(f["request"])})
    values = {name: f.get(name, "") for name in STATE_FIELDS}
    if "|" in values["worker"] or "|" in values["claim"]:  # never written by Rookhaven
        values["worker"] = values["claim"] = ""
    state = "|".join(values[name] for name in STATE_FIELDS).encode()
    return spec, state, f["error"].encode() if f.get("error") else None


def migrate(ctx: StoreContext, *, force: bool = False,
            progress: Callable[[int], None] = lambda moved: None) -> int:
    """Move every job record of a form-1 store into form 2 and record form 2 in its layout;
    how many jobs moved (0 for a store already of form 2). ConfigError while a worker
    is alive, unless ``force``: a running worker of an earlier Rookhaven would keep
    writing the old form."""
    keys = ctx.keys
    if keys.jobs_form >= layout.CURRENT:
        return 0
    if not force and Heartbeats(ctx).any_alive():
        raise ConfigError(
            f"a worker of the store under prefix {ctx.prefix!r} is alive: stop every worker "
            "and MCP server first and run this again once their heartbeats have expired, or "
            "pass --force if they are gone")
    moved = 0
    client = ctx.client
    with translated(client, "moving job records to today's form"):
        for shard in keys.shards:
            page: list[Any] = []
            for name in client.scan_iter(match=shard.job("*"), count=_PAGE):
                page.append(name)
                if len(page) == _PAGE:
                    moved += _move(client, shard, page)
                    progress(moved)
                    page = []
            if page:
                moved += _move(client, shard, page)
                progress(moved)
        layout.record(client, keys, layout.CURRENT)
    ctx.forget_layout()
    return moved


def _move(client: Any, shard: Any, names: list[Any]) -> int:
    """Write the jobs named by ``names`` (their v1 hashes) in the new form, then delete the
    hashes; how many were moved."""
    pipe = client.pipeline(transaction=False)
    for name in names:
        pipe.hgetall(name)
    specs, states, errors = {}, {}, {}
    gone = []
    for name, raw in zip(names, pipe.execute(), strict=True):
        if not raw:
            continue  # deleted since the scan saw it
        job_id = text(name).split(":job:", 1)[1]
        specs[job_id], states[job_id], error = v1_record(raw)
        if error is not None:
            errors[job_id] = error
        gone.append(name)
    if not gone:
        return 0
    pipe = client.pipeline(transaction=False)
    pipe.hset(shard.job_specs, mapping=specs).hset(shard.job_states, mapping=states)
    if errors:
        pipe.hset(shard.job_errors, mapping=errors)
    pipe.execute()
    client.delete(*gone)
    return len(gone)


def drop_audit_copies(ctx: StoreContext,
                      progress: Callable[[int], None] = lambda seen: None) -> tuple[int, int]:
    """Delete every audit copy an earlier release stored beside its result that equals the
    audit the result frames; (deleted, kept: differing, or with no result)."""
    dropped = kept = 0
    client = ctx.client
    with translated(client, "removing audit copies an earlier release stored"):
        for shard in ctx.keys.shards:
            page: list[Any] = []
            for name in client.scan_iter(match=shard.audit("*"), count=_PAGE):
                page.append(name)
                if len(page) == _PAGE:
                    gone, left = _drop(client, shard, page)
                    dropped, kept = dropped + gone, kept + left
                    progress(dropped + kept)
                    page = []
            if page:
                gone, left = _drop(client, shard, page)
                dropped, kept = dropped + gone, kept + left
                progress(dropped + kept)
    return dropped, kept


def _drop(client: Any, shard: Any, names: list[Any]) -> tuple[int, int]:
    """Delete those of the audit copies ``names`` whose result frames the same bytes;
    (deleted, kept)."""
    pipe = client.pipeline(transaction=False)
    for name in names:
        pipe.get(name).get(shard.result(text(name).split(":audit:", 1)[1]))
    read = pipe.execute()
    same, left = [], 0
    for name, copy, result in zip(names, read[0::2], read[1::2], strict=True):
        if copy is None:
            continue  # deleted since the scan saw it
        if result is not None and audit_of(result) == copy:
            same.append(name)
        else:
            left += 1
    if same:
        client.unlink(*same)
    return len(same), left
