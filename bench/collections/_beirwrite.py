"""Shared helpers for the catalog converters (standard library only).

Not a converter itself: ``convert_*.py`` import it from this directory.
"""

from __future__ import annotations

import json
import os
import subprocess


def git_show(git_dir: str, path: str) -> str:
    """The text of ``path`` at HEAD of the bare git directory ``git_dir``."""
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"HEAD:{path}"],
                          check=True, capture_output=True).stdout.decode("utf-8")


def git_ls(git_dir: str, under: str) -> list[str]:
    """Paths of every file under ``under`` at HEAD."""
    out = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", "HEAD",
                          under], check=True, capture_output=True).stdout.decode("utf-8")
    return [line for line in out.splitlines() if line]


def git_head(git_dir: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "HEAD"], check=True,
                          capture_output=True).stdout.decode().strip()


def doc_words(doc: dict) -> int:
    params = doc.get("fields", {}).get("parameters", "")
    return len(f"{doc['title']} {doc['text']} {params}".split())


def write_collection(out_dir: str, docs: list[dict], queries: list[dict],
                     qrels: list[tuple[str, str]], meta: dict) -> dict:
    """Write corpus.jsonl, queries.jsonl, qrels/test.tsv and meta.json; return meta."""
    ids = [d["_id"] for d in docs]
    assert len(ids) == len(set(ids)), "duplicate document ids"
    qids = [q["_id"] for q in queries]
    assert len(qids) == len(set(qids)), "duplicate query ids"
    known, judged = set(ids), {q for q, _ in qrels}
    assert all(d in known for _, d in qrels), "judgement names a tool not in the corpus"
    assert set(qids) == judged, "every query needs a judgement and vice versa"
    assert len(set(qrels)) == len(qrels), "duplicate judgement"
    os.makedirs(os.path.join(out_dir, "qrels"), exist_ok=True)
    with open(os.path.join(out_dir, "corpus.jsonl"), "w", encoding="utf-8") as fh:
        for d in docs:
            fh.write(json.dumps(d, ensure_ascii=False) + "\n")
    with open(os.path.join(out_dir, "queries.jsonl"), "w", encoding="utf-8") as fh:
        for q in queries:
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    with open(os.path.join(out_dir, "qrels", "test.tsv"), "w", encoding="utf-8") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for q, d in qrels:
            fh.write(f"{q}\t{d}\t1\n")
    full = {"name": meta["name"], "genre": "catalog", "query_style": "natural",
            "held_out": meta.get("held_out", False), "source": meta["source"],
            "licence": meta["licence"], "docs": len(docs), "queries": len(queries),
            "qrels": len(qrels),
            "mean_query_words": round(sum(len(q["text"].split()) for q in queries)
                                      / len(queries), 2),
            "mean_doc_words": round(sum(doc_words(d) for d in docs) / len(docs), 2),
            "mean_doc_words_counts": "words of title + text + parameters, split on whitespace",
            "notes": meta["notes"]}
    with open(os.path.join(out_dir, "meta.json"), "w", encoding="utf-8") as fh:
        json.dump(full, fh, ensure_ascii=False, indent=2)
        fh.write("\n")
    return full
