"""``rookhaven demo`` runs the whole pipeline with no services: embedded store, in-process
worker, jobs, a re-rank and verification, and says plainly that nothing is durable."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from tests.conftest import ROOT


def _isolated() -> list[str]:
    """A fresh network namespace with only loopback up: no Redis, no network at all."""
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        return []
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False)
    return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "isolated"] \
        if probe.returncode == 0 else []


def test_demo_runs_the_pipeline_end_to_end_without_any_service_or_network() -> None:
    # No ROOKHAVEN_* settings, and (where the machine allows) a network namespace in which
    # nothing listens: the demo must bring everything it needs.
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROOKHAVEN_")}
    command = [sys.executable, "-m", "rookhaven.cli.main", "demo", "--queries", "1"]
    done = subprocess.run([*_isolated(), *command], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = done.stdout
    assert "NOT durable" in out
    # What it says it submitted, it shows (one of twelve here) and says where the rest went.
    assert "submitted 12 jobs" in out and "The first 1 are shown in full" in out
    assert re.findall(r"^query \d+ of \d+: ", out, re.MULTILINE) == ["query 1 of 12: "]
    assert "the other 11 jobs are done too" in out
    # The columns are explained, and scores are the engine's integers, not rounded decimals
    # (the default bm25@6 counts 2**24 units, as bm25@2 did: ADR 0039, 0040).
    assert "`via` is the number of the subquery" in out and "units of 1/2^24" in out
    first_hit = out.split("----  ---------")[1].splitlines()[1].split()
    assert first_hit[0] == "1" and first_hit[2].isdigit(), first_hit
    # The staged tampers' alarm log lines are held back and said to be; stderr stays quiet.
    assert "held back here because this tamper is staged" in out
    assert "verification alarm" not in done.stderr, done.stderr[-2000:]
    assert "cached=True, same key=True" in out
    assert "historical queries re-run on the edited corpus through the worker" in out
    assert "0 mismatched, 0 not replayable; 0 alarms" in out
    assert "ALARM mismatch" in out and "at hits[0].rank" in out
    # The log section: a signed checkpoint is shown, and an erasure replay cannot see is caught.
    assert "\n\u2014 rookhaven-demo/log " in out
    assert "ALARM erased" in out and "now gone" in out
