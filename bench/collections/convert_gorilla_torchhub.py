"""Convert Gorilla APIBench's TorchHub split (ShishirPatil/gorilla) into a BEIR API catalog.

Run from a fetched mirror (a bare git dir), e.g.:

    python3 bench/collections/convert_gorilla_torchhub.py \
        /work/.mirror/ShishirPatil+gorilla/repo bench/collections/gorilla-torchhub

Documents: the 94 API entries of data/api/torchhub_api.jsonl (title = api_name, text =
description, parameters = the names in api_arguments).  Queries: the "###Instruction:"
text of each record of data/apibench/torchhub_eval.json; the judged answer is the API
whose api_call equals the record's api_call (the benchmark's own label).
"""

from __future__ import annotations

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _beirwrite import git_head, git_show, write_collection

API, EVAL = "data/api/torchhub_api.jsonl", "data/apibench/torchhub_eval.json"
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def param_names(args) -> list[str]:
    """Parameter names in an api_arguments value, exactly as spelled, first seen first."""
    if isinstance(args, dict):
        items = list(args)
    elif isinstance(args, list):
        items = [a.get("name", "") if isinstance(a, dict) else str(a) for a in args]
    elif isinstance(args, str):
        items = args.split(",")
    else:
        items = []
    names: list[str] = []
    for item in items:
        item = str(item).strip().split("=")[0].strip()  # "pretrained=True" -> "pretrained"
        if IDENT.fullmatch(item) and item not in names:
            names.append(item)
    return names


def api_id(call: str) -> str:
    repo = re.search(r"repo_or_dir\s*=\s*'([^']*)'", call)
    model = re.search(r"\bmodel\s*=\s*'([^']*)'", call)
    if repo and model:
        return f"{repo.group(1)}:{model.group(1)}"
    if repo:
        return repo.group(1)
    return " ".join(call.split())


def instruction(code: str) -> str:
    m = re.search(r"###Instruction:(.*?)(###Output|$)", code, re.S)
    return " ".join((m.group(1) if m else "").split())


def main(git_dir: str, out_dir: str) -> None:
    docs, by_call = [], {}
    for line in git_show(git_dir, API).splitlines():
        if not line.strip():
            continue
        api = json.loads(line)
        doc = {"_id": api_id(api["api_call"]), "title": api["api_name"].strip(),
               "text": api["description"].strip()}
        params = param_names(api.get("api_arguments"))
        if params:
            doc["fields"] = {"parameters": " ".join(params)}
        doc["metadata"] = {"api_call": api["api_call"], "domain": api["domain"],
                           "functionality": api["functionality"]}
        assert api["api_call"] not in by_call, api["api_call"]
        by_call[api["api_call"]] = doc["_id"]
        docs.append(doc)

    texts: dict[str, set[str]] = {}
    order: list[str] = []
    n_records = 0
    for line in git_show(git_dir, EVAL).splitlines():
        if not line.strip():
            continue
        n_records += 1
        rec = json.loads(line)
        text = instruction(rec["code"])
        if not text or rec["api_call"] not in by_call:
            continue
        if text not in texts:
            order.append(text)
        texts.setdefault(text, set()).add(by_call[rec["api_call"]])
    queries, qrels = [], []
    for n, text in enumerate(order):
        qid = f"th{n:04d}"
        queries.append({"_id": qid, "text": text})
        qrels.extend((qid, d) for d in sorted(texts[text]))

    def key(doc: dict) -> tuple:
        return doc["title"], doc["text"], doc.get("fields", {}).get("parameters", "")
    seen_keys: dict[tuple, int] = {}
    for doc in docs:
        seen_keys[key(doc)] = seen_keys.get(key(doc), 0) + 1
    clash = {doc["_id"] for doc in docs if seen_keys[key(doc)] > 1}
    n_groups = sum(1 for v in seen_keys.values() if v > 1)
    n_clash_q = len({q for q, d in qrels if d in clash})

    meta = {
        "name": "gorilla-torchhub",
        "source": {"repo": "ShishirPatil/gorilla", "commit": git_head(git_dir),
                   "paths": [API, EVAL, "LICENSE"]},
        "licence": "Apache-2.0",
        "notes": [
            f"Corpus: every line of {API} (94 APIs, api_call unique). _id = "
            "'<repo_or_dir>:<model>' parsed from api_call (just repo_or_dir when the call "
            "names no model); title = api_name exactly as spelled (several APIs share a "
            "title, e.g. 'torch.hub.load', 'vgg-nets', 'MEAL_V2'); text = description, "
            "trimmed. domain, functionality and api_call are kept under 'metadata' (not in "
            "text).",
            "Parameters: api_arguments dict keys, list items (or their 'name' when an item is "
            "an object), or a comma-split string; only identifier-shaped names are kept "
            "('pretrained=True' -> 'pretrained'; quoted values and prose such as 'N/A' "
            "dropped).",
            f"Queries: the text between '###Instruction:' and '###Output' in each of the "
            f"{n_records} records of {EVAL}, whitespace-collapsed; identical instructions are "
            "merged (union of labels). Judged tool = the corpus API whose api_call equals the "
            "record's api_call (all records matched). No sampling: all queries kept, ids "
            "'th<NNNN>' in file order.",
            "Caveat: APIBench instructions were generated by GPT-4 (self-instruct from the "
            "API docs), so they echo the documentation's wording; several APIs are "
            "near-duplicates (variants of one model family, e.g. vgg11..vgg19_bn, MEAL_V2 "
            "sizes) and only the labelled variant is judged relevant.",
            f"Indistinguishable documents: {len(clash)} APIs fall in {n_groups} groups "
            "whose title, text and parameters are identical (they differ only in the model "
            "named in api_call, kept in metadata and _id); "
            f"{n_clash_q} queries are judged against one member of such a group, so a "
            "retriever scoring only title/text/parameters cannot rank them first for sure.",
            "TensorFlow Hub split not converted: its 696 API lines hold only 80 distinct "
            "api_calls (212 lines are the same universal-sentence-encoder call) and 230 of "
            "688 eval queries target that one call.",
        ],
    }
    print(json.dumps(write_collection(out_dir, docs, queries, qrels, meta), indent=1)[:500])


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
