"""Writes the golden English stem list: every distinct token of the shared collections, stemmed.

    /work/main/.venv/bin/python tools/generate_stem_golden.py [DATASETS_DIR]

Tokens are the Unicode 14.0 text rules' ``split_tokens`` of every title, text and query of
cranfield, cisi, cacm and npl (BEIR layout); lines are ``token<TAB>stem``, sorted by code
point. The output is tests/golden/stems/english-snowball-<version>.tsv.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rookhaven.core.snowball import SNOWBALL_VERSION, EnglishStemmer  # noqa: E402
from rookhaven.core.textrules import text_rules  # noqa: E402

COLLECTIONS = ("cranfield", "cisi", "cacm", "npl")
GOLDEN = ROOT / "tests" / "golden" / "stems" / f"english-snowball-{SNOWBALL_VERSION}.tsv"


def collection_texts(datasets: Path) -> Iterator[str]:
    """Every non-empty title, text and query text of the shared collections."""
    for name in COLLECTIONS:
        for file in ("corpus.jsonl", "queries.jsonl"):
            with (datasets / name / file).open(encoding="utf-8") as lines:
                for line in lines:
                    record = json.loads(line)
                    yield from (record[k] for k in ("title", "text") if record.get(k))


def distinct_tokens(datasets: Path) -> list[str]:
    """The distinct tokens of the collections under the Unicode 14.0 rules, by code point."""
    split = text_rules("14.0").split_tokens
    return sorted({token for text in collection_texts(datasets) for token in split(text)})


def render(words: list[str]) -> str:
    """The golden file's text for ``words``."""
    stem = EnglishStemmer().stem
    return "".join(f"{w}\t{stem(w)}\n" for w in words)


def main() -> int:
    datasets = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "datasets"
    GOLDEN.write_text(render(distinct_tokens(datasets)), encoding="utf-8", newline="\n")
    print(f"wrote {GOLDEN.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
