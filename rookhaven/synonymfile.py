"""Read a synonyms file for the bm25 provider: one group of interchangeable words a line.

Format (UTF-8 text): ``ship, vessel, boat`` makes each word match the others;
``quay => berth, wharf`` makes ``quay`` also match ``berth`` and ``wharf`` (one way).
Blank lines and lines starting with ``#`` are ignored. Matches weigh ``synonym_weight``.
"""

from __future__ import annotations

from pathlib import Path

from .errors import ConfigError


def parse_synonyms(text: str, where: str = "synonyms") -> dict[str, list[str]]:
    """The head -> synonyms mapping written in ``text``."""
    out: dict[str, set[str]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "=>" in line:
            left, _, right = line.partition("=>")
            heads = [w.strip() for w in left.split(",") if w.strip()]
            others = [w.strip() for w in right.split(",") if w.strip()]
        else:
            heads = others = [w.strip() for w in line.split(",") if w.strip()]
        if not heads or not others or (heads is others and len(heads) < 2):
            raise ConfigError(f"{where}: line {number}: expected 'a, b, c' or 'a => b, c'")
        for head in heads:
            out.setdefault(head, set()).update(o for o in others if o != head)
    return {head: sorted(out[head]) for head in sorted(out) if out[head]}


def load_synonyms(path: Path | str) -> dict[str, list[str]]:
    """The synonyms in the file at ``path``; pass them as ``synonyms=`` to bm25."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the synonyms file ({exc.strerror})") from None
    return parse_synonyms(text, str(path))
