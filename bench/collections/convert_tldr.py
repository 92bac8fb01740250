"""Convert tldr-pages (tldr-pages/tldr, pages/common/*.md) into a BEIR command catalog.

Run from a fetched mirror (a bare git dir), e.g.:

    python3 bench/collections/convert_tldr.py \
        /work/.mirror/tldr-pages+tldr/repo bench/collections/tldr
    python3 bench/collections/convert_tldr.py \
        /work/.mirror/tldr-pages+tldr/repo bench/collections/tldr-zh zh

A language code reads that translation (pages.<code>/common): the same catalog written
in another script, held out (never tuned on), to measure how text is split into terms.

Documents: a command page's name (its "# heading") and description ("> " lines).
Queries: one of the page's own example descriptions ("- List all files ...:"), whose
judged answer is that page's command.  The examples themselves (descriptions and
command lines) are never put into the documents.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _beirwrite import git_head, write_collection

UNDER = "pages/common"
N_DOCS, N_QUERIES = 600, 300
MNEMONIC = re.compile(r"\[([A-Za-z0-9]+)\]")


def h(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pages(git_dir: str, under: str) -> dict[str, str]:
    """Page file stem -> markdown, for every file under ``under`` at HEAD."""
    blob = subprocess.run(["git", "--git-dir", git_dir, "archive", "--format=tar", "HEAD",
                           under], check=True, capture_output=True).stdout
    out = {}
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        for member in tar:
            if member.isfile() and member.name.endswith(".md"):
                out[member.name[len(under) + 1:-3]] = \
                    tar.extractfile(member).read().decode("utf-8")
    return out


def parse(md: str) -> tuple[str, list[str], list[str], list[str]]:
    """(title, description lines, example descriptions, example commands) of one page."""
    title, desc, examples, commands = "", [], [], []
    for line in md.splitlines():
        line = line.strip()
        if line.startswith("# ") and not title:
            title = line[2:].strip()
        elif line.startswith(">"):
            desc.append(line[1:].strip())
        elif line.startswith("- "):
            examples.append(line[2:].strip())
        elif line.startswith("`"):
            commands.append(line)
    return title, desc, examples, commands


# A translated page's "See also" line, whatever its label: backticked command names and
# a few words around them ("另请参阅：`unzip`。").
SEE_ALSO_LABEL = 16


def translated_description(lines: list[str]) -> str:
    """A translated page's description: its lines without the "More information" line
    (the one with a link) or a "See also" line (commands and a short label)."""
    kept = []
    for n, line in enumerate(lines):
        if "<http" in line:
            continue
        outside = re.sub(r"`[^`]*`", "", line)
        if n and "`" in line and len(re.sub(r"[\W_]", "", outside)) <= SEE_ALSO_LABEL:
            continue
        kept.append(line)
    return " ".join(kept)


def query_text(example: str) -> str:
    text = MNEMONIC.sub(r"\1", example).strip()
    return text[:-1].rstrip() if text.endswith(":") else text


def main(git_dir: str, out_dir: str, lang: str | None = None) -> None:
    under = UNDER if lang is None else f"pages.{lang}/common"
    raw = pages(git_dir, under)
    parsed = {stem: parse(md) for stem, md in raw.items()}
    if lang is None:
        aliases = {s for s, (_, d, _, _) in parsed.items()
                   if any("This command is an alias of" in line for line in d)}
    else:  # an alias page's one example, in any language, is `tldr <original>`
        aliases = {s for s, (_, _, _, c) in parsed.items()
                   if c and all(line.startswith("`tldr ") for line in c)}
    # an example description used by more than one page is ambiguous: never a query
    uses: dict[str, set[str]] = {}
    for stem, (_, _, ex, _) in parsed.items():
        for e in ex:
            uses.setdefault(query_text(e).lower(), set()).add(stem)
    ambiguous = {t for t, s in uses.items() if len(s) > 1}

    chosen = sorted((s for s in parsed if s not in aliases), key=h)[:N_DOCS]
    docs = []
    for stem in chosen:
        title, desc, _, _ = parsed[stem]
        text = (" ".join(line for line in desc
                         if not line.startswith(("More information:", "See also:")))
                if lang is None else translated_description(desc))
        docs.append({"_id": stem, "title": title, "text": text.strip()})

    queries, qrels = [], []
    for stem in chosen:  # hash order: the first pages with an eligible example get a query
        if len(queries) == N_QUERIES:
            break
        _, _, ex, _ = parsed[stem]
        eligible = [(h(f"{stem}\n{e}"), n, e) for n, e in enumerate(ex)
                    if query_text(e) and query_text(e).lower() not in ambiguous]
        if not eligible:
            continue
        _, n, e = min(eligible)
        qid = f"{stem}#{n}"
        queries.append({"_id": qid, "text": query_text(e)})
        qrels.append((qid, stem))

    meta = {
        "name": "tldr" if lang is None else f"tldr-{lang}",
        "held_out": lang is not None,
        "source": {"repo": "tldr-pages/tldr", "commit": git_head(git_dir),
                   "paths": [f"{under}/*.md", "LICENSE.md"]},
        "licence": "CC BY 4.0 (pages); the repo's scripts/ directory is MIT",
        "notes": [
            f"Pages: every .md under {under} ({len(parsed)}); {len(aliases)} alias pages "
            + ("('This command is an alias of ...') dropped." if lang is None else
               "(every example command is `tldr ...`) dropped. Description: the '> ' lines "
               "but any with a link ('More information') and, after the first, any whose "
               f"text outside backticks has at most {SEE_ALSO_LABEL} letters or digits "
               "('See also' in the page's language)."),
            f"Corpus (deterministic): the {len(docs)} remaining pages with the smallest "
            "sha256(file stem); _id = file stem (e.g. 'git-commit'), title = the page's "
            "'# ' heading exactly as spelled (e.g. 'git commit'), text = its '> ' description "
            "lines joined by a space, without the 'More information:' and 'See also:' lines. "
            "No parameters (omitted 'fields'). Example lines are never in the documents.",
            f"Queries: walking the {len(docs)} pages in the same hash order, each page gets one "
            "query until "
            f"{N_QUERIES}: the example description with the smallest sha256(stem + newline + "
            "description). Query text = the example description with tldr's mnemonic "
            "brackets removed ('[c]reate' -> 'create') and the trailing colon dropped; "
            "backticks kept. id = '<stem>#<example index>'.",
            "Ambiguity filter: an example description that occurs (case-insensitively, after "
            f"the above clean-up) on more than one page of {under} is never used "
            f"({len(ambiguous)} such texts, e.g. 'Display help', 'Display version').",
            "Judgement: the page's own command, score 1. Caveat: many commands overlap (e.g. "
            "compressors, package managers, 'git' subcommands), so a request may be "
            "answerable by an unjudged command; queries are human-written by tldr "
            "contributors, often terse, and usually do not name the command.",
        ],
    }
    print(json.dumps(write_collection(out_dir, docs, queries, qrels, meta), indent=1)[:500])


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(*sys.argv[1:])
