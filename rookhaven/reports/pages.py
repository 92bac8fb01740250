"""A run's page: one self-contained HTML document (inline style and SVG, no script, no
network), readable offline years later. Pure: views in, text out."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from html import escape
from typing import Any

from ..rerank.runner import summarize
from ..verification.models import ALARMS
from . import svg
from .views import A_LOT, Hit, Made, Mover, RerankView, VerificationView, degree

STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;
max-width:1100px;color:#1d1d1f;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.8em}
h3{font-size:1em;margin:1.2em 0 .3em}
#verdict{font-size:1.15em;padding:.7em 1em;border-left:5px solid #2b6cb0;background:#eef4fb}
#verdict.alarm{border-color:#c53030;background:#fdf0f0}
table{border-collapse:collapse;margin:.4em 0}td,th{padding:.25em .6em;text-align:left;
vertical-align:top;border-bottom:1px solid #e2e2e2}th{background:#f5f5f7}
code{font:12px ui-monospace,monospace;word-break:break-all}
.charts{display:flex;flex-wrap:wrap;gap:1em}.chart .bar{fill:#2b6cb0}
.chart .axis{stroke:#888}.chart .tick{font-size:11px;fill:#444}
.chart .label{font-size:12px;fill:#222}
.gained{background:#e6f6ea}.lost{background:#fde8e8}.moved{background:#fff6dd}
.note{color:#555;font-size:.9em}
"""


def _shell(title: str, body: str) -> str:
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{STYLE}</style></head>"
            f"<body>{body}</body></html>\n")


def _table(rows: Sequence[tuple[str, str]], ident: str) -> str:
    """A two-column table of already escaped cells."""
    cells = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<table id="{ident}">{cells}</table>'


def _when(stamp: float | None) -> str:
    if stamp is None:
        return "-"
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _mean(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def rerank_page(view: RerankView) -> str:
    """The page of a re-ranking run, finished or still going (it says how far)."""
    rows, spec = view.rows, view.spec
    degrees = Counter(degree(r) for r in rows)
    changes = [r.change for r in rows if r.change is not None]
    target = " with ".join(part for part in (
        f"corpus {view.corpus(spec.target_corpus)}" if spec.target_corpus else "",
        f"engine {spec.provider}" if spec.provider else "") if part) or "the same recipe"
    body = [f"<h1>Re-ranking run <code>{escape(view.run_id)}</code></h1>",
            f'<p id="verdict">{escape(_rerank_verdict(view, degrees, target))}</p>',
            "<h2>Recipe</h2>", _table(_rerank_recipe(view, target), "recipe")]
    body.append("<h2>How much changed</h2>")
    body.append('<div class="charts">' + svg.bar_rows(
        [(name, degrees[name]) for name in ("not at all", "a little", "a lot", "failed")],
        "queries by how much their ranking changed") + "</div>")
    body.append(f'<p class="note">"A lot": the new top k keeps less than {A_LOT:.0%} of the '
                "old one's documents; \"a little\": fewer moved. Every picture counts every "
                "compared query; the side-by-side rankings below show the "
                f"{len(view.movers)} that moved most (lowest rank-biased overlap).</p>")
    body.append('<div class="charts">' + "".join(_rerank_charts(changes)) + "</div>")
    summary = summarize(view.run_id, rows)
    body.append(_table([
        ("mean overlap@k", _mean(summary.mean_overlap_at_k)),
        ("mean Kendall's tau", _mean(summary.mean_kendall_tau)),
        ("mean RBO", _mean(summary.mean_rbo)),
        ("documents gained / lost", f"{summary.documents_gained:,} / "
                                    f"{summary.documents_lost:,}"),
        ("largest rank displacement", str(summary.max_displacement)),
    ], "means"))
    body.append("<h2>The queries that moved most</h2>")
    if not view.movers:
        body.append('<p id="movers" class="note">No query changed.</p>')
    else:
        body.append('<div id="movers">' + "".join(_mover(m) for m in view.movers) + "</div>")
    body.append(_made(view.made))
    return _shell(f"Re-ranking {view.run_id}", "".join(body))


def _rerank_verdict(view: RerankView, degrees: Counter[str], target: str) -> str:
    rows = view.rows
    compared = len(rows) - degrees["failed"]
    changed = degrees["a little"] + degrees["a lot"]
    if not view.finished:
        lead = (f"In progress: {len(rows):,} of {view.total:,} queries compared "
                f"({_share(len(rows), view.total)}); what follows covers those. ")
    else:
        lead = ""
    if view.total == 0:
        return "Nothing to compare: the run covers no query."
    if not rows:
        return lead + "No query has been compared yet."
    said = (f"Switching to {target} changes the ranking of {changed:,} of {compared:,} "
            f"queries ({_share(changed, compared)}): {degrees['a lot']:,} a lot, "
            f"{degrees['a little']:,} a little; {degrees['not at all']:,} are unchanged.")
    if degrees["failed"]:
        said += f" {degrees['failed']:,} could not be compared (see the report's rows)."
    return lead + said


def _started_by(askers: tuple[str, ...]) -> str:
    """Who started a run: the MCP tokens by name, or the operator's own command."""
    if not askers:
        return "the operator (the CLI, MCP over stdio or the nightly verifier)"
    return "MCP token " + ", ".join(f"<code>{escape(name)}</code>" for name in askers)


def _rerank_recipe(view: RerankView, target: str) -> list[tuple[str, str]]:
    spec = view.spec
    if spec.source == "audits":
        over = view.corpus(spec.corpus) if spec.corpus else "every corpus"
        source = (f"stored results over {over}, stored "
                  f"{_when(spec.since) if spec.since else 'from the first'} to "
                  f"{_when(spec.until)}" + (f", at most {spec.limit:,}" if spec.limit else ""))
    else:
        source = (f"{len(spec.requests):,} requests from a file, first run on "
                  f"{spec.baseline or 'their own corpus'}")
    params = ", ".join(f"{k}={v}" for k, v in sorted(spec.params.items())) or "defaults"
    return [("run", f"<code>{escape(view.run_id)}</code>"),
            ("history", escape(source)),
            ("target", escape(target)),
            ("target parameters", escape(params)),
            ("queries", f"{view.total:,} ({len(view.rows):,} compared so far, "
                        f"in chunks of {spec.chunk})"),
            ("state", "finished" if view.finished else "in progress"),
            ("started by", _started_by(view.askers)),
            ("resume or rerun", f"<code>rookhaven rerank --resume {escape(view.run_id)}"
                                "</code>")]


def _rerank_charts(changes: list[dict[str, Any]]) -> list[str]:
    taus = [c["kendall_tau"] for c in changes if c["kendall_tau"] is not None]
    shifts = [c["max_displacement"] for c in changes]
    top = max(shifts, default=0)
    width = max(1, math.ceil((top + 1) / 20))
    shift_counts = [0] * (top // width + 1)
    for shift in shifts:
        shift_counts[shift // width] += 1
    shift_labels = [str(at * width) if width == 1 else f"{at * width}-{at * width + width - 1}"
                    for at in range(len(shift_counts))]
    return [
        svg.histogram(svg.bins(taus, -1.0, 1.0, 20), _edges(-1.0, 1.0, 20),
                      "Kendall's tau of each query's old and new ranking", "Kendall's tau"),
        svg.histogram(svg.bins([c["rbo"] for c in changes], 0.0, 1.0, 20), _edges(0, 1, 20),
                      "rank-biased overlap of each query's rankings", "rank-biased overlap"),
        svg.histogram(svg.bins([c["overlap_at_k"] for c in changes], 0.0, 1.0, 10),
                      _edges(0, 1, 10), "share of the top k kept", "overlap@k"),
        svg.histogram(shift_counts, shift_labels, "the largest rank move in each query's top k",
                      "largest rank displacement"),
    ]


def _edges(low: float, high: float, count: int) -> list[str]:
    step = (high - low) / count
    return [f"{low + at * step:.2f}..{low + (at + 1) * step:.2f}" for at in range(count)]


def _mover(mover: Mover) -> str:
    row, change = mover.row, mover.row.change or {}
    gained, lost = set(change.get("gained", ())), set(change.get("lost", ()))
    shifts = change.get("displacement", {})

    def cell(hit: Hit | None, side: str) -> str:
        if hit is None:
            return "<td></td>"
        mark = ("lost" if hit.id in lost else "") if side == "old" else (
            "gained" if hit.id in gained else "")
        shift = shifts.get(hit.id, 0)
        if not mark and shift:
            mark = "moved"
        note = {"lost": " (lost)", "gained": " (gained)",
                "moved": f" (moved {shift:+d})" if side == "new" else ""}.get(mark, "")
        title = f" — {escape(hit.title)}" if hit.title else ""
        return (f'<td class="{mark}"><code>{escape(hit.id)}</code>{title}'
                f"{escape(note)}</td>")

    depth = max(len(mover.old), len(mover.new))
    lines = "".join(
        f"<tr><td>{at + 1}</td>"
        f"{cell(mover.old[at] if at < len(mover.old) else None, 'old')}"
        f"{cell(mover.new[at] if at < len(mover.new) else None, 'new')}</tr>"
        for at in range(depth))
    return (f'<section class="mover"><h3>#{row.index}: {escape(row.query)}</h3>'
            f'<p class="note">seed <code>{escape(row.seed)}</code>, budget {row.recall_budget};'
            f" overlap@k {change.get('overlap_at_k', 0):.2f}, RBO {change.get('rbo', 0):.3f},"
            f" Kendall's tau {_mean(change.get('kendall_tau'))}. Replay either: "
            f"<code>rookhaven verify --key {escape(row.old_key)}</code>"
            + (f", <code>rookhaven verify --key {escape(row.new_key)}</code>"
               if row.new_key else "")
            + '</p><table class="rankings"><tr><th>rank</th><th>before</th><th>after</th></tr>'
            f"{lines}</table></section>")


def verification_page(view: VerificationView) -> str:
    """The page of a verification run: what was checked and every alarm with its evidence."""
    run = view.run
    outcomes = Counter(v.outcome for v in run.verdicts)
    outcomes["match"] = run.matched
    alarms = [v for v in run.verdicts if v.outcome in ALARMS]
    if run.clean:
        verdict = (f"Clean: all {run.checked:,} results checked replayed to the bytes stored "
                   "under their keys.")
    else:
        verdict = (f"{run.alarms:,} alarm(s) among {run.checked:,} results checked: "
                   + ", ".join(f"{n:,} {o}" for o, n in sorted(outcomes.items())
                               if o in ALARMS) + ". Each is listed below with its evidence.")
    selection = run.selection
    chosen = ("the given keys" if selection.keys else "every stored result" if selection.all
              else f"a sample of {selection.sample or '?'} (stratified by {selection.stratify})")
    recipe = [("run", f"<code>{escape(run.run_id)}</code>"),
              ("checked", escape(chosen + (f" over {selection.corpus}" if selection.corpus
                                           else ""))),
              ("sample seed", f"<code>{escape(run.sample_seed or '-')}</code>"),
              ("started / finished", f"{_when(run.started)} / {_when(run.finished)}"),
              ("started by", _started_by((run.asked_by,) if run.asked_by else ())),
              ("results", f"{run.checked:,} checked, {run.matched:,} matched, "
                          f"{run.mismatched:,} mismatched, {run.missing:,} missing"),
              ("matched by engine", escape(", ".join(
                  f"{e}: {n:,}" for e, n in sorted(run.matched_by_engine.items())) or "-")),
              ("log mirror", "-" if run.mirror_leaves is None
               else f"{run.mirror_leaves:,} leaves")]
    marked = "" if run.clean else ' class="alarm"'
    body = [f"<h1>Verification run <code>{escape(run.run_id)}</code></h1>",
            f'<p id="verdict"{marked}>{escape(verdict)}</p>',
            "<h2>Recipe</h2>", _table(recipe, "recipe"), "<h2>Outcomes</h2>",
            '<div class="charts">' + svg.bar_rows(sorted(outcomes.items()),
                                                  "results by outcome") + "</div>",
            "<h2>Alarms</h2>"]
    if not alarms:
        body.append('<p id="alarms" class="note">None.</p>')
    else:
        head = ("<tr><th>key</th><th>outcome</th><th>first differing field</th>"
                "<th>stored by / replayed with</th><th>evidence</th></tr>")
        lines = "".join(
            f"<tr><td><code>{escape(v.key)}</code></td><td>{escape(v.outcome)}</td>"
            f"<td><code>{escape(v.where or '-')}</code></td>"
            f"<td>{escape(v.stored_engine or '-')} / {escape(v.current_engine or '-')}</td>"
            f"<td>{escape(v.detail or '-')}</td></tr>" for v in alarms)
        body.append(f'<table id="alarms">{head}{lines}</table>')
    body.append(_made(view.made))
    return _shell(f"Verification {run.run_id}", "".join(body))


def _made(made: Made) -> str:
    return (f'<p class="note">Made by Rookhaven {escape(made.version)} at {escape(made.at)} '
            "from the run's records in the store; the recipe above replays it.</p>")
