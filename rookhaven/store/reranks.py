"""Bulk re-ranking runs: their specs and finished chunks, so a run resumes where it stopped."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import NotFoundError
from .connection import translated
from .context import StoreContext, text


class RerankLog:
    """Re-ranking runs by id."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def create(self, run_id: str, spec: bytes, total: int, chunks: int) -> None:
        """Record a run's spec once; a run id that exists keeps what it had."""
        k = self._ctx.keys
        with translated(self._ctx.client, f"recording re-ranking run {run_id}"):
            self._ctx.client.hsetnx(k.rerank(run_id), "spec", spec)
            self._ctx.client.hsetnx(k.rerank(run_id), "total", total)
            self._ctx.client.hsetnx(k.rerank(run_id), "chunks", chunks)

    def note_asker(self, run_id: str, name: str) -> None:
        """Record MCP token ``name`` among those that started (or resumed) the run."""
        with translated(self._ctx.client, f"recording who started re-ranking run {run_id}"):
            self._ctx.name(keys=[self._ctx.keys.rerank(run_id)], args=["asked_by", name])

    def askers(self, run_id: str) -> list[str]:
        """The MCP tokens that started the run, first first (none: the CLI started it)."""
        with translated(self._ctx.client, f"reading who started re-ranking run {run_id}"):
            value = self._ctx.client.hget(self._ctx.keys.rerank(run_id), "asked_by")
        return text(value).split(",") if value else []

    def spec(self, run_id: str) -> bytes:
        """The spec a run was started with, or NotFoundError."""
        with translated(self._ctx.client, f"reading re-ranking run {run_id}"):
            value = self._ctx.client.hget(self._ctx.keys.rerank(run_id), "spec")
        if value is None:
            raise NotFoundError(f"no re-ranking run {run_id!r}; start one with "
                                "`rookhaven rerank` (it prints the run id)")
        return bytes(value)

    def set_out(self, run_id: str, path: str, *, replace: bool = True) -> None:
        """Record where the run's report is written (kept if one is and not ``replace``), so
        ``--resume`` writes the same file. Not part of the spec: it changes no result."""
        k = self._ctx.keys
        with translated(self._ctx.client, f"recording the report file of {run_id}"):
            if replace:
                self._ctx.client.hset(k.rerank(run_id), "out", path)
            else:
                self._ctx.client.hsetnx(k.rerank(run_id), "out", path)

    def out(self, run_id: str) -> str | None:
        """The report file recorded for a run (None for runs recorded before there was one)."""
        with translated(self._ctx.client, f"reading re-ranking run {run_id}"):
            value = self._ctx.client.hget(self._ctx.keys.rerank(run_id), "out")
        return None if value is None else text(value)

    def finish_chunk(self, run_id: str, index: int, rows: bytes) -> None:
        """Keep a finished chunk's report rows; the chunk is then never redone."""
        with translated(self._ctx.client, f"recording chunk {index} of {run_id}"):
            self._ctx.client.hset(self._ctx.keys.rerank_chunks(run_id), str(index), rows)

    def finished(self, run_id: str) -> dict[int, bytes]:
        """Every finished chunk's rows by index."""
        with translated(self._ctx.client, f"reading chunks of {run_id}"):
            raw = self._ctx.client.hgetall(self._ctx.keys.rerank_chunks(run_id))
        return {int(text(i)): bytes(rows) for i, rows in raw.items()}

    def set_summary(self, run_id: str, summary: bytes) -> None:
        with translated(self._ctx.client, f"recording summary of {run_id}"):
            self._ctx.client.hset(self._ctx.keys.rerank(run_id), "summary", summary)

    def summary(self, run_id: str) -> bytes | None:
        """The summary recorded when the run finished, or None while it has none."""
        with translated(self._ctx.client, f"reading summary of {run_id}"):
            value = self._ctx.client.hget(self._ctx.keys.rerank(run_id), "summary")
        return None if value is None else bytes(value)

    def total(self, run_id: str) -> int | None:
        """How many queries the run covers, or None for an unknown run."""
        with translated(self._ctx.client, f"reading re-ranking run {run_id}"):
            value = self._ctx.client.hget(self._ctx.keys.rerank(run_id), "total")
        return None if value is None else int(text(value))

    def made(self, keys: Sequence[str]) -> None:
        """Note ``keys`` as results a re-ranking run made: computed for a comparison, served
        to nobody, so not history for the next run to re-rank."""
        if keys:
            with translated(self._ctx.client, f"noting {len(keys)} re-ranked result(s)"):
                self._ctx.client.sadd(self._ctx.keys.reranks_made, *keys)

    def asked(self, keys: Sequence[str]) -> None:
        """``keys`` were submitted by someone else: history from now on, whoever made them."""
        if keys:
            with translated(self._ctx.client, f"noting {len(keys)} submitted result(s)"):
                self._ctx.client.srem(self._ctx.keys.reranks_made, *keys)

    def only_made(self, keys: Sequence[str]) -> list[bool]:
        """For each of ``keys``, whether only a re-ranking run has asked for it."""
        if not keys:
            return []
        with translated(self._ctx.client, f"reading {len(keys)} re-ranked result mark(s)"):
            found = self._ctx.client.smismember(self._ctx.keys.reranks_made, list(keys))
        return [bool(f) for f in found]
