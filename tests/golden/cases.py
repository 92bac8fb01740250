"""The golden cases: (corpus, query, budget, seed, provider) whose exact result bytes are pinned.

Add a case by appending to CASES and running ``python -m tests.golden.regenerate``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPORA = HERE / "corpora"
EXPECTED = HERE / "expected"
MANIFEST = HERE / "MANIFEST.json"


@dataclass(frozen=True)
class Case:
    name: str
    corpus: str
    query: str
    budget: int
    seed: str
    provider: str = "tfcosine"
    decompose: bool = True


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
         "s-3", provider="bm25"),
    Case("bm25-no-decompose", "port_small.jsonl", "crane faults and tide windows", 6, "run-1",
         provider="bm25", decompose=False),
    Case("bm25-prefix", "port_small.jsonl", "reef cran", 5, "pre", provider="bm25"),
    Case("bm25-ties-backfill", "ties.json", "report and crane report", 12, "delta",
         provider="bm25"),
    Case("bm25-unicode", "unicode.json", "grösse krane and 港口", 4, "uni", provider="bm25"),
)
