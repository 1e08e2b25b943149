"""report.md and the one-screen summary (spec 6.6): ids, classes, counts and rates only (E8)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from graft_eval_pipeline.card.models import RISK_CLASSES
from graft_eval_pipeline.evalset.report.baseline import BaselineDiff, Change, Part, flatten
from graft_eval_pipeline.evalset.report.calibration import calibrate, calibration_markdown
from graft_eval_pipeline.evalset.report.compare import Comparison
from graft_eval_pipeline.evalset.report.compare_render import comparison_markdown, verdict_line
from graft_eval_pipeline.evalset.report.thresholds import check_failed, threshold_verdict
from graft_eval_pipeline.evalset.scoring import EvalReport, ThresholdResult

TABLE_EXCLUDED_PREFIXES = ("confusion.", "underClassificationByTag.")
SUMMARY_METRICS = (
    "underClassificationFinal",
    "severeUnderClassificationFinal",
    "exactAccuracyFinal",
    "underClassificationFloor",
    "severeUnderClassificationFloor",
    "outOfScopePrecision",
    "outOfScopeRecall",
    "flagPrecision",
    "flagRecall",
    "unavailableRate",
    "cardAcceptableRate",
    "costUsd",
)
MAX_SUMMARY_CHANGES = 15


def render_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(render_value(v) for v in value) + "]"
    return str(value)


def _delta(baseline: Any, current: Any) -> str:
    numeric = (int, float)
    if (
        isinstance(baseline, numeric)
        and isinstance(current, numeric)
        and not isinstance(baseline, bool)
        and not isinstance(current, bool)
    ):
        delta = round(current - baseline, 6)
        return "0" if delta == 0 else f"{delta:+g}"
    return "" if baseline == current else "changed"


def _table(header: list[str], rows: Iterable[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines


def _part_count(diff: BaselineDiff, part: Part) -> str:
    cases = len(diff.changed_case_ids(part))
    fields = sum(c.part == part for c in diff.changes)
    return f"{cases} case(s), {fields} report field(s)"


def _baseline_line(diff: BaselineDiff | None) -> str:
    """matches, or what differs by part: decisions (the gate), usage and context (reported)."""
    if diff is None:
        return "no baseline"
    if not diff.comparable:
        return "not comparable: " + "; ".join(diff.not_comparable)
    if diff.equal:
        return "matches"
    decisions = diff.part("decisions")
    parts = [f"decisions differ ({_part_count(diff, 'decisions')})" if decisions else "decisions match"]
    if diff.part("usage"):
        parts.append(f"usage differs ({_part_count(diff, 'usage')})")
    context = sorted({c.field.split(".")[0] for c in diff.part("context")})
    if context:
        parts.append("context differs: " + ", ".join(context))
    return "; ".join(parts)


def render_change(change: Change) -> str:
    return f"{change.where}: {change.field} {render_value(change.baseline)} → {render_value(change.current)}"


USAGE_TOTALS = (
    ("input tokens", "usage.inputTokens"),
    ("output tokens", "usage.outputTokens"),
    ("cache read tokens", "usage.cacheReadTokens"),
    ("cache write tokens", "usage.cacheWriteTokens"),
    ("calls", "usage.calls"),
    ("cost USD", "costUsd"),
)


def usage_change_line(report: EvalReport, diff: BaselineDiff) -> str:
    """The usage totals that moved, baseline → current, and in how many cases."""
    current = flatten(report.metrics.to_json_dict())
    moved = [
        f"{name} {render_value(diff.baseline_metrics.get(key))} → {render_value(current.get(key))}"
        for name, key in USAGE_TOTALS
        if diff.baseline_metrics.get(key) != current.get(key)
    ]
    cases = len(diff.changed_case_ids("usage"))
    return f"usage: {', '.join(moved) or 'totals unchanged'} (in {cases} case(s))"


def render_markdown(
    report: EvalReport,
    diff: BaselineDiff | None,
    accept: str | None = None,
    comparison: Comparison | None = None,
) -> str:
    """report.md: header, metric table, confusion matrices, per-tag UC, thresholds, changes."""
    s, r = report.set, report.run
    git = report.git
    lines = [
        f"# Evaluation report {report.run_id}",
        "",
        f"- Set: {s.set_id} ({s.kind}), {s.cases} cases, {s.scored} scored, {s.unlabeled} unlabeled, "
        f"{s.needs_adjudication} need adjudication",
        f"- Case set hash: `{s.case_set_hash}`",
        f"- Run: created {report.created_at.strftime('%Y-%m-%dT%H:%M:%SZ')}, mode {report.llm}, "
        f"complete {render_value(r.complete)}, skipped (budget) {r.skipped_budget}, "
        f"cached {r.cached_results}, {r.duration_ms} ms",
        f"- Prompt: {report.prompt.prompt_version} (fingerprint `{report.prompt.prompt_fingerprint}`)",
        f"- Models: fast {report.models.fast}, strong {report.models.strong}",
        f"- Git: {git.commit or 'unknown'}{' (dirty)' if git.dirty else ''}",
        f"- Baseline: {_baseline_line(diff)}",
    ]
    lines += [f"- Warning: {w}" for w in (diff.warnings if diff else [])]
    lines += ["", "## Metrics", ""]
    baseline = diff.baseline_metrics if diff else {}
    metric_rows = []
    for key, value in flatten(report.metrics.to_json_dict()).items():
        if key.startswith(TABLE_EXCLUDED_PREFIXES):
            continue
        base = baseline.get(key) if diff else None
        metric_rows.append(
            [
                key,
                render_value(value),
                render_value(base) if diff else "",
                _delta(base, value) if diff else "",
            ]
        )
    lines += _table(["metric", "value", "baseline", "Δ"], metric_rows)
    lines += ["", "## Confusion matrices (rows gold, columns predicted)"]
    for name in ("floor", "model", "final"):
        conf = getattr(report.metrics.confusion, name)
        rows = [
            [gold_class, *(str(n) for n in conf.matrix[i]), render_value(getattr(conf.recall, gold_class))]
            for i, gold_class in enumerate(RISK_CLASSES)
        ]
        rows.append(["precision", *(render_value(getattr(conf.precision, c)) for c in RISK_CLASSES), ""])
        lines += ["", f"### {name} (n = {conf.n})", ""]
        lines += _table(["gold \\ predicted", *RISK_CLASSES, "recall"], rows)
    lines += ["", "## Under-classification by tag", ""]
    by_tag = report.metrics.under_classification_by_tag
    if by_tag:
        lines += _table(
            ["tag", "n", "floor", "model", "final"],
            (
                [tag, str(t.n), render_value(t.floor), render_value(t.model), render_value(t.final)]
                for tag, t in by_tag.items()
            ),
        )
    else:
        lines.append("No tagged scored cases.")
    lines += ["", "## Thresholds", ""]
    if report.thresholds:
        lines += _table(
            ["threshold", "value", "limit", "result"],
            ([t.name, render_value(t.value), t.limit, threshold_verdict(t)] for t in report.thresholds),
        )
    else:
        lines.append("No thresholds for this set kind.")
    lines += [
        "",
        "## Verifier calibration against gold",
        "",
        calibration_markdown(calibrate(report.cases)).rstrip("\n"),
    ]
    lines += ["", "## Changed cases", ""]
    decisions = [c for c in diff.case_changes if c.part == "decisions"] if diff else []
    if diff is None:
        lines.append("No baseline.")
    elif decisions:
        lines += [f"- {render_change(c)}" for c in decisions]
    else:
        lines.append("None.")
    if diff is not None and diff.part("usage"):
        lines += ["", "## Usage changes", "", usage_change_line(report, diff)]
    other = diff.part("context") if diff else []
    if other:
        lines += ["", "## Other changes", ""]
        lines += [f"- {c.field}: {render_value(c.baseline)} → {render_value(c.current)}" for c in other]
    if comparison is not None:
        lines += ["", "## Comparison with the baseline", "", comparison_markdown(comparison).rstrip("\n")]
    if accept is not None:
        lines += ["", "## Accepting the change", "", "When the change is intended, review it and run:", ""]
        lines += ["```", accept, "```"]
    return "\n".join(lines) + "\n"


def _baseline_details(report: EvalReport, diff: BaselineDiff) -> list[str]:
    """The decision changes (at most MAX_SUMMARY_CHANGES), the usage totals, the context."""
    decisions = diff.part("decisions")
    shown = decisions[:MAX_SUMMARY_CHANGES]
    lines = [
        f"  {render_change(c)}"
        if c.where != "report"
        else f"  {c.field}: {render_value(c.baseline)} → {render_value(c.current)}"
        for c in shown
    ]
    if len(decisions) > len(shown):
        lines.append(f"  … and {len(decisions) - len(shown)} more (see report.md)")
    if diff.part("usage"):
        lines.append(f"  {usage_change_line(report, diff)}; not blocking unless thresholds.json says so")
    lines += [
        f"  {c.field}: {render_value(c.baseline)} → {render_value(c.current)}" for c in diff.part("context")
    ]
    return lines


def summary_text(
    report: EvalReport,
    diff: BaselineDiff | None,
    results: list[ThresholdResult],
    accept: str | None = None,
    comparison: Comparison | None = None,
) -> str:
    """One screen for the CLI and the main job: headline metrics, baseline, thresholds, and the
    command that accepts a change."""
    s = report.set
    metrics = report.metrics.to_json_dict()
    lines = [
        f"set {s.set_id} ({s.kind}): {s.cases} cases, {s.scored} scored, mode {report.llm}, "
        f"complete {render_value(report.run.complete)}, run {report.run_id}",
    ]
    lines += [f"  {name:<32} {render_value(metrics[name])}" for name in SUMMARY_METRICS]
    usage = report.metrics.usage
    lines.append(
        f"  {'tokens (in/out/cache r/w, calls)':<32} {usage.input_tokens}/{usage.output_tokens}/"
        f"{usage.cache_read_tokens}/{usage.cache_write_tokens}, {usage.calls}"
    )
    lines.append(f"baseline: {_baseline_line(diff)}")
    if diff is not None:
        lines += [f"  warning: {w}" for w in diff.warnings]
        if diff.comparable:
            lines += _baseline_details(report, diff)
    if comparison is not None:
        lines.append(f"compared with the baseline case by case: {verdict_line(comparison)}")
        lines += [f"  {r.name}: {r.verdict}" for r in comparison.rates if r.verdict != "no clear difference"]
        lines += [f"  blocker {b.id}: {b.detail}" for b in comparison.blockers]
    if accept is not None:
        lines.append(f"to accept these results as the baseline: {accept}")
    if results:
        failed = [t for t in results if not t.passed]
        verdict = "PASS" if not failed else "FAIL (provisional)" if not check_failed(results) else "FAIL"
        lines.append(f"thresholds: {verdict}")
        lines += [
            f"  {threshold_verdict(t)}: {t.name} = {render_value(t.value)} ({t.limit})"
            for t in results
            if not t.passed or t.na
        ]
    return "\n".join(lines) + "\n"


MAX_CHANGES_IN_CHECK = 50


def baseline_check_details(
    report: EvalReport, diff: BaselineDiff | None, accept: str | None
) -> dict[str, str | bool | list[str]]:
    """What the Dagster baseline checks show: the verdict by part, the changed decisions (at most
    MAX_CHANGES_IN_CHECK), the usage totals and the command that accepts the change."""
    decisions = diff.part("decisions") if diff is not None and diff.comparable else []
    shown = [render_change(c) if c.where != "report" else c.field for c in decisions[:MAX_CHANGES_IN_CHECK]]
    if len(decisions) > len(shown):
        shown.append(f"… and {len(decisions) - len(shown)} more (report.md)")
    details: dict[str, str | bool | list[str]] = {
        "verdict": _baseline_line(diff),
        "compared": diff is not None,
        "decisions_equal": diff is not None and diff.decisions_equal,
        "usage_equal": diff is not None and diff.usage_equal,
        "changed_cases": diff.changed_case_ids("decisions") if diff is not None else [],
        "decision_changes": shown,
        "usage": usage_change_line(report, diff) if diff is not None and diff.part("usage") else "unchanged",
    }
    if accept is not None:
        details["accept_command"] = accept
    return details
