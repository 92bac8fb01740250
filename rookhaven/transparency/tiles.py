"""The C2SP tlog-tiles layout of a log: tile paths, tiles of hashes, entry bundles.

A tile at level L holds up to 256 consecutive hashes of tree level 8L (level 0: the leaf
hashes), tile N starting at hash 256 N. An entry bundle holds the leaves themselves, 256 to
a full bundle, each a big-endian uint16 length and its bytes. A tile or bundle that is not
full is partial: its path ends in ``.p/W``, W its width. N is written in three-digit path
elements, all but the last prefixed with x: tile 1234067 of level 0 is
``tile/0/x001/x234/067``. See https://c2sp.org/tlog-tiles.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from ..errors import TileFormatError
from .merkle import HASH_SIZE, Node, node_hash

HEIGHT = 8
WIDTH = 1 << HEIGHT
MAX_ENTRY = 0xFFFF


def index_path(index: int) -> str:
    """``index`` as three-digit path elements: 1234067 -> ``x001/x234/067``."""
    groups = []
    while True:
        index, rest = divmod(index, 1000)
        groups.append(f"{rest:03d}")
        if not index:
            break
    return "/".join([*(f"x{g}" for g in reversed(groups[1:])), groups[0]])


def _suffix(width: int) -> str:
    if not 1 <= width <= WIDTH:
        raise TileFormatError(f"a tile holds 1 to {WIDTH} entries, not {width}")
    return "" if width == WIDTH else f".p/{width}"


def tile_path(level: int, index: int, width: int) -> str:
    """Where tile ``index`` of ``level`` lives when it holds ``width`` hashes."""
    return f"tile/{level}/{index_path(index)}{_suffix(width)}"


def bundle_path(index: int, width: int) -> str:
    """Where entry bundle ``index`` lives when it holds ``width`` entries."""
    return f"tile/entries/{index_path(index)}{_suffix(width)}"


def width_at(level: int, index: int, size: int) -> int:
    """How many hashes tile ``index`` of ``level`` holds in a tree of ``size`` leaves."""
    return max(0, min(WIDTH, (size >> (HEIGHT * level)) - WIDTH * index))


def levels(size: int) -> int:
    """How many tile levels a tree of ``size`` leaves has (level L exists while it holds a
    hash)."""
    count = 0
    while size >> (HEIGHT * count):
        count += 1
    return count


def changed(old: int, new: int) -> Iterator[tuple[int, int, int]]:
    """``(level, index, width)`` of every tile that growing from ``old`` to ``new`` leaves
    makes new or wider, level by level; a bundle's index and width are level 0's."""
    for level in range(levels(new)):
        first = (old >> (HEIGHT * level)) // WIDTH
        last = ((new >> (HEIGHT * level)) - 1) // WIDTH
        for index in range(first, last + 1):
            width = width_at(level, index, new)
            if width > width_at(level, index, old):
                yield level, index, width


def bundle(entries: Sequence[bytes]) -> bytes:
    """The bytes of an entry bundle holding ``entries``."""
    parts = []
    for entry in entries:
        if len(entry) > MAX_ENTRY:
            raise TileFormatError(f"an entry of {len(entry)} bytes does not fit a bundle "
                                  f"(at most {MAX_ENTRY})")
        parts += [len(entry).to_bytes(2, "big"), entry]
    return b"".join(parts)


def unbundle(data: bytes, where: str) -> list[bytes]:
    """The entries of the bundle ``data`` (read from ``where``); TileFormatError if cut."""
    entries: list[bytes] = []
    at = 0
    while at < len(data):
        if at + 2 > len(data):
            raise TileFormatError(f"{where}: a length cut off at byte {at}")
        length = int.from_bytes(data[at:at + 2], "big")
        if at + 2 + length > len(data):
            raise TileFormatError(f"{where}: entry {len(entries)} runs past the end")
        entries.append(data[at + 2:at + 2 + length])
        at += 2 + length
    return entries


def node_from_tile(node: Node, read: Callable[[int, int], bytes]) -> bytes:
    """The hash of complete subtree ``node`` = (tree level, index), folded from the tile
    hashes it covers; ``read(level, index)`` gives the bytes of tile ``index`` of tile
    ``level`` (any width that covers the node)."""
    level, index = node
    tile_level, rise = divmod(level, HEIGHT)
    first = index << rise  # the node's first hash at tree level 8 * tile_level
    data = read(tile_level, first // WIDTH)
    at = (first % WIDTH) * HASH_SIZE
    hashes = [data[i:i + HASH_SIZE] for i in range(at, at + (HASH_SIZE << rise), HASH_SIZE)]
    if len(hashes) != 1 << rise or any(len(h) != HASH_SIZE for h in hashes):
        raise TileFormatError(f"tile {tile_level}/{first // WIDTH} does not cover subtree "
                              f"{node}")
    while len(hashes) > 1:
        hashes = [node_hash(hashes[i], hashes[i + 1]) for i in range(0, len(hashes), 2)]
    return hashes[0]
