"""A run's page as a person sees it: a real headless Chromium opens it offline (no network
at all), and what it shows is read from the DOM it rendered; a screenshot of each page is
kept under ``.cache/artifacts/`` for a person to look at."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from rookhaven.pipeline import Pipeline
from rookhaven.reports import page_for, verification_page
from rookhaven.reports.views import MOVERS, Made, VerificationView
from rookhaven.rerank import Reranker, RerankSpec
from rookhaven.verification.models import Selection, Verdict, VerificationRun
from tests.conftest import ROOT
from tests.rerank_support import NEW, OLD, REQUESTS, history, rerun, titled

ARTIFACTS = ROOT / ".cache" / "artifacts"
MADE = Made("0.1.0", "2026-12-07 08:00:00 UTC")

def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    return found


def rendered(page: str, name: str, tmp_path: Path) -> str:
    """The DOM Chromium renders from ``page`` opened as a file with no network; its
    screenshot is kept as ``ARTIFACTS/name.png``."""
    path = tmp_path / f"{name}.html"
    path.write_text(page, encoding="utf-8")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    common = [chromium(), "--headless=new", "--no-sandbox", "--disable-gpu",
              "--no-first-run", "--disable-background-networking", "--disable-extensions",
              # Offline: every host name resolves to nothing, no proxy is asked.
              "--host-resolver-rules=MAP * ~NOTFOUND", "--no-proxy-server",
              f"--user-data-dir={tmp_path / 'profile'}"]
    shot = ARTIFACTS / f"{name}.png"
    subprocess.run([*common, "--hide-scrollbars", "--window-size=1200,1800",
                    f"--screenshot={shot}", path.as_uri()],
                   capture_output=True, timeout=120, check=True)
    assert shot.stat().st_size > 10_000, "an empty screenshot"
    dom = subprocess.run([*common, "--dump-dom", path.as_uri()], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    assert "<body" in dom, dom[:500]
    return dom


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


@pytest.fixture
def pipeline() -> Iterator[Pipeline]:
    yield from history("b", titled(OLD), titled(NEW))


@pytest.mark.slow
def test_a_rerank_page_shows_its_verdict_pictures_and_movers_in_a_browser(
        pipeline: Pipeline, tmp_path: Path) -> None:
    run_id = rerun(pipeline, chunk=10)
    dom = rendered(page_for(pipeline.store, run_id, MADE), "rerank", tmp_path)
    verdict = _text(re.search(r'<p id="verdict"[^>]*>(.*?)</p>', dom, re.S).group(1))  # type: ignore[union-attr]
    assert re.fullmatch(r"Switching to corpus port@2 \(sha256:[0-9a-f]{64}\) changes the "
                        rf"ranking of \d+ of {len(REQUESTS)} queries \([\d.]+%\): \d+ a lot, "
                        r"\d+ a little; \d+ are unchanged\.", verdict), verdict
    # The pictures as drawn: every compared query in each, as many bars as bins.
    for label, bins in (("queries by how much their ranking changed", 4),
                        ("share of the top k kept", 10),
                        ("rank-biased overlap of each query", 20)):
        chart = dom[dom.index(f'aria-label="{label}'):]
        counts = [int(c) for c in re.findall(r'data-count="(\d+)"',
                                             chart[:chart.index("</svg>")])]
        assert len(counts) == bins and sum(counts) == len(REQUESTS), (label, counts)
    movers = re.findall(r'<section class="mover">(.*?)</section>', dom, re.S)
    assert 0 < len(movers) <= MOVERS
    for mover in movers:
        assert "<th>before</th><th>after</th>" in mover
        assert re.search(r'class="(gained|lost|moved)"', mover)
        assert re.search(r"</code> — report (d|n)\d+", mover)  # titles shown beside ids


@pytest.mark.slow
def test_an_empty_run_and_a_verification_with_alarms_render_in_a_browser(
        pipeline: Pipeline, tmp_path: Path) -> None:
    spec = RerankSpec(source="file", requests=[], baseline="port@1",
                      provider="bm25@4")
    reranker = Reranker(pipeline)
    run_id = reranker.start(spec)
    reranker.run(run_id)
    dom = rendered(page_for(pipeline.store, run_id, MADE), "rerank-empty", tmp_path)
    assert "Nothing to compare: the run covers no query." in _text(dom)
    run = VerificationRun(
        run_id="verify-20261207T080000.000000Z", started=1.8e9, finished=1.8e9 + 4,
        selection=Selection(sample=100, seed="night"), sample_seed="night", keys=[],
        checked=100, matched=98, mismatched=1, drift=0, missing=1, alarms=2,
        verdicts=[Verdict(key="sha256:" + "c" * 64, outcome="mismatch", where="hits[0].score",
                          stored_engine="bm25@6", current_engine="bm25@6",
                          detail="stored by worker host:1:ab at leaf 41; inclusion proof ok"),
                  Verdict(key="sha256:" + "d" * 64, outcome="erased",
                          detail="logged at leaf 77, now gone")],
        matched_by_engine={"bm25@6": 98})
    dom = rendered(verification_page(VerificationView(run, MADE)), "verification-alarms",
                   tmp_path)
    text = _text(dom)
    assert "2 alarm(s) among 100 results checked: 1 erased, 1 mismatch." in text
    table = dom[dom.index('<table id="alarms">'):]
    table = table[:table.index("</table>")]
    assert len(re.findall(r"<tr>", table)) == 3
    assert "hits[0].score" in table and "inclusion proof ok" in table
