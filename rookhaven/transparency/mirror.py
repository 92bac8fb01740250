"""A copy of the log outside Redis, as C2SP tlog-tiles files: the edge that writes and reads it.

Every tile and entry bundle is a file written once, atomically (a temporary file, fsync,
rename): a partial one is a new file at each width, so nothing is ever rewritten, and a
file that exists must hold exactly the bytes it would be written with. Only ``checkpoint``,
the newest signed checkpoint the mirror covers, is replaced. Before it grows, the mirror
checks that the store's tree still extends it and that every new leaf hashes to the
store's tree; a mirror is never shortened. A sharded log is mirrored one tree per shard
under ``shard/NNNN/``, with the checkpoint set at the top. See docs/adr/0029-log-mirror.md
and 0030-log-shards.md.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import MirrorError, TileFormatError
from ..store import Store
from ..store.log import TransparencyLog
from . import merkle, tiles
from .checkpoints import checked, latest

CHECKPOINT = "checkpoint"
SHARDS = "shard"  # a sharded log's mirror: shard/0000/, shard/0001/, ... each a tree


@dataclass(frozen=True)
class Growth:
    """What one ``Mirror.update`` did: the size before and after, and the checkpoint kept."""

    before: int
    after: int
    checkpoint_size: int | None


class Mirror:
    """The log's tiles, entry bundles and newest checkpoint under one directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    # ----- reading --------------------------------------------------------------------

    def size(self) -> int:
        """How many leaves the mirror holds: the end of its widest entry bundle."""
        root = self.directory / "tile" / "entries"
        size = 0
        for path in root.rglob("*") if root.is_dir() else ():
            if path.is_file() and not path.name.startswith("."):
                size = max(size, self._bundle_end(path.relative_to(root)))
        return size

    @staticmethod
    def _bundle_end(relative: Path) -> int:
        parts = relative.parts
        width = tiles.WIDTH
        if len(parts) >= 2 and parts[-2].endswith(".p"):
            width, parts = int(parts[-1]), (*parts[:-2], parts[-2][:-2])
        try:
            index = int("".join(p.removeprefix("x") for p in parts))
        except ValueError:
            raise TileFormatError(f"tile/entries/{relative} is not a bundle's path") from None
        return index * tiles.WIDTH + width

    def _read(self, relative: str) -> bytes:
        try:
            return (self.directory / relative).read_bytes()
        except FileNotFoundError:
            raise MirrorError(f"the mirror {self.directory} has no {relative}: it was "
                              "deleted, or this is not the directory `rookhaven log mirror` "
                              "wrote") from None
        except OSError as exc:
            raise MirrorError(f"cannot read {self.directory / relative}: {exc.strerror}") \
                from None

    def _covering(self, path: str, width: int) -> tuple[str, int]:
        """The file of tile or bundle ``path`` (written at ``width``) that covers its first
        ``width`` entries: the full one if written, else the narrowest partial that is at
        least that wide (partials are only written at the sizes the mirror grew to)."""
        full = path.split(".p/")[0]
        if (self.directory / full).is_file():
            return full, tiles.WIDTH
        partials = self.directory / f"{full}.p"
        widths = sorted(int(p.name) for p in partials.iterdir()
                        if p.name.isascii() and p.name.isdigit()) if partials.is_dir() else []
        wide = [w for w in widths if w >= width]
        if not wide:
            raise MirrorError(f"the mirror {self.directory} has no {path} nor a wider "
                              "one: it was deleted or cut, or it never grew that far")
        return f"{full}.p/{wide[0]}", wide[0]

    def tile(self, level: int, index: int, size: int) -> bytes:
        """The hashes of tile ``index`` of ``level`` in the tree of ``size`` leaves."""
        width = tiles.width_at(level, index, size)
        path, holds = self._covering(tiles.tile_path(level, index, width), width)
        data = self._read(path)
        if len(data) != holds * merkle.HASH_SIZE:
            raise TileFormatError(f"{path} holds {len(data)} bytes, not {holds} hashes")
        return data[:width * merkle.HASH_SIZE]

    def entries(self, start: int, stop: int) -> list[bytes]:
        """Leaves ``[start, stop)`` as the mirror holds them."""
        found: list[bytes] = []
        for index in range(start // tiles.WIDTH, (stop - 1) // tiles.WIDTH + 1 if stop else 0):
            width = tiles.width_at(0, index, stop)
            path, holds = self._covering(tiles.bundle_path(index, width), width)
            leaves = tiles.unbundle(self._read(path), path)
            if len(leaves) != holds:
                raise TileFormatError(f"{path} holds {len(leaves)} entries, not {holds}")
            first = index * tiles.WIDTH
            found += leaves[max(start - first, 0):width]
        return found

    def root(self, size: int) -> bytes:
        """The Merkle tree hash of the mirror's first ``size`` leaves."""
        if size == 0:
            return merkle.EMPTY_ROOT
        wanted = merkle.root_nodes(size)
        return merkle.root(size, {node: tiles.node_from_tile(
            node, lambda level, index: self.tile(level, index, size)) for node in wanted})

    def checkpoint(self) -> str | None:
        """The newest signed checkpoint the mirror covers, or None."""
        path = self.directory / CHECKPOINT
        return path.read_text(encoding="utf-8") if path.is_file() else None

    # ----- writing --------------------------------------------------------------------

    def update(self, store: Store, page: int = 4096,
               progress: Callable[[int, int], None] | None = None) -> Growth:
        """Copy what the store's log (every shard's, under ``shard/NNNN/``, when it is
        sharded) added since the mirror last grew (``progress(done, size)`` after each
        page); MirrorError if the store's log no longer extends the mirror. The newest
        checkpoint (or checkpoint set) whose trees the mirror holds is kept beside them."""
        if store.keys.sharded != self.sharded() and self.size_all():
            raise MirrorError(f"the mirror {self.directory} holds a "
                              f"{'sharded' if self.sharded() else 'flat'} log and the store's "
                              "is not: mirror it to another directory")
        logs = store.logs
        mirrors = [self.shard(log.shard) for log in logs] if store.keys.sharded else [self]
        grown = [m._follow(log, page, progress) for m, log in zip(mirrors, logs, strict=True)]
        note, kept = latest(store), None
        if note is not None:
            signed = checked(note, None).trees
            if len(signed) == len(logs) and all(
                    tree.size <= size for tree, (_, size) in zip(signed, grown, strict=True)):
                for m, tree in zip(mirrors, signed, strict=True):
                    if tree.root != m.root(tree.size):
                        raise MirrorError(f"the store's checkpoint of {tree.size} leaves does "
                                          "not sign the store's own tree: the log or the "
                                          "checkpoint was changed")
                self._replace(CHECKPOINT, note.encode())
                kept = sum(tree.size for tree in signed)
        return Growth(sum(b for b, _ in grown), sum(a for _, a in grown), kept)

    def sharded(self) -> bool:
        """Whether the mirror holds a sharded log (a ``shard/`` directory of logs)."""
        return (self.directory / SHARDS).is_dir()

    def shard(self, index: int) -> Mirror:
        """The mirror of one shard's log: a tlog-tiles tree of its own, without checkpoint
        (the set that signs it is the top directory's ``checkpoint``)."""
        return Mirror(self.directory / SHARDS / f"{index:04d}")

    def size_all(self) -> int:
        """Leaves mirrored, in every shard."""
        if not self.sharded():
            return self.size()
        return sum(Mirror(path).size() for path in (self.directory / SHARDS).iterdir()
                   if path.is_dir())

    def _follow(self, log: TransparencyLog, page: int,
                progress: Callable[[int, int], None] | None) -> tuple[int, int]:
        """Grow this directory's tree to ``log``'s: (size before, size after)."""
        before = self.size()
        size = log.integrate()
        if size < before:
            raise MirrorError(f"the store's log holds {size} leaves, fewer than the {before} "
                              f"mirrored in {self.directory}: it was truncated (the mirror "
                              "keeps what it had)")
        if before and log.root(before) != self.root(before):
            raise MirrorError(f"the store's tree of {before} leaves is not the one mirrored in "
                              f"{self.directory}: the store's log was rewritten")
        for at in range(before, size, page):
            self._grow(log, at, min(size, at + page))
            if progress is not None:
                progress(min(size, at + page), size)
        return before, size

    def _grow(self, log: TransparencyLog, old: int, new: int) -> None:
        first = (old // tiles.WIDTH) * tiles.WIDTH  # a partial bundle is written whole again
        leaves = [data for _, data in log.leaves(first, new)]
        hashes = log.leaf_hashes(first, new)
        for offset, data in enumerate(leaves):
            at = offset * merkle.HASH_SIZE
            if merkle.leaf_hash(data) != hashes[at:at + merkle.HASH_SIZE]:
                raise MirrorError(f"leaf {first + offset} of the store's log does not hash to "
                                  "its tree: the leaf list was changed; nothing mirrored")
        for level, index, width in tiles.changed(old, new):
            if level == 0:
                lo = index * tiles.WIDTH - first
                self._write_once(tiles.bundle_path(index, width),
                                 tiles.bundle(leaves[lo:lo + width]))
            start = index * tiles.WIDTH
            data = log.hashes(tiles.HEIGHT * level, start, start + width)
            if len(data) != width * merkle.HASH_SIZE:
                raise MirrorError(f"the store's log lacks hashes of level {level}: run "
                                  "`rookhaven log checkpoint` to integrate it")
            self._write_once(tiles.tile_path(level, index, width), data)

    def _write_once(self, relative: str, data: bytes) -> None:
        path = self.directory / relative
        if path.exists():
            if path.read_bytes() != data:
                raise MirrorError(f"{path} holds other bytes than the store's log gives for "
                                  "it: the mirror or the log was changed")
            return
        self._replace(relative, data)

    def _replace(self, relative: str, data: bytes) -> None:
        path = self.directory / relative
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
            directory = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(directory)  # the rename itself survives a crash
            finally:
                os.close(directory)
        except OSError as exc:
            raise MirrorError(f"cannot write {path}: {exc.strerror}") from None
