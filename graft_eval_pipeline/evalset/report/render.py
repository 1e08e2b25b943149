"""report.md and the one-screen summary (spec 6.6): ids, classes, counts and rates only (E8)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from graft_eval_pipeline.card.models import RISK_CLASSES
from graft_eval_pipeline.evalset.report.baseline import BaselineDiff, Change, flatten
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


def _baseline_line(diff: BaselineDiff | None) -> str:
    if diff is None:
        return "no baseline"
    if not diff.comparable:
        return "not comparable: " + "; ".join(diff.not_comparable)
    if diff.equal:
        return "matches"
    return f"differs: {len(diff.case_changes)} case field(s), {len(diff.changes)} other field(s)"


def render_change(change: Change) -> str:
    return f"{change.where}: {change.field} {render_value(change.baseline)} → {render_value(change.current)}"


def render_markdown(report: EvalReport, diff: BaselineDiff | None) -> str:
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
        + (f"skipped (secret detected) {len(secret_skips(report))}, " if secret_skips(report) else "")
        + f"cached {r.cached_results}, {r.duration_ms} ms",
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
    lines += ["", "## Changed cases", ""]
    if diff is None:
        lines.append("No baseline.")
    elif diff.case_changes:
        lines += [f"- {render_change(c)}" for c in diff.case_changes]
    else:
        lines.append("None.")
    other = [c for c in (diff.changes if diff else []) if not c.field.startswith("metrics.")]
    if other:
        lines += ["", "## Other changes", ""]
        lines += [f"- {c.field}: {render_value(c.baseline)} → {render_value(c.current)}" for c in other]
    return "\n".join(lines) + "\n"


def secret_skips(report: EvalReport) -> list[str]:
    """Ids of the cases a live run skipped because their prompt text held a secret."""
    return [row.id for row in report.cases if row.skipped == "secret_detected"]


def summary_text(report: EvalReport, diff: BaselineDiff | None, results: list[ThresholdResult]) -> str:
    """One screen for the CLI and the main job: headline metrics, baseline, thresholds."""
    s = report.set
    metrics = report.metrics.to_json_dict()
    lines = [
        f"set {s.set_id} ({s.kind}): {s.cases} cases, {s.scored} scored, mode {report.llm}, "
        f"complete {render_value(report.run.complete)}, run {report.run_id}",
    ]
    secrets = secret_skips(report)
    if secrets:
        lines.append(
            f"skipped (secret detected): {', '.join(secrets)}: clean them with "
            "`graft-eval rescan --set <set> --apply` (or run with --allow-secrets)"
        )
    lines += [f"  {name:<32} {render_value(metrics[name])}" for name in SUMMARY_METRICS]
    usage = report.metrics.usage
    lines.append(
        f"  {'tokens (in/out/cache r/w, calls)':<32} {usage.input_tokens}/{usage.output_tokens}/"
        f"{usage.cache_read_tokens}/{usage.cache_write_tokens}, {usage.calls}"
    )
    lines.append(f"baseline: {_baseline_line(diff)}")
    if diff is not None:
        lines += [f"  warning: {w}" for w in diff.warnings]
        shown = [*diff.case_changes, *diff.changes][:MAX_SUMMARY_CHANGES]
        lines += [
            f"  {render_change(c) if c in diff.case_changes else c.field}"
            + ("" if c in diff.case_changes else f": {render_value(c.baseline)} → {render_value(c.current)}")
            for c in shown
        ]
        hidden = len(diff.case_changes) + len(diff.changes) - len(shown)
        if hidden > 0:
            lines.append(f"  … and {hidden} more (see report.md)")
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
