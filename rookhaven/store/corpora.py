"""Corpora stored immutably by digest, in chunks, with a registry of names and versions.

A corpus is its canonical JSON lines (core.corpus), cut into pieces of at most the chunk
size so no single Redis value grows without bound. Chunks and the meta hash are written in
one MULTI, meta included, so a corpus is either wholly stored or absent; it is never
changed afterwards (a change is a new digest). Loading re-hashes the bytes; streaming (what
an index build reads) re-hashes them as they pass, a page of chunks at a time.

References: ``sha256:<hex>`` (a digest), ``latest`` (the corpus stored most recently),
``NAME`` (the newest version registered under NAME) and ``NAME@N`` (its N-th version).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

import orjson

from ..core.corpus import Corpus
from ..core.corpusstream import CorpusStream
from ..errors import CorpusError, IntegrityError, NotFoundError
from .connection import translated
from .context import StoreContext, text
from .records import CorpusEntry


def chunked(corpus: Corpus, limit: int) -> Iterator[bytes]:
    """The canonical lines of ``corpus`` in pieces of at most ``limit`` bytes (or one line)."""
    piece: list[bytes] = []
    size = 0
    for line in corpus.canonical_lines():
        if piece and size + len(line) > limit:
            yield b"".join(piece)
            piece, size = [], 0
        piece.append(line)
        size += len(line)
    if piece:
        yield b"".join(piece)


NAME_MAX = 128
# Names reach keys, one-line errors and `corpus list`: a safe literal, never a pattern.
_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{NAME_MAX - 1}}}")
RESERVED_NAMES = ("latest",)


def check_name(name: str) -> str:
    """``name`` if usable as a corpus name, else CorpusError."""
    if _NAME.fullmatch(name) is None or name in RESERVED_NAMES:
        raise CorpusError(
            f"corpus name {name[:40]!r}{'...' if len(name) > 40 else ''} is not allowed: use "
            f"1 to {NAME_MAX} letters, digits, '-', '_' or '.', starting with a letter or "
            f"digit, and not {', '.join(repr(r) for r in RESERVED_NAMES)}")
    return name


class CorpusStore:
    """Stored corpora and the name registry."""

    def __init__(self, ctx: StoreContext, chunk_bytes: int) -> None:
        self._ctx = ctx
        self._chunk_bytes = chunk_bytes

    def put(self, corpus: Corpus, name: str | None = None) -> CorpusEntry:
        """Store ``corpus`` (once per digest) and register it under ``name``."""
        if len(corpus) == 0:
            raise CorpusError("the corpus is empty: add at least one document before storing")
        ctx, k, digest = self._ctx, self._ctx.keys, corpus.digest
        if name is not None:
            check_name(name)
        now = ctx.now()
        with translated(ctx.client, f"storing corpus {digest}"):
            if not ctx.client.exists(k.corpus_meta(digest)):
                # The corpus's keys share its slot, the registry's another: two steps, the
                # data first, so the registry never names a corpus that is not all there.
                pipe = ctx.client.pipeline(transaction=True)
                chunks = list(chunked(corpus, self._chunk_bytes))
                for index, chunk in enumerate(chunks):
                    pipe.set(k.corpus_chunk(digest, index), chunk)
                pipe.hset(k.corpus_meta(digest), mapping={
                    "documents": len(corpus), "chunks": len(chunks),
                    "bytes": sum(len(c) for c in chunks), "stored": now,
                })
                pipe.execute()
            pipe = ctx.client.pipeline(transaction=True)
            pipe.zadd(k.corpora, {digest: now}, nx=True)
            if name is not None:
                pipe.zadd(k.corpus_name(name), {digest: now}, nx=True)
                pipe.zadd(k.corpus_names, {name: now}, nx=True)
            pipe.execute()
        entries = self.entries(name) if name else []
        mine = [e for e in entries if e.digest == digest]
        return mine[0] if mine else self.entry(digest)

    def entry(self, digest: str) -> CorpusEntry:
        """The registry entry of a stored digest (unnamed), or NotFoundError."""
        ctx, k = self._ctx, self._ctx.keys
        with translated(ctx.client, f"reading corpus {digest}"):
            meta = ctx.client.hgetall(k.corpus_meta(digest))
            added = ctx.client.zscore(k.corpora, digest)
        if not meta:
            raise NotFoundError(f"no corpus {digest} is stored; add it with "
                                "`rookhaven corpus add FILE`")
        fields = {text(a): text(b) for a, b in meta.items()}
        return CorpusEntry(digest=digest, name=None, version=None,
                           added=float(added if added is not None else fields["stored"]),
                           documents=int(fields["documents"]), bytes=int(fields["bytes"]))

    def recent(self, count: int) -> list[str]:
        """The digests of the ``count`` corpora stored most recently, newest first."""
        if count <= 0:
            return []
        ctx = self._ctx
        with translated(ctx.client, "listing recent corpora"):
            return [text(d) for d in ctx.client.zrange(ctx.keys.corpora, -count, -1)][::-1]

    def entries(self, name: str | None = None) -> list[CorpusEntry]:
        """Every (name, version) in the registry, or only ``name``'s versions, oldest first;
        stored corpora never given a name are listed with name None."""
        ctx, k = self._ctx, self._ctx.keys
        with translated(ctx.client, "listing corpora"):
            names = ([name] if name else
                     [text(n) for n in ctx.client.zrange(k.corpus_names, 0, -1)])
            named: list[tuple[str, int, str, float]] = []
            for each in names:
                versions = ctx.client.zrange(k.corpus_name(each), 0, -1, withscores=True)
                named += [(each, i, text(d), float(t))
                          for i, (d, t) in enumerate(versions, start=1)]
            everything = ctx.client.zrange(k.corpora, 0, -1, withscores=True)
        entries = [self.entry(d).model_copy(update={"name": n, "version": v, "added": t})
                   for n, v, d, t in named]
        if name is None:
            seen = {d for _, _, d, _ in named}
            entries += [self.entry(text(d)) for d, _ in everything if text(d) not in seen]
        return entries

    def digests(self) -> list[str]:
        """Every digest ever stored, oldest first, whether or not its data is still present."""
        with translated(self._ctx.client, "listing corpus digests"):
            return [text(d) for d in self._ctx.client.zrange(self._ctx.keys.corpora, 0, -1)]

    def resolve(self, ref: str) -> str:
        """The digest ``ref`` names (see the module docstring), or NotFoundError."""
        ctx, k = self._ctx, self._ctx.keys
        with translated(ctx.client, f"resolving corpus {ref!r}"):
            if ref.startswith("sha256:"):
                if ctx.client.exists(k.corpus_meta(ref)):
                    return ref
                raise NotFoundError(f"no corpus {ref} is stored; add it with "
                                    "`rookhaven corpus add FILE`")
            if ref == "latest":
                newest = ctx.client.zrange(k.corpora, -1, -1)
                if newest:
                    return text(newest[0])
                raise NotFoundError("no corpus is stored yet; add one with "
                                    "`rookhaven corpus add FILE --name NAME`")
            name, _, version = ref.partition("@")
            versions = [text(d) for d in ctx.client.zrange(k.corpus_name(name), 0, -1)]
            # The names are read only to say which exist (a round trip every submission
            # otherwise).
            known = [] if versions else sorted(
                text(n) for n in ctx.client.zrange(k.corpus_names, 0, -1))
        if not versions:
            raise NotFoundError(f"no corpus named {name!r}; known names: "
                                f"{', '.join(known) or '(none)'}; or pass a digest or 'latest'")
        if version in ("", "latest"):
            return versions[-1]
        if version.isascii() and version.isdigit() and 1 <= int(version) <= len(versions):
            return versions[int(version) - 1]
        raise NotFoundError(f"corpus {name!r} has versions 1..{len(versions)}; "
                            f"got {version!r}")

    def stream(self, digest: str, page: int = 8) -> CorpusStream:
        """The stored corpus ``digest`` as its lines, read ``page`` chunks at a time while an
        index is built from them and re-hashed as they pass (IntegrityError at the end if
        they changed): no whole copy of the corpus is held."""
        ctx, k = self._ctx, self._ctx.keys
        stored_bytes = self.entry(digest).bytes
        with translated(ctx.client, f"reading corpus {digest}"):
            meta = ctx.client.hget(k.corpus_meta(digest), "chunks")
        count = int(text(meta)) if meta is not None else 0

        def lines() -> Iterator[bytes]:
            rest, size = b"", 0
            for at in range(0, count, page):
                with translated(ctx.client, f"reading corpus {digest}"):
                    chunks = ctx.client.mget([k.corpus_chunk(digest, i)
                                              for i in range(at, min(at + page, count))])
                for chunk in chunks:
                    if chunk is None:
                        raise IntegrityError(f"corpus {digest} is missing chunks in the store")
                    size += len(chunk)
                    *whole, rest = (rest + bytes(chunk)).split(b"\n")
                    yield from whole
            if rest or size != stored_bytes:
                raise IntegrityError(f"stored corpus {digest} holds {size} bytes, not the "
                                     f"{stored_bytes} stored: its bytes were changed in Redis; "
                                     "add the corpus file again under a new name")
        return CorpusStream.from_lines(lines(), digest)

    def load(self, digest: str) -> Corpus:
        """The stored corpus ``digest``, its bytes re-hashed; IntegrityError if they differ."""
        ctx, k = self._ctx, self._ctx.keys
        entry_meta = self.entry(digest)
        with translated(ctx.client, f"reading corpus {digest}"):
            meta = ctx.client.hget(k.corpus_meta(digest), "chunks")
            count = int(text(meta)) if meta is not None else 0
            chunks = ctx.client.mget([k.corpus_chunk(digest, i) for i in range(count)])
        if any(c is None for c in chunks):
            raise IntegrityError(f"corpus {digest} is missing chunks in the store")
        data = b"".join(bytes(c) for c in chunks)
        actual = "sha256:" + hashlib.sha256(data).hexdigest()
        if actual != digest or len(data) != entry_meta.bytes:
            raise IntegrityError(f"stored corpus {digest} hashes to {actual}: its bytes were "
                                 "changed in Redis; add the corpus file again under a new name")
        # The bytes hash to the digest, so they are canonical lines: no model per line.
        return Corpus.from_records(orjson.loads(line) for line in data.splitlines())
