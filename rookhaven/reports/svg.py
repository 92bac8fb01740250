"""Pictures for a report as plain inline SVG: no script, no font file, no network.

Every bar is a ``rect`` of class ``bar`` carrying its count (``data-count``) and a
``title`` a browser shows on hover, so a reader and a test read the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

WIDTH, HEIGHT, LEFT, BOTTOM, TOP = 520, 200, 44, 34, 14


def bins(values: Sequence[float], low: float, high: float, count: int) -> list[int]:
    """How many of ``values`` fall in each of ``count`` equal bins over [low, high] (the
    last bin holds ``high``; values outside are clamped into the end bins)."""
    counts = [0] * count
    span = high - low
    for value in values:
        at = int((value - low) / span * count) if span else 0
        counts[min(max(at, 0), count - 1)] += 1
    return counts


def histogram(counts: Sequence[int], labels: Sequence[str], title: str, axis: str) -> str:
    """A vertical bar chart of ``counts``, bin ``labels`` under the first, middle and last
    bars, ``axis`` naming what the bins measure."""
    most = max(counts, default=0) or 1
    inner_w, inner_h = WIDTH - LEFT - 10, HEIGHT - BOTTOM - TOP
    step = inner_w / max(len(counts), 1)
    parts = [f'<svg class="chart" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" '
             f'width="{WIDTH}" height="{HEIGHT}" aria-label="{escape(title)}">',
             f"<title>{escape(title)}</title>",
             f'<line x1="{LEFT}" y1="{TOP + inner_h}" x2="{LEFT + inner_w}" '
             f'y2="{TOP + inner_h}" class="axis"/>',
             f'<text x="{LEFT - 6}" y="{TOP + 4}" class="tick" text-anchor="end">{most}</text>',
             f'<text x="{LEFT - 6}" y="{TOP + inner_h}" class="tick" text-anchor="end">0</text>']
    for at, (count, label) in enumerate(zip(counts, labels, strict=True)):
        height = inner_h * count / most
        x, y = LEFT + at * step + 1, TOP + inner_h - height
        parts.append(f'<rect class="bar" data-count="{count}" data-bin="{escape(label)}" '
                     f'x="{x:.1f}" y="{y:.1f}" width="{max(step - 2, 1):.1f}" '
                     f'height="{height:.1f}"><title>{escape(label)}: {count}</title></rect>')
    last = len(labels) - 1
    for at in sorted({0, len(labels) // 2, last} if labels else set()):
        # The end labels hang inward, so none is cut at the picture's edge.
        x, anchor = ((LEFT + at * step, "start") if at == 0 and last else
                     (LEFT + (at + 1) * step, "end") if at == last and last else
                     (LEFT + at * step + step / 2, "middle"))
        parts.append(f'<text x="{x:.1f}" y="{TOP + inner_h + 14}" class="tick" '
                     f'text-anchor="{anchor}">{escape(labels[at])}</text>')
    parts.append(f'<text x="{LEFT + inner_w / 2:.1f}" y="{HEIGHT - 4}" class="label" '
                 f'text-anchor="middle">{escape(axis)}</text></svg>')
    return "".join(parts)


def bar_rows(items: Sequence[tuple[str, int]], title: str) -> str:
    """Horizontal bars, one per (label, count), longest for the largest count."""
    most = max((count for _, count in items), default=0) or 1
    row, label_w, bar_w = 26, 150, WIDTH - 150 - 70
    height = row * len(items) + 8
    parts = [f'<svg class="chart" role="img" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
             f'height="{height}" aria-label="{escape(title)}"><title>{escape(title)}</title>']
    for at, (label, count) in enumerate(items):
        y = 4 + at * row
        width = bar_w * count / most
        parts.append(f'<text x="{label_w - 8}" y="{y + 16}" class="tick" '
                     f'text-anchor="end">{escape(label)}</text>'
                     f'<rect class="bar" data-count="{count}" data-bin="{escape(label)}" '
                     f'x="{label_w}" y="{y}" width="{width:.1f}" height="{row - 6}">'
                     f'<title>{escape(label)}: {count}</title></rect>'
                     f'<text x="{label_w + width + 6:.1f}" y="{y + 16}" class="tick">'
                     f'{count}</text>')
    parts.append("</svg>")
    return "".join(parts)
