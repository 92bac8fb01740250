"""Time of each split of the pinned text rules over collections' documents: best of three passes.

    python bench/experiments/languages/split_time.py bench/collections/tldr-{zh,fa,de} \
        bench/collections/tldr

Prints, per collection, the documents (and how many are not ASCII) and the milliseconds one
pass of each split takes over their texts, in one process (so the ratios compare, not the
absolute numbers, on a shared machine).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from rookhaven.core.textrules import text_rules  # noqa: E402

RULES = text_rules("14.0")
SPLITS: dict[str, Callable[[str], list[str]]] = {
    "alnum-runs": RULES.split_tokens, "words": RULES.split_words,
    "visible-words": RULES.split_visible_words}


def best_ms(split: Callable[[str], list[str]], texts: list[str], rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for text in texts:
            split(text)
        best = min(best, time.perf_counter() - start)
    return best * 1000


def main(paths: list[str]) -> None:
    for path in map(Path, paths):
        with (path / "corpus.jsonl").open("rb") as lines:
            texts = [orjson.loads(line)["text"] for line in lines if line.strip()]
        other = sum(not text.isascii() for text in texts)
        timings = ", ".join(f"{name} {best_ms(split, texts):.1f} ms"
                            for name, split in SPLITS.items())
        print(f"{path.name}: {len(texts)} documents ({other} not ASCII): {timings}")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 else 2)
    main(sys.argv[1:])
