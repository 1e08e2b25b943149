"""report.md and the one-screen summary (spec 6.6): ids, classes, counts and rates only (E8).

Every rate is shown with its evidence, `k/n value [95% interval]` and, for under-classification,
`≤ upper bound`; numbers a fake run scripted are labeled "scripted".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from graft_eval_pipeline.card import RISK_CLASSES
from graft_eval_pipeline.evalset.compare import (
    Comparison,
    calibrate,
    calibration_markdown,
    comparison_markdown,
    verdict_line,
)
from graft_eval_pipeline.evalset.report.baseline import BaselineDiff, Change, flatten
from graft_eval_pipeline.evalset.report.case_kinds import markdown_cases_section
from graft_eval_pipeline.evalset.report.thresholds import check_failed, threshold_verdict
from graft_eval_pipeline.evalset.report.trials_render import trials_markdown
from graft_eval_pipeline.evalset.scoring import (
    BaselineSummary,
    EvalReport,
    LabelAgreement,
    LabelQuality,
    PairKappa,
    PopulationEstimates,
    PopulationRate,
    RateStat,
    SafetyRate,
    ThresholdResult,
    UsageMove,
    metric_stats,
    model_derived,
)

SUMMARY_METRICS = (
    "underClassificationFinal",
    "severeUnderClassificationFinal",
    "severeUnderClassificationSensitiveFinal",
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
# Nested metric parts shown in their own sections (or not at all) rather than as table rows.
TABLE_SECTIONS = frozenset({"confusion", "underClassificationByTag", "labelQuality", "population"})
MAX_SUMMARY_CHANGES = 10


MAX_VALUE_CHARS = 80
"""A changed value longer than this is shown by its size: no diff line runs past a screen or two."""


def render_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        text = "[" + ", ".join(render_value(v) for v in value) + "]"
        return text if len(text) <= MAX_VALUE_CHARS else f"[{len(value)} items]"
    if isinstance(value, dict):
        return f"{{{len(value)} fields}}"
    text = str(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


GATED_ON = {"value": "point value", "upper95": "95% upper bound", "lower95": "95% lower bound"}


def gated_value(t: ThresholdResult) -> str:
    """A threshold's number with what it is.

    `0.0950 (95% upper bound)`; a regression or baseline check's value as it is.
    """
    if t.value is None or isinstance(t.value, bool) or t.name.startswith(("regressionVsBaseline", "match")):
        return render_value(t.value)
    return f"{render_value(t.value)} ({GATED_ON[t.on]})"


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


def _decisions_text(diff: BaselineDiff) -> str:
    """`no changed cases`, or how many cases (and metric fields) changed their decisions."""
    cases = len(diff.changed_cases)
    fields = sum(c.part == "decisions" for c in diff.changes)
    if not cases and not fields:
        return "no changed cases"
    return f"decisions differ ({cases} changed case(s), {fields} report field(s))"


def baseline_line(diff: BaselineDiff | None) -> str:
    """matches, or what differs by part: decisions (changed cases: the gate), usage and context."""
    if diff is None:
        return "no baseline"
    if not diff.comparable:
        return "not comparable: " + "; ".join(diff.not_comparable)
    if diff.equal:
        return "matches"
    parts = [_decisions_text(diff)]
    if diff.usage_moved:
        fields = sum(c.part == "usage" for c in diff.changes)
        parts.append(f"usage moved ({len(diff.changed_case_ids('usage'))} case(s), {fields} report field(s))")
    context = sorted({c.field.split(".")[0] for c in diff.part("context")})
    if context:
        parts.append("context differs: " + ", ".join(context))
    return "; ".join(parts)


def render_change(change: Change) -> str:
    return f"{change.where}: {change.field} {render_value(change.baseline)} → {render_value(change.current)}"


def _context_change(change: Change) -> str:
    """A context change of the report (`prompt.promptVersion: a → b`) or of a case (with its id)."""
    if change.where != "report":
        return render_change(change)
    return f"{change.field}: {render_value(change.baseline)} → {render_value(change.current)}"


USAGE_TOTALS = (
    ("input tokens", "usage.inputTokens"),
    ("output tokens", "usage.outputTokens"),
    ("cache read tokens", "usage.cacheReadTokens"),
    ("cache write tokens", "usage.cacheWriteTokens"),
    ("calls", "usage.calls"),
    ("cost USD", "costUsd"),
)


def usage_moves(report: EvalReport, diff: BaselineDiff) -> list[UsageMove]:
    """The usage totals that moved, baseline and current."""
    current = flatten(report.metrics.to_json_dict())
    return [
        UsageMove(name=name, baseline=diff.baseline_metrics.get(key), current=current.get(key))
        for name, key in USAGE_TOTALS
        if diff.baseline_metrics.get(key) != current.get(key)
    ]


def usage_change_line(report: EvalReport, diff: BaselineDiff) -> str:
    """The usage totals that moved, baseline → current, and in how many cases."""
    moved = [
        f"{m.name} {render_value(m.baseline)} → {render_value(m.current)}" for m in usage_moves(report, diff)
    ]
    cases = len(diff.changed_case_ids("usage"))
    return f"usage: {', '.join(moved) or 'totals unchanged'} (in {cases} case(s))"


def baseline_summary(report: EvalReport, diff: BaselineDiff | None) -> BaselineSummary | None:
    """report.json's `baseline`: the verdict, the changed cases, and usage apart; None without one."""
    if diff is None:
        return None
    return BaselineSummary(
        verdict=baseline_line(diff),
        comparable=diff.comparable,
        changed_cases=diff.changed_cases,
        usage_moved=diff.usage_moved,
        usage_cases=len(diff.changed_case_ids("usage")) if diff.comparable else 0,
        usage=usage_moves(report, diff) if diff.usage_moved else [],
    )


def baseline_change_lines(report: EvalReport, diff: BaselineDiff | None) -> list[str]:
    """What differs from the baseline as report.html lists it.

    The decision changes of the changed cases, then one usage line (usage is never a case change),
    then the context.
    """
    if diff is None or not diff.comparable:
        return []
    lines = [render_change(c) for c in diff.case_changes if c.part == "decisions"]
    if diff.usage_moved:
        lines.append(usage_change_line(report, diff))
    lines += [_context_change(c) for c in diff.part("context")]
    return lines


SCRIPTED_NOTE = (
    "fake mode: model-derived rates, tokens and costs are scripted (the fake model's answers, "
    "not measurements); floor and label numbers are real"
)
NOT_A_SAMPLE = "not a sample: designed cases, so the rates describe these cases and no PR population"
TOO_SMALL = "too small to read (n < 5)"
WITH_CARD_NOTE = (
    "underClassificationFinalWithCard counts cases with a card; underClassificationFinalUnavailable "
    "counts cases whose card was unavailable, where the final class is raised to at least logic by "
    "rule, not judged by the model"
)
READING_NOTE = (
    "Each rate reads `k/n value [lo–hi]`: k of n cases and the two-sided 95% interval for the true "
    "rate (exact Clopper-Pearson for under-classification and unavailable, Wilson for the others); "
    "upper95 (`≤ u`) is the one-sided 95% upper bound. 0 errors in 30 cases only shows, with 95% "
    "confidence, that the rate is below 0.095; showing it is below 0.02 takes 149 error-free cases."
)


def fmt_number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def fmt_interval(bounds: tuple[float, float] | None) -> str:
    return "" if bounds is None else f"[{bounds[0]:.3f}–{bounds[1]:.3f}]"


def fmt_rate(stat: RateStat) -> str:
    """`0/30 0.000 [0.000–0.116] ≤ 0.095`: counts, value, interval and (safety rates) upper bound."""
    text = f"{stat.k}/{stat.n} {fmt_number(stat.value)}"
    if stat.ci95 is not None:
        text += f" {fmt_interval(stat.ci95)}"
    if isinstance(stat, SafetyRate) and stat.upper95 is not None:
        text += f" ≤ {stat.upper95:.3f}"
    return text


def _scripted(report: EvalReport, name: str) -> bool:
    return report.llm == "fake" and model_derived(name)


def basis(report: EvalReport, name: str) -> str:
    """The basis of a number: "scripted" if model-derived in a fake run, else "measured"."""
    return "scripted" if _scripted(report, name) else "measured"


def _baseline_cells(diff: BaselineDiff | None, key: str, value: Any) -> list[str]:
    """Baseline value and Δ; blank without a baseline, "—" for a metric an older baseline lacks."""
    if diff is None:
        return ["", ""]
    if key not in diff.baseline_metrics:
        return ["—", ""]
    base = diff.baseline_metrics[key]
    return [render_value(base), _delta(base, value)]


def _metric_rows(report: EvalReport, diff: BaselineDiff | None) -> list[list[str]]:
    rows = []
    for name, stat in metric_stats(report.metrics).items():
        value = stat.value if isinstance(stat, RateStat) else stat
        counts = f"{stat.k}/{stat.n}" if isinstance(stat, RateStat) else ""
        ci = fmt_interval(stat.ci95) if isinstance(stat, RateStat) else ""
        upper = render_value(stat.upper95) if isinstance(stat, SafetyRate) else ""
        rows.append(
            [
                name,
                counts,
                render_value(value),
                ci,
                upper,
                basis(report, name),
                *_baseline_cells(diff, name, value),
            ]
        )
    nested = {k: v for k, v in report.metrics.to_json_dict().items() if k not in metric_stats(report.metrics)}
    for key, value in flatten({k: v for k, v in nested.items() if k not in TABLE_SECTIONS}).items():
        rows.append(
            [
                key,
                "",
                render_value(value),
                "",
                "",
                basis(report, key.split(".")[0]),
                *_baseline_cells(diff, key, value),
            ]
        )
    return rows


def _kappa_text(pair: PairKappa) -> str:
    if pair.status == "undefined":
        return (
            f"{pair.labelers[0]} / {pair.labelers[1]}: kappa undefined (both used one class only), n {pair.n}"
        )
    return (
        f"{pair.labelers[0]} / {pair.labelers[1]}: kappa {fmt_number(pair.kappa)} "
        f"{fmt_interval(pair.ci95)}, n {pair.n}"
    )


def agreement_lines(agreement: LabelAgreement | None) -> list[str]:
    if agreement is None:
        return ["risk kappa: not computed for this report"]
    if not agreement.pairs:
        skipped = (
            f" ({agreement.skipped_pairs} pair(s) share too few cases)" if agreement.skipped_pairs else ""
        )
        return [f"risk kappa: not measured, no labeler pair{skipped}"]
    return [f"risk kappa {_kappa_text(p)}" for p in agreement.pairs]


def label_quality_line(quality: LabelQuality) -> str:
    return (
        f"{quality.gold} gold: double-labeled {fmt_rate(quality.double_labeled)}, adjudicated "
        f"{fmt_rate(quality.adjudicated)}, low confidence {fmt_rate(quality.low_confidence)}"
    )


def _population_rate(rate: PopulationRate | None) -> list[str]:
    if rate is None or rate.value is None:
        return ["n/a", "", "", ""]
    return [
        fmt_number(rate.value),
        fmt_interval(rate.ci95),
        fmt_number(rate.upper95),
        render_value(rate.effective_n),
    ]


def _uncovered_lines(population: PopulationEstimates) -> list[str]:
    """Strata without a scored case are outside the estimates.

    Say so, and which population the under-classification estimate really covers.
    """
    if not population.strata_without_scored:
        return []
    uc = population.under_classification_final
    covered = uc.covered_population if uc is not None else None
    return [
        "",
        f"No scored case in {len(population.strata_without_scored)} stratum/strata "
        f"({', '.join(population.strata_without_scored)}): the estimates cover "
        + (
            f"{covered} of the {population.population} PRs"
            if covered is not None
            else "only the other strata"
        )
        + ", not the whole population.",
    ]


def repository_lines(report: EvalReport) -> list[str]:
    """When the cases come from several repositories: the safety rates clustered by repository."""
    clusters = report.metrics.by_repository
    if clusters is None:
        return []
    rows = [
        [name, f"{c.k}/{c.n}", fmt_number(c.value), fmt_interval(c.ci95), render_value(c.effective_n)]
        for name, c in (
            ("underClassificationFinal", clusters.under_classification_final),
            ("severeUnderClassificationSensitiveFinal", clusters.severe_under_classification_sensitive_final),
            ("unavailableRate", clusters.unavailable_rate),
        )
    ]
    return [
        "",
        f"## Clustered by repository ({clusters.repositories} repositories)",
        "",
        "Cases of one repository are not independent draws: the same rates with each repository as a "
        "cluster (Clopper-Pearson at the Korn-Graubard effective n). Where these intervals are wider "
        "than the table's, the repositories differ more than chance would make them.",
        "",
        *_table(["metric", "k/n", "value", "95% CI (clustered)", "effective n"], rows),
    ]


def population_lines(report: EvalReport) -> list[str]:
    population = report.metrics.population
    if population.status == "not a sample":
        return [NOT_A_SAMPLE + "."]
    m = report.metrics
    lines = [
        f"Post-stratified to a population of {population.population} PRs (weight = population / "
        f"scored cases of the stratum; stratified variance, Clopper-Pearson on the effective n)"
        + (
            f"; {population.unstratified} case(s) without a stratum left out"
            if population.unstratified
            else ""
        )
        + ".",
        *_uncovered_lines(population),
        "",
    ]
    estimates = [
        ("underClassificationFinal", m.under_classification_final, population.under_classification_final),
        (
            "severeUnderClassificationSensitiveFinal",
            m.severe_under_classification_sensitive_final,
            population.severe_under_classification_sensitive_final,
        ),
        ("exactAccuracyFinal", m.exact_accuracy_final, population.exact_accuracy_final),
        ("unavailableRate", m.unavailable_rate, population.unavailable_rate),
    ]
    lines += _table(
        ["rate", "unweighted", "post-stratified", "95% CI", "upper95", "effective n", "basis"],
        ([name, fmt_rate(raw), *_population_rate(est), basis(report, name)] for name, raw, est in estimates),
    )
    lines += [""]
    lines += _table(
        ["frame", "stratum", "population", "sampled", "run", "scored", "weight", "underClassificationFinal"],
        (
            [
                s.frame,
                s.stratum,
                str(s.population),
                str(s.sampled),
                str(s.run_cases),
                str(s.scored),
                render_value(s.weight),
                fmt_rate(s.under_classification_final),
            ]
            for s in population.strata
        ),
    )
    return lines


def _threshold_evidence(t: ThresholdResult) -> str:
    parts = []
    if t.n is not None:
        parts.append(f"{t.k}/{t.n}")
    if t.cases_needed is not None:
        parts.append(f"{t.cases_needed} error-free cases would demonstrate it")
    return "; ".join(parts)


def render_markdown(
    report: EvalReport,
    diff: BaselineDiff | None,
    accept: str | None = None,
    comparison: Comparison | None = None,
) -> str:
    """report.md: the whole report of a run as markdown.

    report.md: header, metric table with evidence, repeated trials, label quality, population
    estimates, confusion matrices, per-tag UC, thresholds, the verifier calibration, changes (with
    the command that accepts them), the comparison of a live run, and the cases to look at.
    """
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
        f"- Baseline: {baseline_line(diff)}",
    ]
    if report.llm == "fake":
        lines.append(f"- Numbers: {SCRIPTED_NOTE}")
    if report.metrics.population.status == "not a sample":
        lines.append(f"- Population: {NOT_A_SAMPLE}")
    lines += [f"- Warning: {w}" for w in (diff.warnings if diff else [])]
    lines += ["", "## Metrics", "", READING_NOTE, ""]
    lines += _table(
        ["metric", "k/n", "value", "95% CI", "upper95", "basis", "baseline", "Δ"], _metric_rows(report, diff)
    )
    lines += ["", WITH_CARD_NOTE + "."]
    if report.trials is not None:
        lines += ["", f"## Repeated trials ({report.trials.trials} per case)", ""]
        lines += trials_markdown(report.trials)
    quality = report.metrics.label_quality
    lines += ["", "## Label quality", "", f"- {label_quality_line(quality)}"]
    lines.append(
        "- underClassificationFinal on double-labeled gold only (sensitivity): "
        f"{fmt_rate(quality.under_classification_final_double_labeled)}"
    )
    lines += [f"- {line}" for line in agreement_lines(report.label_agreement)]
    lines += ["", "## Population estimates", ""]
    lines += population_lines(report)
    lines += repository_lines(report)
    lines += ["", "## Confusion matrices (rows gold, columns predicted)"]
    for name in ("floor", "model", "final"):
        conf = getattr(report.metrics.confusion, name)
        rows = [
            [gold_class, *(str(n) for n in conf.matrix[i]), fmt_rate(getattr(conf.recall, gold_class))]
            for i, gold_class in enumerate(RISK_CLASSES)
        ]
        rows.append(["precision", *(fmt_rate(getattr(conf.precision, c)) for c in RISK_CLASSES), ""])
        lines += ["", f"### {name} (n = {conf.n})", ""]
        lines += _table(["gold \\ predicted", *RISK_CLASSES, "recall"], rows)
    lines += ["", "## Under-classification by tag", ""]
    by_tag = report.metrics.under_classification_by_tag
    if by_tag:
        lines += _table(
            ["tag", "n", "floor", "model", "final", "note"],
            (
                [
                    tag,
                    str(t.n),
                    fmt_rate(t.floor),
                    fmt_rate(t.model),
                    fmt_rate(t.final),
                    TOO_SMALL if t.too_small else "",
                ]
                for tag, t in by_tag.items()
            ),
        )
    else:
        lines.append("No tagged scored cases.")
    lines += ["", "## Thresholds", ""]
    if report.thresholds:
        lines += _table(
            ["threshold", "value (gated)", "limit", "evidence", "result"],
            (
                [t.name, gated_value(t), t.limit, _threshold_evidence(t), threshold_verdict(t)]
                for t in report.thresholds
            ),
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
    if diff is not None and diff.usage_moved:
        lines += ["", "## Usage moved", "", "Not a changed case: " + usage_change_line(report, diff) + "."]
    other = diff.part("context") if diff else []
    if other:
        lines += ["", "## Other changes", ""]
        lines += [f"- {_context_change(c)}" for c in other]
    if comparison is not None:
        lines += ["", "## Comparison with the baseline", "", comparison_markdown(comparison).rstrip("\n")]
    if accept is not None:
        lines += ["", "## Accepting the change", "", "When the change is intended, review it and run:", ""]
        lines += ["```", accept, "```"]
    lines += markdown_cases_section(report, diff)
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
    if diff.usage_moved:
        lines.append(f"  {usage_change_line(report, diff)}; not blocking unless thresholds.json says so")
    lines += [f"  {_context_change(c)}" for c in diff.part("context")]
    return lines


def _summary_metric(report: EvalReport, name: str, stat: RateStat | int | float | None) -> str:
    scripted = "  scripted" if _scripted(report, name) else ""
    if isinstance(stat, RateStat):
        counts = f"{stat.k}/{stat.n}"
        upper = f"≤ {stat.upper95:.3f}" if isinstance(stat, SafetyRate) and stat.upper95 is not None else ""
        return (
            f"  {name:<40} {counts:>9} {fmt_number(stat.value):>6} {fmt_interval(stat.ci95):<14}"
            f" {upper:<8}{scripted}"
        ).rstrip()
    return f"  {name:<40} {render_value(stat):>16}{scripted}"


def secret_skips(report: EvalReport) -> list[str]:
    """Ids of the cases a live run skipped because their prompt text held a secret."""
    return [row.id for row in report.cases if row.skipped == "secret_detected"]


def summary_text(
    report: EvalReport,
    diff: BaselineDiff | None,
    results: list[ThresholdResult],
    accept: str | None = None,
    comparison: Comparison | None = None,
) -> str:
    """One screen for the CLI and the main job.

    Headline metrics with their evidence, label quality, population, baseline, thresholds, and the
    command that accepts a change.
    """
    s = report.set
    stats = metric_stats(report.metrics)
    lines = [
        f"set {s.set_id} ({s.kind}): {s.cases} cases, {s.scored} scored, mode {report.llm}, "
        f"complete {render_value(report.run.complete)}, run {report.run_id}",
        f"  {'metric':<40} {'k/n':>9} {'value':>6} {'95% CI':<14} upper95 (one-sided)",
    ]
    secrets = secret_skips(report)
    if secrets:
        lines.append(
            f"skipped (secret detected): {', '.join(secrets)}: clean them with "
            "`graft-eval rescan --set <set> --apply` (or run with --allow-secrets)"
        )
    lines += [_summary_metric(report, name, stats[name]) for name in SUMMARY_METRICS]
    usage = report.metrics.usage
    lines.append(
        f"  {'tokens (in/out/cache r/w, calls)':<40} {usage.input_tokens}/{usage.output_tokens}/"
        f"{usage.cache_read_tokens}/{usage.cache_write_tokens}, {usage.calls}"
        + ("  scripted" if report.llm == "fake" else "")
    )
    if report.llm == "fake":
        lines.append(
            "  (scripted: the fake model's answers, not measurements; floor and label numbers are real)"
        )
    quality = report.metrics.label_quality
    shares = (
        ("double-labeled", quality.double_labeled),
        ("adjudicated", quality.adjudicated),
        ("low confidence", quality.low_confidence),
    )
    lines.append(f"labels: {quality.gold} gold; " + ", ".join(f"{name} {s.k}/{s.n}" for name, s in shares))
    lines += [f"  {line}" for line in agreement_lines(report.label_agreement)]
    population = report.metrics.population
    if population.status == "not a sample":
        lines.append(f"population: {NOT_A_SAMPLE}")
    else:
        uc = population.under_classification_final
        lines.append(
            f"population: {population.population} PRs in {len(population.strata)} strata; "
            f"underClassificationFinal post-stratified "
            + (
                f"{fmt_number(uc.value)} {fmt_interval(uc.ci95)} ≤ {fmt_number(uc.upper95)}"
                if uc is not None and uc.value is not None
                else "n/a"
            )
        )
    lines.append(f"baseline: {baseline_line(diff)}")
    if diff is not None:
        lines += [f"  warning: {w}" for w in diff.warnings]
        if diff.comparable:
            lines += _baseline_details(report, diff)
    if comparison is not None:
        lines.append(f"compared with the baseline case by case: {verdict_line(comparison)}")
        lines += [f"  {r.name}: {r.verdict}" for r in comparison.rates if r.verdict != "no clear difference"]
        lines += [f"  blocker {b.id}: {b.detail}" for b in comparison.blockers]
        lines += [
            f"  unconfirmed {c.id}: shown in {c.shown} of {c.trials} trial(s), base {c.base_shown} of "
            f"{c.base_trials}; not blocking"
            + (f" (needs {c.needs_trials} trial(s))" if c.needs_trials is not None else "")
            + (f" (the baseline needs {c.base_needs_trials} trial(s))" if c.base_needs_trials else "")
            for c in comparison.unconfirmed
        ]
    if accept is not None:
        lines.append(f"to accept these results as the baseline: {accept}")
    if results:
        failed = [t for t in results if not t.passed]
        verdict = "PASS" if not failed else "FAIL (provisional)" if not check_failed(results) else "FAIL"
        lines.append(f"thresholds: {verdict}")
        lines += [
            f"  {threshold_verdict(t)}: {t.name} = {gated_value(t)} ({t.limit}"
            + (f"; {evidence}" if (evidence := _threshold_evidence(t)) else "")
            + ")"
            for t in results
            if not t.passed or t.na
        ]
    return "\n".join(lines) + "\n"


MAX_CHANGES_IN_CHECK = 50


@dataclass(frozen=True)
class BaselineCheckDetails:
    """What the Dagster baseline checks show (ids, fields and totals only)."""

    verdict: str
    compared: bool
    decisions_equal: bool
    usage_equal: bool
    changed_cases: list[str]
    decision_changes: list[str]  # at most MAX_CHANGES_IN_CHECK, then "… and n more"
    usage: str
    accept_command: str | None


def baseline_check_details(
    report: EvalReport, diff: BaselineDiff | None, accept: str | None
) -> BaselineCheckDetails:
    """The verdict by part, the changed decisions, the usage totals and the accepting command."""
    decisions = diff.part("decisions") if diff is not None and diff.comparable else []
    shown = [render_change(c) if c.where != "report" else c.field for c in decisions[:MAX_CHANGES_IN_CHECK]]
    if len(decisions) > len(shown):
        shown.append(f"… and {len(decisions) - len(shown)} more (report.md)")
    return BaselineCheckDetails(
        verdict=baseline_line(diff),
        compared=diff is not None,
        decisions_equal=diff is not None and diff.decisions_equal,
        usage_equal=diff is not None and diff.usage_equal,
        changed_cases=diff.changed_cases if diff is not None else [],
        decision_changes=shown,
        usage=usage_change_line(report, diff) if diff is not None and diff.usage_moved else "unchanged",
        accept_command=accept,
    )
