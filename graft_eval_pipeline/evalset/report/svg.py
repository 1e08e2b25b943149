"""Small hand-written SVG charts for report.html: a heat map, horizontal bars and a line.

Hand-written rather than drawn by a plotting library: three chart shapes with a few dozen marks
each, inline in one offline file, deterministic text (a re-render of the same run gives the same
bytes), native tooltips through `<title>`, and no import cost on every run (docs/decisions.md,
Dependencies). Every string that enters goes through `escape`.
"""

from __future__ import annotations

from collections.abc import Sequence
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


def line_chart(points: Sequence[tuple[str, float | None]], label: str, current: str) -> str:
    """One rate over runs (0 to 1), oldest left; `current` (a run id) is drawn larger.

    A run where the rate was undefined (empty denominator) breaks the line.
    """
    width, height, left, top, bottom, right = 300, 130, 34, 10, 22, 10
    plot_w, plot_h = width - left - right, height - top - bottom
    step = plot_w / max(len(points) - 1, 1)

    def xy(k: int, value: float) -> tuple[float, float]:
        x = left + (step * k if len(points) > 1 else plot_w / 2)
        return x, top + plot_h * (1 - value)

    body = []
    for tick in (0.0, 0.5, 1.0):
        y = top + plot_h * (1 - tick)
        body.append(
            f'<line x1="{left}" y1="{_num(y)}" x2="{width - right}" y2="{_num(y)}" stroke="#e3e3e3"/>'
            f'<text x="{left - 4}" y="{_num(y + 4)}" text-anchor="end" font-size="10" '
            f'fill="#666">{tick:g}</text>'
        )
    segment: list[str] = []
    segments: list[list[str]] = []
    for k, (_run, value) in enumerate(points):
        if value is None:
            if segment:
                segments.append(segment)
            segment = []
            continue
        x, y = xy(k, value)
        segment.append(f"{_num(x)},{_num(y)}")
    if segment:
        segments.append(segment)
    body += [
        f'<polyline class="line" points="{" ".join(s)}" fill="none" stroke="#1f569e" stroke-width="2"/>'
        for s in segments
        if len(s) > 1
    ]
    for k, (run_id, value) in enumerate(points):
        if value is None:
            continue
        x, y = xy(k, value)
        radius = 4.5 if run_id == current else 3
        fill = "#c62828" if run_id == current else "#1f569e"
        body.append(
            f'<circle class="point" cx="{_num(x)}" cy="{_num(y)}" r="{radius}" fill="{fill}">'
            f"<title>{escape(run_id)}: {value:g}</title></circle>"
        )
    runs = f"{len(points)} run" + ("s" if len(points) != 1 else "")
    body.append(
        f'<text x="{left}" y="{height - 6}" font-size="10" fill="#666">{runs}, oldest left; '
        "red: this run</text>"
    )
    return _svg(width, height, label, body, "chart history")
