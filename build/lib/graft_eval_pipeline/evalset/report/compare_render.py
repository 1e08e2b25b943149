"""A comparison as text (the `graft-eval compare` screen) and as markdown (Dagster metadata).

Ids, classes, counts and rates only, like the comparison itself.
"""

from __future__ import annotations

from graft_eval_pipeline.evalset.report.compare import (
    CaseChange,
    Comparison,
    RateComparison,
    RunSide,
    UsageTotals,
)

MAX_LISTED_IDS = 20
BLOCKER_TEXT = {
    "newly_under_classified_sensitive": "newly under-classified from sensitive gold",
    "newly_unavailable_sensitive_floor": "newly unavailable with a sensitive floor",
}
RULE = (
    "a rate moves when its 95% interval excludes 0 and the exact McNemar p < 0.05; "
    "rates marked * are the model alone and stay out of the overall verdict"
)


def _num(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.4f}" if signed else f"{value:.4f}"


def _p(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3g}"


def _side(label: str, side: RunSide) -> str:
    return (
        f"  {label:<4} {side.run_id}  {side.llm}  {side.prompt_version} ({side.prompt_fingerprint[:8]})  "
        f"{side.models}  {side.cases} cases"
    )


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:MAX_LISTED_IDS])
    return shown + (f", … and {len(ids) - MAX_LISTED_IDS} more" if len(ids) > MAX_LISTED_IDS else "")


def _interval(rate: RateComparison) -> str:
    if rate.difference is None:
        return "n/a"
    if rate.low is None or rate.high is None:
        return _num(rate.difference, signed=True)
    return f"{_num(rate.difference, True)} [{_num(rate.low, True)}, {_num(rate.high, True)}]"


def _rate_cells(rate: RateComparison) -> list[str]:
    return [
        rate.name + ("" if rate.in_overall else " *"),
        rate.better,
        f"{_num(rate.base)} ({rate.base_k}/{rate.base_n})",
        f"{_num(rate.new)} ({rate.new_k}/{rate.new_n})",
        _interval(rate),
        f"{rate.only_base} / {rate.only_new}",
        _p(rate.mcnemar_p),
        rate.verdict,
    ]


RATE_HEADER = [
    "rate",
    "better",
    "base (k/n)",
    "new (k/n)",
    "new − base [95% CI]",
    "only base / new",
    "McNemar p",
    "verdict",
]


def _usage(totals: UsageTotals) -> tuple[str, str, str, str]:
    cost = "n/a" if totals.cost_usd is None else f"${totals.cost_usd:.4f}"
    return f"{totals.input_tokens:,}", f"{totals.output_tokens:,}", f"{totals.calls:,}", cost


def usage_line(comparison: Comparison) -> str:
    b, n = _usage(comparison.base_usage), _usage(comparison.new_usage)
    names = ("input tokens", "output tokens", "calls", "cost")
    return "usage (shared cases): " + ", ".join(
        f"{name} {old} → {new}" + ("" if old != new else " (same)")
        for name, old, new in zip(names, b, n, strict=True)
    )


def _change_text(change: CaseChange) -> str:
    parts = []
    if change.base_final != change.new_final:
        parts.append(f"final {change.base_final} → {change.new_final}")
    if change.base_model != change.new_model:
        parts.append(f"model {change.base_model} → {change.new_model}")
    if change.base_status != change.new_status:
        parts.append(f"status {change.base_status} → {change.new_status}")
    gold = f" (gold {change.gold})" if change.gold else " (no gold)"
    notes = f": {', '.join(change.notes)}" if change.notes else ""
    return f"{change.id}: {', '.join(parts)}{gold}{notes}"


def verdict_line(comparison: Comparison) -> str:
    blockers = len(comparison.blockers)
    return f"verdict: {comparison.verdict}" + (f"; {blockers} blocker(s)" if blockers else "; no blocker")


def render_comparison(comparison: Comparison) -> str:
    """The `graft-eval compare` screen."""
    c = comparison
    lines = [
        f"compare: {c.shared} shared case(s) paired by id; {c.resamples:,} paired bootstrap resamples "
        f"over case ids (seed {c.seed})",
        _side("base", c.base),
        _side("new", c.new),
    ]
    lines += [f"  {note}" for note in c.notes]
    lines += [f"  warning: {warning}" for warning in c.warnings]
    rows = [RATE_HEADER, *(_rate_cells(r) for r in c.rates)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(RATE_HEADER))]
    lines.append("")
    lines += [
        "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    lines += ["", verdict_line(c), f"  ({RULE})"]
    if c.blockers:
        lines.append("blockers:")
        lines += [f"  {b.id}: {BLOCKER_TEXT[b.kind]} ({b.detail})" for b in c.blockers]
    lines.append(usage_line(c))
    lines.append(f"changed cases: {len(c.changed) or 'none'}")
    lines += [f"  {_change_text(change)}" for change in c.changed]
    if c.only_in_base:
        lines.append(f"only in base: {_ids(c.only_in_base)}")
    if c.only_in_new:
        lines.append(f"only in new: {_ids(c.only_in_new)}")
    return "\n".join(lines) + "\n"


def comparison_markdown(comparison: Comparison) -> str:
    """The same as markdown, for the Dagster asset's metadata."""
    c = comparison
    lines = [
        f"**{verdict_line(c)}** — base `{c.base.run_id}` → new `{c.new.run_id}`, {c.shared} shared case(s)",
        "",
    ]
    lines += [f"- {note}" for note in c.notes]
    lines += [f"- warning: {warning}" for warning in c.warnings]
    lines += [
        "",
        "| " + " | ".join(RATE_HEADER) + " |",
        "|" + "---|" * len(RATE_HEADER),
        *("| " + " | ".join(_rate_cells(r)) + " |" for r in c.rates),
        "",
        f"{RULE}; {c.resamples:,} resamples, seed {c.seed}.",
        "",
        usage_line(c),
        "",
    ]
    if c.blockers:
        lines += [
            "Blockers:",
            *(f"- {b.id}: {BLOCKER_TEXT[b.kind]} ({b.detail})" for b in c.blockers),
            "",
        ]
    lines.append(f"Changed cases: {len(c.changed) or 'none'}")
    lines += [f"- {_change_text(change)}" for change in c.changed[:100]]
    return "\n".join(lines) + "\n"
