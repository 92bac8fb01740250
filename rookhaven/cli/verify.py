"""``rookhaven verify``: replay stored results and compare bytes; exit 1 on any alarm.

With no selection, a seeded sample of ROOKHAVEN_VERIFY_SAMPLE results is checked, like the
nightly run. ``--history`` lists recent runs and alarms instead, with the jobs open now
and the store's running totals (job events ever recorded, results stored, alarms).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson

from ..config import STRATIFY, Settings
from ..core.canonical import canonical_bytes
from ..store import Store
from ..verification import Selection, VerificationRun, Verifier, check_keys
from ..verification.logcheck import pinned_from
from .options import positive_int, result_key, write_line


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("verify", help="replay stored results and compare bytes",
                                   description=__doc__)
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--all", action="store_true", help="check every stored result")
    chosen.add_argument("--key", action="append", default=[], metavar="KEY", type=result_key,
                        help="check this result key (repeatable)")
    chosen.add_argument("--sample", type=positive_int, dest="verify_sample", metavar="N",
                        help="check a seeded sample of N results (default: "
                             "ROOKHAVEN_VERIFY_SAMPLE)")
    chosen.add_argument("--history", action="store_true",
                        help="list recent runs and alarms, the jobs open now and the store's "
                             "running totals (JSON)")
    parser.add_argument("--seed", help="sample seed (default: derived from the time; recorded)")
    parser.add_argument("--corpus", help="only results over this corpus (name, digest, latest)")
    parser.add_argument("--stratify", choices=STRATIFY, dest="verify_stratify",
                        help="spread the sample by corpus or month stored "
                             "(default: ROOKHAVEN_VERIFY_STRATIFY)")
    parser.add_argument("--checkpoint", type=Path, dest="verify_checkpoint", metavar="FILE",
                        help="check the log against this signed checkpoint first (default: "
                             "ROOKHAVEN_VERIFY_CHECKPOINT)")
    parser.add_argument("--verifier-key", dest="verify_verifier_key", metavar="VKEY",
                        help="the key that must have signed it (NAME+HASH+KEY; default: "
                             "ROOKHAVEN_VERIFY_VERIFIER_KEY)")
    parser.add_argument("--mirror", type=Path, dest="log_mirror_dir", metavar="DIR",
                        help="check the log against its mirror outside Redis (`rookhaven log "
                             "mirror`): an erased result is named by it (default: "
                             "ROOKHAVEN_LOG_MIRROR_DIR)")
    parser.add_argument("--json", action="store_true", help="print the run record as JSON")
    parser.set_defaults(run=run)


def summary(run: VerificationRun) -> str:
    """A few lines a person reads: counts, the sample, then every non-match."""
    lines = [f"verification {run.run_id}: {run.checked} checked, {run.matched} matched, "
             f"{run.mismatched} mismatched, {run.missing} not replayable; "
             f"{run.alarms} alarm{'s' * (run.alarms != 1)}"]
    if run.mirror_leaves is not None:
        lines.append(f"the log checked against its mirror of {run.mirror_leaves} "
                     f"lea{'ves' if run.mirror_leaves != 1 else 'f'}")
    if run.sample_seed is not None:
        lines.append(f"sample seed {run.sample_seed!r}, stratified by "
                     f"{run.selection.stratify}")
    for v in run.verdicts:
        if v.outcome == "match":
            continue
        label = "ALARM " + v.outcome if v.alarm else v.outcome
        where = f" at {v.where}" if v.where else ""
        lines.append(f"  {label:<22} {v.key}{where}{'  ' + v.detail if v.detail else ''}")
    return "\n".join(lines)


def history(store: Store, count: int = 10) -> dict[str, Any]:
    """What ``--history`` prints: recent runs and alarms, the jobs open at this moment, and
    the store's running totals, each named for what it is.

    The store counts every job event ever recorded (``jobs_running`` in its counters hash
    is how many times a job *started* running); shown raw beside the runs it read as the
    number of jobs running now, so the events are listed as totals and the live counts
    separately, with the time they were taken.
    """
    counters = store.verifications.counters()
    events = {name.removeprefix("jobs_"): value for name, value in counters.items()
              if name.startswith("jobs_")}
    return {
        "as_of": store.now(),
        "runs": store.verifications.latest(count),
        "alerts": store.verifications.alerts(20),
        "jobs_open_now": store.jobs.counts(),
        "totals": {
            "job_events": events,
            **{name: value for name, value in counters.items() if not name.startswith("jobs_")},
        },
    }


def _progress(done: int, total: int) -> None:
    if done == total or done % max(1, total // 20) == 0:
        print(f"verify: {done}/{total} checked", file=sys.stderr, flush=True)


def run(args: argparse.Namespace, settings: Settings) -> int:
    store = Store.from_settings(settings)
    if args.history:
        write_line(orjson.dumps(history(store), option=orjson.OPT_INDENT_2))
        return 0
    selection = Selection(
        keys=args.key, all=args.all,
        sample=None if (args.all or args.key) else settings.verify_sample,
        seed=settings.check_sample_seed(args.seed), corpus=args.corpus,
        stratify=settings.verify_stratify,
    )
    check_keys(store, selection.keys)
    result = Verifier(store, settings).run(selection, progress=_progress,
                                           pinned=pinned_from(settings))
    if args.json:
        write_line(canonical_bytes(result))
    else:
        print(summary(result))
    return 0 if result.clean else 1
