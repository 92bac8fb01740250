"""A run's page: what it says of a re-ranking (finished, going, empty, huge) and of a
verification (clean, alarmed), self-contained; and ``rookhaven report``'s bad input."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import Any

import anyio
import pytest

from rookhaven import Document
from rookhaven.cli import report as report_cli
from rookhaven.cli.main import main
from rookhaven.core.compare import compare_rankings
from rookhaven.pipeline import Pipeline
from rookhaven.reports import page_for, rerank_page, verification_page
from rookhaven.reports.views import A_LOT, MOVERS, Made, RerankView, VerificationView, degree
from rookhaven.rerank import RerankRow, RerankSpec
from rookhaven.rerank.runner import hit_ids
from rookhaven.server.http import BearerToken, with_pages
from rookhaven.verification.models import Selection, Verdict, VerificationRun
from tests.rerank_support import NEW, OLD, REQUESTS, history, rerun, titled

MADE = Made("0.1.0", "2026-12-07 08:00:00 UTC")
@pytest.fixture
def pipeline() -> Iterator[Pipeline]:
    yield from history("p", titled(OLD), titled(NEW))


def _bars(page: str, label: str) -> dict[str, int]:
    """The bars of the picture titled ``label``: bin -> count."""
    chart = page[page.index(f'aria-label="{escape(label)}"'):]
    chart = chart[:chart.index("</svg>")]
    return {b: int(c) for c, b in re.findall(r'data-count="(\d+)" data-bin="([^"]*)"', chart)}


def _self_contained(page: str) -> None:
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    assert not re.search(r"<script|<link|<img|<iframe|src=|https?://|@import|url\(", page)


def test_a_finished_runs_page_says_what_changed_and_shows_the_movers_side_by_side(
        pipeline: Pipeline) -> None:
    run_id = rerun(pipeline)
    page = page_for(pipeline.store, run_id, MADE)
    _self_contained(page)
    rows = [RerankRow.model_validate_json(line) for index, chunk in
            sorted(pipeline.store.reranks.finished(run_id).items())
            for line in chunk.splitlines()]
    lot = sum(degree(r) == "a lot" for r in rows)
    little = sum(degree(r) == "a little" for r in rows)
    verdict = re.search(r'<p id="verdict">(.*?)</p>', page).group(1)  # type: ignore[union-attr]
    assert verdict.startswith("Switching to corpus port@2 (sha256:")
    assert f"changes the ranking of {lot + little} of {len(REQUESTS)} queries" in verdict
    assert f"{lot} a lot, {little} a little" in verdict
    assert sum(_bars(page, "share of the top k kept").values()) == len(REQUESTS)
    assert sum(_bars(page, "rank-biased overlap of each query's rankings").values()) == len(
        REQUESTS)
    assert _bars(page, "queries by how much their ranking changed")["a lot"] == lot
    movers = re.findall(r'<section class="mover">(.*?)</section>', page)
    assert 0 < len(movers) <= MOVERS
    first = movers[0]
    row = next(r for r in rows if f"#{r.index}: " in first)
    change = compare_rankings(
        [h.id for h in _hits(pipeline, row.old_key)],
        [h.id for h in _hits(pipeline, row.new_key)], row.recall_budget).as_dict()
    assert row.change == change and change["overlap_at_k"] == min(
        r.change["overlap_at_k"] for r in rows if r.change and r.change["rbo"] ==  # type: ignore[index]
        change["rbo"])
    for lost in change["lost"]:
        assert f'class="lost"><code>{lost}</code> — report {lost} (lost)' in first
    for gained in change["gained"]:
        assert f'class="gained"><code>{gained}</code>' in first
    assert f"rookhaven verify --key {row.old_key}" in first


def _hits(pipe: Pipeline, key: str | None) -> list[Document]:
    ids = hit_ids(pipe.store.results.get_many([key or ""])[0]) or []
    return [Document(id=i) for i in ids]


def test_a_run_still_going_says_how_far_it_is(pipeline: Pipeline) -> None:
    run_id = rerun(pipeline, chunk=5)
    store = pipeline.store
    store.client.hdel(store.keys.rerank_chunks(run_id), "3", "4")  # two chunks to go
    page = page_for(store, run_id, MADE)
    assert re.search(r'<p id="verdict">In progress: 15 of 23 queries compared \(65\.2%\)',
                     page)
    assert "<th>state</th><td>in progress</td>" in page


def test_an_empty_run_and_a_clean_and_an_alarmed_verification_say_so() -> None:
    empty = RerankView(run_id="rerank-0", spec=RerankSpec(source="file", baseline="b"),
                       total=0, rows=(), movers=(), made=MADE, names={})
    page = rerank_page(empty)
    _self_contained(page)
    assert "Nothing to compare: the run covers no query." in page
    assert '<p id="movers" class="note">No query changed.</p>' in page
    clean = VerificationRun(run_id="verify-1", started=1.0e9, finished=1.0e9 + 3,
                            selection=Selection(all=True), sample_seed=None, keys=[],
                            checked=5, matched=5, mismatched=0, drift=0, missing=0, alarms=0,
                            verdicts=[], matched_by_engine={"bm25@6": 5})
    page = verification_page(VerificationView(clean, MADE))
    _self_contained(page)
    assert "Clean: all 5 results checked replayed" in page
    assert '<p id="alarms" class="note">None.</p>' in page
    key = "sha256:" + "a" * 64
    alarmed = clean.model_copy(update={"matched": 3, "mismatched": 1, "missing": 1, "alarms": 2,
                                       "verdicts": [
        Verdict(key=key, outcome="mismatch", where="hits[2].id", stored_engine="bm25@6",
                current_engine="bm25@6", detail="stored by worker w1; leaf 7, proof ok"),
        Verdict(key="sha256:" + "b" * 64, outcome="erased", detail="logged at leaf 9")]})
    page = verification_page(VerificationView(alarmed, MADE))
    assert re.search(r'<p id="verdict" class="alarm">2 alarm\(s\) among 5 results checked: '
                     r"1 erased, 1 mismatch\.", page)
    table = page[page.index('<table id="alarms">'):]
    assert table.count("<tr>") == 3 and "<code>hits[2].id</code>" in table
    assert "stored by worker w1; leaf 7, proof ok" in table
    assert _bars(page, "results by outcome") == {"erased": 1, "match": 3, "mismatch": 1}


def test_a_run_of_100000_queries_makes_a_page_as_small_and_quick_as_a_small_one() -> None:
    rows = tuple(RerankRow(
        index=i, query=f"q{i}", seed="s", recall_budget=10, old_key="sha256:" + "0" * 64,
        new_key="sha256:" + "1" * 64, old_corpus="a", new_corpus="b", status="ok",
        change=compare_rankings([f"d{j}" for j in range(10)],
                                [f"d{(j + i % 7) % 12}" for j in range(10)], 10).as_dict())
        for i in range(100_000))
    view = RerankView(run_id="rerank-big", spec=RerankSpec(source="file", baseline="a"),
                      total=len(rows), rows=rows, movers=(), made=MADE, names={})
    began = time.perf_counter()
    page = rerank_page(view)
    assert time.perf_counter() - began < 10
    assert len(page.encode()) < 64_000  # aggregated: the pictures count, they do not list
    assert sum(_bars(page, "share of the top k kept").values()) == 100_000
    assert A_LOT == 0.8


def test_report_refuses_an_unknown_run_and_an_unwritable_file_in_one_line_writing_nothing(
        pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(report_cli.Store, "from_settings", lambda _: pipeline.store)
    pipeline.store.close = lambda: None  # type: ignore[method-assign]
    for name in [n for n in os.environ if n.startswith("ROOKHAVEN_")]:
        monkeypatch.delenv(name)
    out = tmp_path / "page.html"
    assert main(["report", "rerank-0000", "--out", str(out)]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no re-ranking run 'rerank-0000'" in err
    assert not out.exists()
    run_id = rerun(pipeline)
    # /proc takes no new file, even from root: a directory nobody can write.
    assert main(["report", run_id, "--out", "/proc/rookhaven-page.html"]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write the page there" in err
    assert not Path("/proc/rookhaven-page.html").exists()
    assert main(["report", run_id, "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []


def test_the_http_server_serves_a_runs_page_behind_its_token_read_only(
        pipeline: Pipeline) -> None:
    run_id = rerun(pipeline)
    seen: list[str] = []

    async def mcp(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(scope["path"])  # everything else goes on to the MCP app

    app = BearerToken(with_pages(mcp, pipeline.store), "s3cret")

    async def get(path: str, method: str = "GET", token: str | None = "s3cret",
                  ) -> tuple[int, dict[bytes, bytes], bytes]:
        sent: list[dict[str, Any]] = []
        headers = [(b"authorization", f"Bearer {token}".encode())] if token else []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await app({"type": "http", "path": path, "method": method, "headers": headers},
                  receive, send)
        if not sent:  # passed on to the MCP app, which answered nothing here
            return 0, {}, b""
        start = sent[0]
        return (start["status"], dict(start["headers"]),
                b"".join(m.get("body", b"") for m in sent[1:]))

    async def main() -> None:
        status, _, _ = await get(f"/runs/{run_id}.html", token=None)
        assert status == 401
        status, headers, body = await get(f"/runs/{run_id}.html")
        assert status == 200 and body.startswith(b"<!doctype html>")
        assert headers[b"content-type"] == b"text/html; charset=utf-8"
        assert headers[b"content-security-policy"].startswith(b"default-src 'none'")
        assert (await get(f"/runs/{run_id}.html", "POST"))[0] == 405
        status, _, body = await get("/runs/rerank-0000.html")
        assert status == 404 and b"no re-ranking run 'rerank-0000'" in body
        assert await get("/mcp") == (0, {}, b"") and seen == ["/mcp"]

    anyio.run(main)
