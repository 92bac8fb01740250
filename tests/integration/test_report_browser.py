"""A run's page as a person sees it: a real headless Chromium opens it offline (no network
at all), and what it shows is read from the DOM it rendered; a screenshot of each page is
kept under ``.cache/artifacts/`` for a person to look at."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import fakeredis
import pytest

from rookhaven import Document, RetrievalRequest
from rookhaven.config import Settings
from rookhaven.pipeline import Pipeline
from rookhaven.pipeline.inline import inline_pipeline
from rookhaven.reports import page_for, verification_page
from rookhaven.reports.views import MOVERS, Made, VerificationView
from rookhaven.rerank import Reranker, RerankSpec
from rookhaven.store import Store
from rookhaven.verification.models import Selection, Verdict, VerificationRun
from tests.conftest import ROOT

ARTIFACTS = ROOT / ".cache" / "artifacts"
MADE = Made("0.1.0", "2026-12-07 08:00:00 UTC")
DOCS = [Document(id=f"d{i:03d}", text=f"crane {i % 7} berth {i % 5} tide {i % 3} pilot {i % 11}",
                 fields={"title": f"berth report {i}"}) for i in range(120)]
EDITED = ([d.model_copy(update={"text": d.text.replace("crane", "gantry")}) if i % 4 == 0 else d
           for i, d in enumerate(DOCS) if i % 9 != 8]
          + [Document(id=f"n{i}", text=f"crane {i} tide pilot pilot") for i in range(8)])
REQUESTS = [RetrievalRequest(query=f"crane {i % 7} and tide {i % 3}", recallBudget=3 + i % 8,
                             seed=f"s{i}") for i in range(60)]


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
    client = fakeredis.FakeRedis()
    pipe = inline_pipeline(Store(client, "b"), Settings(engine="bm25@6", batch_size=20))
    pipe.add_corpus(DOCS, "berths")
    pipe.submit_many(REQUESTS, "berths")
    pipe.add_corpus(EDITED, "berths")
    yield pipe
    client.close()


@pytest.mark.slow
def test_a_rerank_page_shows_its_verdict_pictures_and_movers_in_a_browser(
        pipeline: Pipeline, tmp_path: Path) -> None:
    spec = RerankSpec(source="audits", corpus=pipeline.store.corpora.resolve("berths@1"),
                      target_corpus=pipeline.store.corpora.resolve("berths@2"), chunk=10)
    reranker = Reranker(pipeline)
    run_id = reranker.start(spec)
    reranker.run(run_id)
    dom = rendered(page_for(pipeline.store, run_id, MADE), "rerank", tmp_path)
    verdict = _text(re.search(r'<p id="verdict"[^>]*>(.*?)</p>', dom, re.S).group(1))  # type: ignore[union-attr]
    assert re.fullmatch(r"Switching to corpus berths@2 \(sha256:[0-9a-f]{64}\) changes the "
                        r"ranking of \d+ of 60 queries \([\d.]+%\): \d+ a lot, \d+ a little; "
                        r"\d+ are unchanged\.", verdict), verdict
    # The pictures as drawn: every compared query in each, as many bars as bins.
    for label, bins in (("queries by how much their ranking changed", 4),
                        ("share of the top k kept", 10),
                        ("rank-biased overlap of each query", 20)):
        chart = dom[dom.index(f'aria-label="{label}'):]
        counts = [int(c) for c in re.findall(r'data-count="(\d+)"',
                                             chart[:chart.index("</svg>")])]
        assert len(counts) == bins and sum(counts) == 60, (label, counts)
    movers = re.findall(r'<section class="mover">(.*?)</section>', dom, re.S)
    assert 0 < len(movers) <= MOVERS
    for mover in movers:
        assert "<th>before</th><th>after</th>" in mover
        assert re.search(r'class="(gained|lost|moved)"', mover)
        assert "berth report" in mover  # titles shown beside ids


@pytest.mark.slow
def test_an_empty_run_and_a_verification_with_alarms_render_in_a_browser(
        pipeline: Pipeline, tmp_path: Path) -> None:
    spec = RerankSpec(source="file", requests=[], baseline="berths@1",
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
