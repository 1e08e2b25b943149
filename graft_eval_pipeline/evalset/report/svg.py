"""Small hand-written SVG charts for report.html: a heat map, horizontal bars and a history line.

Hand-written rather than drawn by a plotting library: three chart shapes with a few dozen marks
each, inline in one offline file, deterministic text (a re-render of the same run gives the same
bytes), native tooltips through `<title>`, and no import cost on every run (docs/decisions.md,
Dependencies). Every string that enters goes through `escape`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

FONT = 'font-family="system-ui, sans-serif"'


def _num(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _svg(width: float, height: float, label: str, body: list[str], css_class: str) -> str:
    return (
        f'<svg class="{css_class}" viewBox="0 0 {_num(width)} {_num(height)}" width="{_num(width)}" '
        f'height="{_num(height)}" role="img" aria-label="{escape(label)}" {FONT} '
        'xmlns="http://www.w3.org/2000/svg">' + "".join(body) + "</svg>"
    )


def _cell_fill(share: float) -> str:
    """White to a deep blue; the text turns white on dark cells."""
    light, dark = (255, 255, 255), (31, 86, 158)
    rgb = [round(a + (b - a) * share) for a, b in zip(light, dark, strict=True)]
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def heatmap(matrix: Sequence[Sequence[int]], labels: Sequence[str], label: str) -> str:
    """A confusion matrix: rows gold, columns predicted; shade by the share of the row.

    Cells below the diagonal (predicted lower than gold: under-classified) get a red outline;
    the caller's caption says so.
    """
    cell, left, top = 64, 84, 40
    size = len(labels)
    width, height = left + cell * size + 8, top + cell * size + 30
    body = [
        f'<text x="{left + cell * size / 2}" y="14" text-anchor="middle" font-size="12" '
        'fill="#444">predicted</text>',
        f'<text x="12" y="{top + cell * size / 2}" text-anchor="middle" font-size="12" fill="#444" '
        f'transform="rotate(-90 12 {top + cell * size / 2})">gold</text>',
    ]
    for j, name in enumerate(labels):
        body.append(
            f'<text x="{left + cell * j + cell / 2}" y="{top - 8}" text-anchor="middle" '
            f'font-size="12">{escape(name)}</text>'
        )
    for i, name in enumerate(labels):
        row = matrix[i]
        total = sum(row)
        body.append(
            f'<text x="{left - 6}" y="{top + cell * i + cell / 2 + 4}" text-anchor="end" '
            f'font-size="12">{escape(name)}</text>'
        )
        for j, count in enumerate(row):
            share = count / total if total else 0.0
            x, y = left + cell * j, top + cell * i
            stroke = ' stroke="#c62828" stroke-width="2"' if j < i and count else ' stroke="#ccc"'
            ink = "#fff" if share > 0.55 else "#111"
            tip = f"gold {labels[i]}, predicted {labels[j]}: {count} of {total}"
            body.append(
                f'<g class="cell"><title>{escape(tip)}</title>'
                f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" rx="3" '
                f'fill="{_cell_fill(share)}"{stroke}/>'
                f'<text x="{x + cell / 2 - 1}" y="{y + cell / 2 + 5}" text-anchor="middle" '
                f'font-size="16" fill="{ink}">{count}</text></g>'
            )
    return _svg(width, height - 22, label, body, "chart heatmap")


def bar_chart(items: Sequence[tuple[str, int]], label: str, total: int) -> str:
    """Horizontal bars, one per item, with its count and share of `total`."""
    row, left, bar_width = 22, 170, 260
    height = 10 + row * max(len(items), 1)
    body: list[str] = []
    if not items:
        body.append('<text x="4" y="20" font-size="12" fill="#666">none</text>')
    most = max((n for _, n in items), default=1) or 1
    for k, (name, count) in enumerate(items):
        y = 6 + row * k
        length = bar_width * count / most
        share = f" ({100 * count / total:.0f} %)" if total else ""
        body.append(
            f'<g class="bar"><title>{escape(name)}: {count} case(s){share}</title>'
            f'<text x="{left - 6}" y="{y + 13}" text-anchor="end" font-size="12">{escape(name)}</text>'
            f'<rect x="{left}" y="{y}" width="{_num(max(length, 1))}" height="16" rx="2" fill="#5b8bd0"/>'
            f'<text x="{_num(left + length + 6)}" y="{y + 13}" font-size="12">{count}{share}</text></g>'
        )
    return _svg(left + bar_width + 80, height, label, body, "chart bars")


@dataclass(frozen=True)
class ChartPoint:
    """One run of a history chart.

    Its rate with the 95% interval, where it links, and what changed since the run before it (a
    marker is drawn there).
    """

    run_id: str
    label: str  # the run's date, `11-30 14:02`
    value: float | None
    low: float | None = None
    high: float | None = None
    href: str | None = None
    changed: tuple[str, ...] = ()  # "prompt", "engine": differs from the previous point
    current: bool = False
    failing: bool = False  # beyond the threshold of this run's kind
    note: str = ""  # more for the tooltip: k/n, mode


def nice_axis(values: Sequence[float]) -> tuple[float, float, float]:
    """(low, high, step) of an axis that holds `values` (rates in [0, 1]) with a little room.

    A 0 → 3.3% move fills the chart rather than 3 pixels of a 0-1 axis.
    """
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    span = high - low
    pad = max(span * 0.12, 0.01)
    low, high = max(0.0, low - pad), min(1.0, high + pad)
    for step in (0.001, 0.002, 0.005, 0.01, 0.02, 0.025, 0.05, 0.1, 0.2, 0.25, 0.5):
        if (high - low) / step <= 5:
            break
    low = math.floor(low / step + 1e-9) * step
    high = max(math.ceil(high / step - 1e-9) * step, low + step)
    return max(0.0, low), min(1.0, high), step


def _pct(value: float, step: float) -> str:
    digits = 0 if step >= 0.01 else 1
    return f"{100 * value:.{digits}f}%"


MARKER = "#7a5ea8"  # a change of prompt or engine: neither good nor bad
NEUTRAL = "#1f569e"
FAILURE = "#c62828"


def line_chart(points: Sequence[ChartPoint], label: str, threshold: float | None = None) -> str:
    """One rate over runs, oldest left.

    On an axis scaled to the values, their intervals and the threshold: the 95% interval as a
    band, the threshold as a dashed line, each point a link to its run's report, a marker where the
    prompt or the engine changed. Red marks a point beyond the threshold and nothing else; this run
    is drawn larger with a dark ring.

    A run where the rate was undefined (empty denominator) breaks the line and the band.
    """
    width, height, left, top, bottom, right = 360, 178, 44, 16, 40, 52
    plot_w, plot_h = width - left - right, height - top - bottom
    step_x = plot_w / max(len(points) - 1, 1)
    values = [v for p in points for v in (p.value, p.low, p.high) if v is not None]
    low, high, step = nice_axis([*values, *([threshold] if threshold is not None else [])])

    def x_of(k: int) -> float:
        return left + (step_x * k if len(points) > 1 else plot_w / 2)

    def y_of(value: float) -> float:
        return top + plot_h * (1 - (value - low) / (high - low))

    body: list[str] = []
    ticks = round((high - low) / step)
    for t in range(ticks + 1):
        tick = low + t * step
        y = y_of(tick)
        body.append(
            f'<line x1="{left}" y1="{_num(y)}" x2="{width - right}" y2="{_num(y)}" stroke="#e3e3e3"/>'
            f'<text class="tick" x="{left - 4}" y="{_num(y + 4)}" text-anchor="end" font-size="10" '
            f'fill="#666">{_pct(tick, step)}</text>'
        )
    segments: list[list[int]] = [[]]
    for k, p in enumerate(points):
        if p.value is None:
            segments.append([])
        else:
            segments[-1].append(k)
    for seg in segments:
        banded = [k for k in seg if points[k].low is not None and points[k].high is not None]
        if len(banded) > 1 or (len(banded) == 1 and len(points) == 1):
            upper = [f"{_num(x_of(k))},{_num(y_of(points[k].high or 0.0))}" for k in banded]
            lower = [f"{_num(x_of(k))},{_num(y_of(points[k].low or 0.0))}" for k in reversed(banded)]
            if len(banded) == 1:  # one run: a bar for its interval
                k = banded[0]
                upper = [f"{_num(x_of(k) - 4)},{_num(y_of(points[k].high or 0.0))}"]
                upper.append(f"{_num(x_of(k) + 4)},{_num(y_of(points[k].high or 0.0))}")
                lower = [f"{_num(x_of(k) + 4)},{_num(y_of(points[k].low or 0.0))}"]
                lower.append(f"{_num(x_of(k) - 4)},{_num(y_of(points[k].low or 0.0))}")
            body.append(
                f'<polygon class="band" points="{" ".join(upper + lower)}" fill="{NEUTRAL}" '
                'fill-opacity="0.13" stroke="none"/>'
            )
        if len(seg) > 1:
            line = " ".join(f"{_num(x_of(k))},{_num(y_of(points[k].value or 0.0))}" for k in seg)
            body.append(
                f'<polyline class="line" points="{line}" fill="none" stroke="{NEUTRAL}" stroke-width="2"/>'
            )
    if threshold is not None:
        y = y_of(threshold)
        body.append(
            f'<line class="threshold" x1="{left}" y1="{_num(y)}" x2="{width - right}" y2="{_num(y)}" '
            'stroke="#333" stroke-width="1.2" stroke-dasharray="5 3"/>'
            f'<text x="{width - right + 4}" y="{_num(y + 4)}" font-size="10" fill="#333">limit '
            f"{_pct(threshold, step)}</text>"
        )
    for k, p in enumerate(points):
        if k and p.changed:
            x = (x_of(k - 1) + x_of(k)) / 2
            what = " and ".join(p.changed)
            body.append(
                f'<g class="marker"><title>{escape(what)} changed before {escape(p.run_id)}</title>'
                f'<line x1="{_num(x)}" y1="{top}" x2="{_num(x)}" y2="{top + plot_h}" stroke="{MARKER}" '
                'stroke-dasharray="2 2"/>'
                f'<text x="{_num(x)}" y="{top - 4}" text-anchor="middle" font-size="9" fill="{MARKER}">'
                f"{escape(what)}</text></g>"
            )
    shown = _labelled(len(points), next((k for k, p in enumerate(points) if p.current), None))
    for k in shown:
        body.append(
            f'<text class="run-label" x="{_num(x_of(k))}" y="{height - bottom + 14}" text-anchor="middle" '
            f'font-size="9" fill="#555">{escape(points[k].label)}</text>'
        )
    for k, p in enumerate(points):
        if p.value is None:
            continue
        x, y = x_of(k), y_of(p.value)
        fill = FAILURE if p.failing else NEUTRAL
        ring = ' stroke="#111" stroke-width="2"' if p.current else ' stroke="#fff" stroke-width="1"'
        bounds = f" [{p.low:.1%}–{p.high:.1%}]" if p.low is not None and p.high is not None else ""
        tip = f"{p.run_id}: {p.value:.1%}{bounds}" + (f", {p.note}" if p.note else "")
        tip += " (this run)" if p.current else ""
        circle = (
            f'<circle class="point" cx="{_num(x)}" cy="{_num(y)}" r="{5 if p.current else 3.5}" '
            f'fill="{fill}"{ring}><title>{escape(tip)}</title></circle>'
        )
        if p.href is not None:
            circle = f'<a class="run-link" href="{escape(p.href, quote=True)}">{circle}</a>'
        body.append(circle)
    runs = f"{len(points)} run" + ("s" if len(points) != 1 else "")
    body.append(
        f'<text x="{left}" y="{height - 6}" font-size="10" fill="#666">{runs}, oldest left; '
        "ringed: this run; click a point for its report</text>"
    )
    return _svg(width, height, label, body, "chart history")


def _labelled(count: int, current: int | None, most: int = 5) -> list[int]:
    """Which points get a run label: up to `most`, evenly spread, the first, the last and this run."""
    if count <= most:
        return list(range(count))
    picks = {round(i * (count - 1) / (most - 1)) for i in range(most)}
    if current is not None:
        picks = {p for p in picks if abs(p - current) > (count - 1) / (2 * most) or p == current} | {current}
    return sorted(picks)
