"""Derive the title-only Cranfield set (bench/collections/cranfield-titles) from the shared one.

Each document of the shared Cranfield collection is reduced to its title: corpus.jsonl gets
{"_id", "text": <title>} (no "title" key); queries.jsonl and qrels/test.tsv are copied byte
for byte; meta.json records the derivation (input sha256s), counts and statistics.

Run (standard library only):

    python bench/collections/derive_titles.py [SRC_DIR] [OUT_DIR]

SRC_DIR defaults to /work/shared/datasets/cranfield and OUT_DIR to
bench/collections/cranfield-titles.  Output is deterministic (sorted keys,
ensure_ascii=False, "\\n" line endings, documents in source order).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SRC = Path("/work/shared/datasets/cranfield")


def words(text: str) -> int:
    """Whitespace-separated tokens holding a letter or digit (as in convert_smart.py)."""
    return sum(1 for token in text.split() if any(c.isalnum() for c in token))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str]) -> int:
    src = Path(argv[0]) if argv else DEFAULT_SRC
    out = Path(argv[1]) if len(argv) > 1 else HERE / "cranfield-titles"
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    docs = []
    with open(src / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                raw = json.loads(line)
                docs.append({"_id": str(raw["_id"]), "text": raw.get("title", "").strip()})
    with open(out / "corpus.jsonl", "w", encoding="utf-8", newline="\n") as fh:
        fh.writelines(json.dumps(d, ensure_ascii=False, sort_keys=True) + "\n" for d in docs)
    shutil.copyfile(src / "queries.jsonl", out / "queries.jsonl")
    shutil.copyfile(src / "qrels" / "test.tsv", out / "qrels" / "test.tsv")

    with open(src / "queries.jsonl", encoding="utf-8") as fh:
        queries = [json.loads(line) for line in fh if line.strip()]
    with open(src / "qrels" / "test.tsv", encoding="utf-8") as fh:
        rows = [line.rstrip("\n").split("\t") for line in fh][1:]
    pairs = [r for r in rows if len(r) == 3]
    empty = [d["_id"] for d in docs if not d["text"]]
    judged_empty = sorted({r[1] for r in pairs} & set(empty), key=int)
    mean_q = round(sum(words(q["text"]) for q in queries) / len(queries), 2)
    mean_d = round(sum(words(d["text"]) for d in docs) / len(docs), 2)
    meta = {
        "name": "cranfield-titles",
        "genre": "titles",
        "query_style": "verbose" if mean_q > 12 else "keyword",
        "mean_query_words": mean_q,
        "mean_doc_words": mean_d,
        "held_out": False,
        "source": {
            "derived_from": str(src),
            "description": "derived from the shared Cranfield collection: each document "
                           "reduced to its title",
            "script": "bench/collections/derive_titles.py",
            "sha256": {name: sha256(src / name)
                       for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv")},
        },
        "licence": "as for the shared Cranfield collection (its README, "
                   "/work/shared/datasets/README.md, states no licence); Cranfield is "
                   "distributed freely for research by the University of Glasgow IR group",
        "docs": len(docs),
        "queries": len(queries),
        "qrels": len(pairs),
        "notes": "; ".join([
            "corpus: {'_id', 'text': the shared corpus's 'title', whitespace-trimmed}; no "
            "'title' key; the title text is otherwise exactly as in the shared file (already "
            "lowercased there, with its ' .' spacing)",
            "queries.jsonl and qrels/test.tsv copied byte for byte (graded 1..4 as in the "
            "shared set, query ids 1..225)",
            f"documents whose shared title is empty keep empty text: {empty}"
            + (f" ({judged_empty} of them judged)" if judged_empty else ""),
            "mean words count whitespace-separated tokens holding a letter or digit; "
            "query_style is 'verbose' when mean_query_words > 12, else 'keyword'",
        ]),
    }
    with open(out / "meta.json", "w", encoding="utf-8", newline="\n") as fh:
        fh.write(json.dumps(meta, ensure_ascii=False, sort_keys=True, indent=2) + "\n")
    print(f"cranfield-titles: {len(docs)} docs, {len(queries)} queries, {len(pairs)} qrels, "
          f"mean query words {mean_q}, mean doc words {mean_d}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
