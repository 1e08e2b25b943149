"""A comparison as text, as markdown and as a section of report.html.

The text is the `graft-eval compare` screen; the markdown goes into report.md and Dagster metadata.

Ids, classes, counts and rates only, like the comparison itself.
"""

from __future__ import annotations

from html import escape

from graft_eval_pipeline.evalset.compare.blockers import BASE_TRIALS, BlockerRule, Candidate
from graft_eval_pipeline.evalset.compare.compare import (
    CaseChange,
    Comparison,
    FlakyCase,
    NonInferiority,
    RateComparison,
    RunSide,
)

MAX_LISTED_IDS = 20
BLOCKER_TEXT = {
    "newly_under_classified_sensitive": "newly under-classified from sensitive gold",
    "newly_unavailable_sensitive_floor": "newly unavailable with a sensitive floor",
}
RULE = (
    "a rate moves when its 95% interval excludes 0 and its exact p (McNemar; over trials the exact "
    "conditional test per case), Holm-adjusted over the rates of the overall verdict, is < 0.05; "
    "rates marked * are the model alone and stay out of the overall verdict; "
    "'could detect' is the smallest change of the rate these cases detect with 80% power"
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


def detectable_text(rate: RateComparison, points: bool = False) -> str:
    """What a "no clear difference" can and cannot rule out.

    The change this comparison would have caught with 80% power (`RateComparison.detectable`), as
    a rate (the text tables) or in percentage points (`points`: the HTML page, whose differences
    are in points).
    """
    if rate.detectable is None:
        return "too few shared cases to detect any change"
    if points:
        return f"could detect changes of ≥ {100 * rate.detectable:.1f} points"
    return f"could detect changes of ≥ {rate.detectable:.4f}"


def verdict_text(rate: RateComparison, points: bool = False) -> str:
    """The rate's verdict; "no clear difference" always with the change it could have detected."""
    if rate.verdict == "no clear difference":
        return f"{rate.verdict} ({detectable_text(rate, points)})"
    return rate.verdict


def rate_cells(rate: RateComparison) -> list[str]:
    """One row of the rate table (the compare screen, report.md, report.html, Dagster)."""
    return [
        rate.name + ("" if rate.in_overall else " *"),
        rate.better,
        f"{_num(rate.base)} ({rate.base_k}/{rate.base_n})",
        f"{_num(rate.new)} ({rate.new_k}/{rate.new_n})",
        _interval(rate),
        f"{rate.only_base} / {rate.only_new}",
        _p(rate.mcnemar_p),
        verdict_text(rate),
    ]


RATE_HEADER = [
    "rate",
    "better",
    "base (k/n)",
    "new (k/n)",
    "new − base [95% CI]",
    "only base / new",
    "exact p",
    "verdict",
]


MAX_COST_DECIMALS = 8


def moved_numbers(old: float, new: float, decimals: int = 4) -> tuple[str, str]:
    """Two amounts with enough decimals that values which differ never print alike.

    `$0.2570 → $0.2570` when it moved is shown as `0.25704 → 0.25698`; at most 8 decimals.
    """
    while decimals < MAX_COST_DECIMALS and old != new and f"{old:.{decimals}f}" == f"{new:.{decimals}f}":
        decimals += 1
    return f"{old:.{decimals}f}", f"{new:.{decimals}f}"


def _count_pair(name: str, old: int, new: int) -> str:
    if old == new:
        return f"{name} {old:,} (same)"
    return f"{name} {old:,} → {new:,} ({new - old:+,})"


def _cost_pair(old: float | None, new: float | None) -> str:
    if old is None or new is None:
        return f"cost {'n/a' if old is None else f'${old:.4f}'} → {'n/a' if new is None else f'${new:.4f}'}"
    if old == new:
        return f"cost ${old:.4f} (same)"
    before, after = moved_numbers(old, new)
    return f"cost ${before} → ${after}"


def usage_line(comparison: Comparison) -> str:
    """`usage moved (shared cases): ...` or `usage unchanged (...)`: reported apart from changed cases."""
    b, n = comparison.base_usage, comparison.new_usage
    state = "usage moved" if comparison.usage_moved else "usage unchanged"
    return f"{state} (shared cases, never a changed case): " + ", ".join(
        [
            _count_pair("input tokens", b.input_tokens, n.input_tokens),
            _count_pair("output tokens", b.output_tokens, n.output_tokens),
            _count_pair("calls", b.calls, n.calls),
            _cost_pair(b.cost_usd, n.cost_usd),
        ]
    )


def _change_text(change: CaseChange) -> str:
    parts = []
    if change.base_final != change.new_final:
        parts.append(f"final {change.base_final} → {change.new_final}")
    if change.base_model != change.new_model:
        parts.append(f"model {change.base_model} → {change.new_model}")
    if change.base_status != change.new_status:
        parts.append(f"status {change.base_status} → {change.new_status}")
    shown = {"final", "model", "status"}
    others = [f for f in change.fields if f not in shown]
    if others:
        parts.append("also " + ", ".join(others))
    gold = f" (gold {change.gold})" if change.gold else " (no gold)"
    notes = f": {', '.join(change.notes)}" if change.notes else ""
    return f"{change.id}: {', '.join(parts)}{gold}{notes}"


def changed_line(comparison: Comparison) -> str:
    """`changed cases: none; usage moved` or `changed cases: 2; usage unchanged`.

    One definition of a changed case: a decision field moved (scoring/changes.py).
    """
    usage = "usage moved" if comparison.usage_moved else "usage unchanged"
    return f"changed cases: {len(comparison.changed) or 'none'}; {usage}"


def trials_line(comparison: Comparison) -> str | None:
    """How many trials each run's rates use; None with one trial each."""
    c = comparison
    if c.base_trials == c.new_trials == 1:
        return None
    return (
        f"trials: base {c.base_trials}, new {c.new_trials} per case; the rates count every trial, "
        "clustered by case (the bootstrap draws cases with all their trials)"
    )


def flaky_text(case: FlakyCase) -> str:
    """`c-001 (gold sensitive): under-classified in 1 of 3 base trial(s), 0 of 1 new`."""
    gold = f" (gold {case.gold})" if case.gold else " (no gold)"
    return (
        f"{case.id}{gold}: under-classified in {case.base_under} of {case.base_scored} scored base "
        f"trial(s), {case.new_under} of {case.new_scored} new"
    )


FLAKY_TITLE = "flaky cases (trials of a run disagree: a flip, not a change)"


def blocker_rule_text(rule: BlockerRule) -> str:
    """How the per-case blockers were decided, in one line."""
    if rule.deterministic:
        return (
            "a case blocks when it shows the event and the base did not "
            "(scripted answers repeat: one trial decides)"
        )
    return (
        f"a case blocks when it reproduces: shown in too many of its trials to be a flip at "
        f"{rule.flip_tolerance:.0%} (exact binomial, {rule.alpha} / {rule.tests} test(s)) and in none "
        f"of the base's, at least {BASE_TRIALS}; a candidate needs {rule.confirm_trials} trial(s)"
    )


def _candidate_text(candidate: Candidate) -> str:
    shown = (
        f"shown in {candidate.shown} of {candidate.trials} trial(s), "
        f"base {candidate.base_shown} of {candidate.base_trials}"
    )
    need = (
        f"; needs {candidate.needs_trials} trial(s) to decide" if candidate.needs_trials is not None else ""
    )
    if candidate.base_needs_trials is not None:
        need += f"; the base needs {candidate.base_needs_trials} (save the baseline with --trials)"
    return f"{candidate.id}: {BLOCKER_TEXT[candidate.kind]} ({shown}{need})"


def candidate_lines(comparison: Comparison) -> list[tuple[str, list[str]]]:
    """(heading, lines) of the unconfirmed and flaky candidates, those that have any."""
    groups = [
        (
            "unconfirmed (not blocking: too few trials to tell a flip from a regression)",
            comparison.unconfirmed,
        ),
        ("flaky (not blocking: shown in some trials only)", comparison.flaky),
    ]
    return [(title, [_candidate_text(c) for c in found]) for title, found in groups if found]


MARGIN_RULE = (
    "non-inferiority: worse when the whole 95% interval of new − base is above the margin, not worse "
    "when its upper end is at or below it, better when below 0, else inconclusive at this n"
)


def margin_text(m: NonInferiority) -> str:
    """One rate's comparison line, for example.

    `underClassificationFinal: not worse (within margin) (margin 0.0300): new − base +0.0100
    [-0.0200, +0.0250] (3/100 → 4/100)`.
    """
    if m.difference is None or m.low is None or m.high is None:
        interval = "n/a"
    else:
        interval = f"{_num(m.difference, True)} [{_num(m.low, True)}, {_num(m.high, True)}]"
    return (
        f"{m.name}: {m.verdict} (margin {m.margin:.4f}): new − base {interval} "
        f"({m.base_k}/{m.base_n} → {m.new_k}/{m.new_n})"
    )


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
    trials = trials_line(c)
    if trials:
        lines.append(f"  {trials}")
    rows = [RATE_HEADER, *(rate_cells(r) for r in c.rates)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(RATE_HEADER))]
    lines.append("")
    lines += [
        "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    lines += ["", verdict_line(c), f"  ({RULE})"]
    lines.append(f"  ({blocker_rule_text(c.blocker_rule)})")
    if c.non_inferiority:
        lines.append("non-inferiority (margins from thresholds.json):")
        lines += [f"  {margin_text(m)}" for m in c.non_inferiority]
        lines.append(f"  ({MARGIN_RULE})")
    if c.blockers:
        lines.append("blockers:")
        lines += [f"  {b.id}: {BLOCKER_TEXT[b.kind]} ({b.detail})" for b in c.blockers]
    for title, found in candidate_lines(c):
        lines.append(f"{title}:")
        lines += [f"  {line}" for line in found]
    lines.append(usage_line(c))
    lines.append(changed_line(c))
    lines += [f"  {_change_text(change)}" for change in c.changed]
    if c.flaky_cases:
        lines.append(f"{FLAKY_TITLE}: {len(c.flaky_cases)}")
        lines += [f"  {flaky_text(case)}" for case in c.flaky_cases[:MAX_LISTED_IDS]]
        if len(c.flaky_cases) > MAX_LISTED_IDS:
            lines.append(f"  … and {len(c.flaky_cases) - MAX_LISTED_IDS} more")
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
    trials = trials_line(c)
    if trials:
        lines.append(f"- {trials}")
    lines += [
        "",
        "| " + " | ".join(RATE_HEADER) + " |",
        "|" + "---|" * len(RATE_HEADER),
        *("| " + " | ".join(rate_cells(r)) + " |" for r in c.rates),
        "",
        f"{RULE}; {c.resamples:,} resamples, seed {c.seed}.",
        "",
        usage_line(c),
        "",
    ]
    if c.non_inferiority:
        lines += [
            "Non-inferiority (margins from thresholds.json):",
            *(f"- {margin_text(m)}" for m in c.non_inferiority),
            "",
            f"{MARGIN_RULE[0].upper()}{MARGIN_RULE[1:]}.",
            "",
        ]
    lines += [f"Blockers: {blocker_rule_text(c.blocker_rule)}.", ""]
    if c.blockers:
        lines += [
            "Blockers:",
            *(f"- {b.id}: {BLOCKER_TEXT[b.kind]} ({b.detail})" for b in c.blockers),
            "",
        ]
    for title, found in candidate_lines(c):
        lines += [f"{title[0].upper()}{title[1:]}:", *(f"- {line}" for line in found), ""]
    lines.append(changed_line(c)[0].upper() + changed_line(c)[1:])
    lines += [f"- {_change_text(change)}" for change in c.changed[:100]]
    if c.flaky_cases:
        lines += ["", f"{FLAKY_TITLE[0].upper()}{FLAKY_TITLE[1:]}: {len(c.flaky_cases)}"]
        lines += [f"- {flaky_text(case)}" for case in c.flaky_cases[:100]]
    return "\n".join(lines) + "\n"


def comparison_html(comparison: Comparison) -> str:
    """The section of report.html (a live run compared with its baseline)."""
    c = comparison
    head = "".join(f"<th>{escape(h)}</th>" for h in RATE_HEADER)
    body = "".join(
        f'<tr data-rate="{escape(r.name)}" data-detectable="{"" if r.detectable is None else r.detectable}">'
        + "".join(f"<td>{escape(cell)}</td>" for cell in rate_cells(r))
        + "</tr>"
        for r in c.rates
    )
    notes = "".join(f"<li>{escape(note)}</li>" for note in c.notes)
    notes += "".join(f'<li class="warn-text">warning: {escape(w)}</li>' for w in c.warnings)
    trials = trials_line(c)
    notes += f"<li>{escape(trials)}</li>" if trials else ""
    parts = [
        '<section id="comparison"><h2>Comparison with the baseline</h2>',
        f'<p id="comparison-verdict"><b>{escape(verdict_line(c))}</b>: '
        f"base <code>{escape(c.base.run_id)}</code> → new <code>{escape(c.new.run_id)}</code>, "
        f"{c.shared} shared case(s)</p>",
        f"<ul>{notes}</ul>" if notes else "",
        f'<table id="comparison-rates"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>',
        f"<p>{escape(RULE)}; {c.resamples:,} resamples, seed {c.seed}.</p>",
        f"<p>Blockers: {escape(blocker_rule_text(c.blocker_rule))}.</p>",
    ]
    if c.non_inferiority:
        items = "".join(
            f'<li data-rate="{escape(m.name)}">{escape(margin_text(m))}</li>' for m in c.non_inferiority
        )
        parts.append(
            f'<h3>Non-inferiority</h3><ul id="non-inferiority">{items}</ul><p>{escape(MARGIN_RULE)}.</p>'
        )
    if c.blockers:
        items = "".join(
            f"<li>{escape(f'{b.id}: {BLOCKER_TEXT[b.kind]} ({b.detail})')}</li>" for b in c.blockers
        )
        parts.append(f'<h3>Blockers</h3><ul id="blockers">{items}</ul>')
    for title, found in candidate_lines(c):
        items = "".join(f"<li>{escape(line)}</li>" for line in found)
        parts.append(f"<h3>{escape(title[0].upper() + title[1:])}</h3><ul>{items}</ul>")
    if c.flaky_cases:
        items = "".join(f"<li>{escape(flaky_text(case))}</li>" for case in c.flaky_cases[:100])
        parts.append(
            f'<h3>{escape(FLAKY_TITLE[0].upper() + FLAKY_TITLE[1:])}</h3><ul id="flaky-cases">{items}</ul>'
        )
    parts.append(f"<p>{escape(usage_line(c))}</p></section>")
    return "".join(parts)
