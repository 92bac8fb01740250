"""The golden cases: (corpus, query, budget, seed, engine) whose exact result bytes are pinned.

Each released engine has its own directory, ``tests/golden/<name>@<version>/``: one file of
canonical result bytes per case and a MANIFEST of their sha256. Add a case by appending to
CASES and running ``python -m tests.golden.regenerate``; a released engine's bytes are never
rewritten (add a version to rookhaven/core/engines.py instead).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPORA = HERE / "corpora"

# Every case runs under the newest engine too; the first releases keep the cases they had.
NEWEST = ("hybrid@1",)
# Engines that were the newest once keep every case they pinned then, and no new one: their
# manifests (and so the digests the registry states) never change.
FORMERLY_NEWEST = ("bm25@2", "bm25@3", "bm25@4", "bm25@5", "bm25@6")


@dataclass(frozen=True)
class Case:
    name: str
    corpus: str
    query: str
    budget: int
    seed: str
    engine: str = "tfcosine@1"
    decompose: bool = True


def engine_dir(engine: str) -> Path:
    """Where the goldens of ``engine`` live."""
    return HERE / engine


def manifest_path(engine: str) -> Path:
    """The sha256 of every golden file of ``engine``, by case name."""
    return engine_dir(engine) / "MANIFEST.json"


CASES: tuple[Case, ...] = (
    Case("seed-example", "port_small.jsonl", "crane faults and tide windows", 4, "run-1"),
    Case("crane-and-reefer", "port_small.jsonl", "crane faults and reefer alarms", 10,
         "audit-2026"),
    Case("three-needs", "port_small.jsonl", "customs hold; pilot boarding, tide gauge", 9, "s-3"),
    Case("budget-one", "port_small.jsonl", "crane faults and tide windows and customs", 1, "tiny"),
    Case("budget-two-of-three", "port_small.jsonl", "crane, reefer, pilot", 2, "seed-x"),
    Case("large-budget", "port_small.jsonl", "berth maintenance then dredging", 40, "wide"),
    Case("no-decompose", "port_small.jsonl", "crane faults and tide windows", 6, "run-1",
         decompose=False),
    Case("stopwords-only", "port_small.jsonl", "and the of, to be", 5, "empty"),
    Case("duplicate-subquery", "port_small.jsonl", "tide windows and windows tide", 6, "dup"),
    Case("as-well-as", "port_small.jsonl", "reefer power as well as customs release", 8, "aw"),
    Case("unknown-terms", "port_small.jsonl", "zeppelin hangar", 5, "none"),
    Case("partial-match", "port_small.jsonl", "zeppelin crane", 5, "partial"),
    Case("numbers-whole", "port_small.jsonl", "berth 7, crane 4", 6, "nums"),
    Case("ties-seed-a", "ties.json", "crane fault", 5, "alpha"),
    Case("ties-seed-b", "ties.json", "crane fault", 5, "beta"),
    Case("ties-three-needs", "ties.json", "crane fault and tide window and reefer alarm", 7,
         "gamma"),
    Case("ties-backfill", "ties.json", "report and crane report", 12, "delta"),
    Case("unicode-casefold", "unicode.json", "grösse krane", 3, "uni"),
    Case("unicode-nfkc", "unicode.json", "fullwidth field", 3, "uni"),
    Case("unicode-cjk", "unicode.json", "港口 and ship", 4, "uni"),
    Case("underscore-split", "unicode.json", "acl error", 3, "uni"),
    Case("default-seed", "port_small.jsonl", "reefer alarms and customs holds", 5,
         "rookhaven-default"),
    Case("bm25-three-needs", "port_small.jsonl", "customs hold; pilot boarding, tide gauge", 9,
         "s-3", engine="bm25@1"),
    Case("bm25-no-decompose", "port_small.jsonl", "crane faults and tide windows", 6, "run-1",
         engine="bm25@1", decompose=False),
    Case("bm25-prefix", "port_small.jsonl", "reef cran", 5, "pre", engine="bm25@1"),
    Case("bm25-ties-backfill", "ties.json", "report and crane report", 12, "delta",
         engine="bm25@1"),
    Case("bm25-unicode", "unicode.json", "grösse krane and 港口", 4, "uni", engine="bm25@1"),
    # Characters assigned after Unicode 14.0 (U+1E030 Cyrillic modifier letters, 15.0;
    # U+1F6DD, 14.0's last emoji neighbours; U+11F00 Kawi, 15.0): bytes must not follow the
    # interpreter's Unicode database.
    Case("post-14-letters", "unicode_new.json", "\U0001e030\U0001e031 crane and kawi", 4,
         "uni15", engine="bm25@1"),
    Case("post-14-mixed", "unicode_new.json", "berth\U00011f04 ab\U0001e030cd", 3, "uni15",
         engine="bm25@1"),
    # bm25@3: feedback documents and expansion terms in the audit, per subquery and whole.
    Case("prf-three-needs", "port_small.jsonl", "crane faults; reefer power, customs holds", 9,
         "prf", engine="bm25@3"),
    Case("prf-one-need", "port_small.jsonl", "tide gauge readings at the pilot station", 6,
         "prf", engine="bm25@3"),
    Case("prf-ties", "ties.json", "crane fault and tide window", 8, "prf", engine="bm25@3"),
    # bm25@4: identifiers split, tool fields weighed, the predictor's decision in the audit.
    Case("tools-by-sysid", "tools.jsonl", "get a record by sys id", 4, "tools", engine="bm25@4"),
    Case("tools-camel", "tools.jsonl", "which roles does a user have; add user to group", 5,
         "tools", engine="bm25@4"),
    Case("tools-whole-name", "tools.jsonl", "getuserroles", 3, "tools", engine="bm25@4"),
    # bm25@5: words in every script (marks kept, unsegmented scripts in pairs of letters,
    # other scripts' clause marks split a query).
    Case("scripts-zh", "scripts.json", "起重机延误", 3, "words", engine="bm25@5"),
    Case("scripts-clauses", "scripts.json", "起重机，潮汐窗口。集装箱", 4, "words",
         engine="bm25@5"),
    Case("scripts-ja", "scripts.json", "コンテナクレーン", 3, "words", engine="bm25@5"),
    Case("scripts-ko", "scripts.json", "크레인 고장", 3, "words", engine="bm25@5"),
    Case("scripts-th", "scripts.json", "เครนขัดข้อง", 3, "words", engine="bm25@5"),
    Case("scripts-hi", "scripts.json", "क्रेन मरम्मत", 3, "words", engine="bm25@5"),
    Case("scripts-dotted-i", "scripts.json", "istanbul vinç", 3, "words", engine="bm25@5"),
    Case("scripts-marks", "scripts.json", "café crane، delay", 3, "words", engine="bm25@5"),
    # bm25@6: invisible characters removed, but for the zero-width space and non-joiner,
    # which part words (ADR 0040). Queries typed plainly, and with the characters in them.
    Case("invisible-soft-hyphen", "invisible.json", "crane maintenance postponed", 3,
         "visible", engine="bm25@6"),
    Case("invisible-in-query", "invisible.json",
         "main\u00adtenance and crane\ufe0f un\u00adloading", 4, "visible", engine="bm25@6"),
    Case("invisible-joiners", "invisible.json", "gantrycrane; tidewindow", 3, "visible",
         engine="bm25@6"),
    Case("invisible-non-joiner", "invisible.json", "می\u200cخواهم بندر", 3, "visible",
         engine="bm25@6"),
    Case("invisible-bidi-tags", "invisible.json", "café report, crane delay", 4, "visible",
         engine="bm25@6"),
    Case("invisible-zero-width-space", "invisible.json", "tenance crew", 2, "visible",
         engine="bm25@6"),
    Case("invisible-separators", "invisible.json",
         "crane alarm,\u200f tide window \u200fand\u200f pilot\u200b;\u200bberth", 4, "visible",
         engine="bm25@6"),
    # hybrid@1: bm25@6 fused with the wordllama model's exact cosine order (ADR 0044): words
    # the corpus does not use, a tool request in other words, the confident-lexical case,
    # text in other scripts (byte-fallback tokens), a query of no term but some tokens.
    Case("hybrid-other-words", "port_small.jsonl", "ship waits at the dock because of the sea",
         6, "hybrid", engine="hybrid@1"),
    Case("hybrid-tool-request", "tools.jsonl", "show me which permissions someone has", 4,
         "hybrid", engine="hybrid@1"),
    Case("hybrid-confident", "port_small.jsonl", "reefer power alarms", 5, "hybrid",
         engine="hybrid@1"),
    Case("hybrid-scripts", "scripts.json", "起重机延误 and crane delay", 4, "hybrid",
         engine="hybrid@1"),
    Case("hybrid-ties", "ties.json", "crane fault and tide window and reefer alarm", 7,
         "hybrid", engine="hybrid@1"),
    Case("hybrid-no-terms", "port_small.jsonl", "and the of, to be", 5, "hybrid",
         engine="hybrid@1"),
)


def runs() -> list[tuple[str, Case]]:
    """Every (engine, case) pinned: each case under its own engine and the newest ones."""
    pairs = [(case.engine, case) for case in CASES]
    for engine in FORMERLY_NEWEST:
        pinned = set(json.loads(manifest_path(engine).read_text()))
        pairs += [(engine, case) for case in CASES if case.engine != engine and case.name in pinned]
    pairs += [(engine, case) for engine in NEWEST for case in CASES if case.engine != engine]
    return pairs
