"""Every asset check: its name, description and spec, and the results the assets attach.

The spec is what the UI lists. The assets attach the results: `eval_report`'s three,
`labeler_agreement`'s kappa, `rescanned_cases`' secrets; `eval_comparison` builds its own from the
comparison it shows. A failing check's metadata says what failed by metric, value and limit, or by
case id, and how to accept an intended change.
"""

import warnings

import dagster as dg

from graft_eval_pipeline.defs.partitions import case_set_partitions
from graft_eval_pipeline.evalset.compare import Comparison
from graft_eval_pipeline.evalset.export.rescan import RescanResult
from graft_eval_pipeline.evalset.labeling import TARGET_RISK_KAPPA, AgreementReport, agreement_check
from graft_eval_pipeline.evalset.report import (
    PublishedRun,
    baseline_check_details,
    dagster_check_passed,
    threshold_verdict,
)
from graft_eval_pipeline.evalset.scoring import ThresholdResult

THRESHOLDS_CHECK = "thresholds"
BASELINE_CHECK = "baseline_match"
USAGE_CHECK = "baseline_usage"
COMPARISON_CHECK = "no_regression"
KAPPA_CHECK = "risk_kappa_meets_target"
RESCAN_CHECK = "no_unredacted_secrets"


THRESHOLDS_DESCRIPTION = (
    "Every limit of eval/thresholds.json for the set's kind (and the regression against its "
    "baseline) holds. Blocking: a failure fails the run; a provisional block (pilot) only reports."
)
BASELINE_DESCRIPTION = (
    "No case changed against the set's baseline: every decision (per case classes, status, failure "
    "reason, verifier status, flags, out-of-scope counts, rules) and every metric over them is "
    "equal; usage is the baseline_usage warning's. A live run instead must show no regression and "
    "no blocker when compared case by case. Blocking with ERROR severity where thresholds.json asks "
    "for the match (synthetic), a warning elsewhere."
)
USAGE_DESCRIPTION = (
    "A warning, never blocking: tokens, calls and cost equal the set's baseline (a prompt edit moves "
    "them without changing a decision). Where thresholds.json sets matchBaselineUsage, the blocking "
    "thresholds check gates on it too."
)
COMPARISON_DESCRIPTION = (
    "Compared case by case with the set's baseline (or the previous report), no headline rate "
    "regressed and no sensitive case was newly under-classified or newly unavailable."
)
KAPPA_DESCRIPTION = (
    f"A warning: Cohen's kappa on the risk class is at least {TARGET_RISK_KAPPA} for every labeler "
    "pair; below it, revise the labeling guide and relabel before trusting metrics. Skipped (passes, "
    "saying so) when no pair of labelers shares enough cases."
)
RESCAN_DESCRIPTION = (
    "No stored case holds a secret that today's rules would redact; fails while findings remain "
    "unapplied (materialize with `apply: true` to rewrite them)."
)


def case_set_check(name: str, asset: str, description: str, *, blocking: bool = False) -> dg.AssetCheckSpec:
    """A check partitioned like its asset, so each set's check status is its own in the UI.

    An unpartitioned check shows whichever set ran last. Dagster marks a partitioned check spec as a
    preview feature and warns on each definition; the warning is silenced here, once.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return dg.AssetCheckSpec(
            name, asset=asset, blocking=blocking, description=description, partitions_def=case_set_partitions
        )


KAPPA_CHECKS = [case_set_check(KAPPA_CHECK, "labeler_agreement", KAPPA_DESCRIPTION)]
RESCAN_CHECKS = [case_set_check(RESCAN_CHECK, "rescanned_cases", RESCAN_DESCRIPTION)]
REPORT_CHECKS = [
    case_set_check(THRESHOLDS_CHECK, "eval_report", THRESHOLDS_DESCRIPTION, blocking=True),
    case_set_check(BASELINE_CHECK, "eval_report", BASELINE_DESCRIPTION, blocking=True),
    case_set_check(USAGE_CHECK, "eval_report", USAGE_DESCRIPTION),
]
COMPARISON_CHECKS = [case_set_check(COMPARISON_CHECK, "eval_comparison", COMPARISON_DESCRIPTION)]
CHECK_RESULT_COLUMNS = dg.TableSchema(
    columns=[
        dg.TableColumn("metric", "string"),
        dg.TableColumn("value", "string"),
        dg.TableColumn("limit", "string"),
        dg.TableColumn("verdict", "string"),
    ]
)


def _value_text(value: float | bool | None) -> str:
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else f"{value:g}"


def thresholds_check(results: list[ThresholdResult], partition: str) -> dg.AssetCheckResult:
    """What failed, by metric, value, limit and verdict.

    Provisional failures do not fail it. The baseline match is baseline_match's; a usage match
    thresholds.json asks for gates here (baseline_usage itself is a warning).
    """
    limits = [r for r in results if r.name != "matchBaseline"]
    failed = [r for r in limits if not r.passed]
    fatal = [] if dagster_check_passed(limits) else [r for r in failed if not r.provisional or r.insufficient]
    if not limits:
        description = f"set {partition}: no thresholds for this set kind"
    elif not failed:
        description = f"set {partition}: all {len(limits)} thresholds pass"
    else:
        description = f"set {partition}: {len(failed)} of {len(limits)} thresholds fail" + (
            "" if fatal else " (provisional)"
        )
        description += ": " + "; ".join(f"{r.name} = {_value_text(r.value)} ({r.limit})" for r in failed)
    return dg.AssetCheckResult(
        check_name=THRESHOLDS_CHECK,
        passed=not fatal,
        severity=dg.AssetCheckSeverity.ERROR,
        description=description,
        metadata={
            "partition": partition,
            "results": dg.MetadataValue.table(
                [
                    dg.TableRecord(
                        {
                            "metric": r.name,
                            "value": _value_text(r.value),
                            "limit": r.limit,
                            "verdict": threshold_verdict(r),
                        }
                    )
                    for r in limits
                ],
                schema=CHECK_RESULT_COLUMNS,
            ),
            "failed": dg.MetadataValue.json(
                [
                    {"metric": r.name, "value": r.value, "limit": r.limit, "verdict": threshold_verdict(r)}
                    for r in failed
                ]
            ),
            "provisional_failures": [r.name for r in failed if r.provisional and not r.insufficient],
            "insufficient_evidence": [r.name for r in limits if r.insufficient],
        },
    )


def baseline_check(published: PublishedRun, match_required: bool, partition: str) -> dg.AssetCheckResult:
    """The decisions against the baseline.

    `compared` only when a baseline existed; the verdict by part, what changed, and the command that
    accepts it.
    """
    checked = published.checked
    details = baseline_check_details(checked.report, checked.diff, checked.accept)
    match = next((r for r in checked.report.thresholds if r.name == "matchBaseline"), None)
    diff = checked.diff
    passed = match.passed if match is not None else diff is None or diff.decisions_equal
    metadata: dict[str, dg.RawMetadataValue] = {
        "partition": partition,
        "required": match_required,
        "compared": diff is not None,
        "baseline": dg.MetadataValue.path(str(published.baseline)),
        "verdict": details.verdict,
        "decisions_equal": details.decisions_equal,
        "changed_cases": len(details.changed_cases),
        "changed_case_ids": dg.MetadataValue.json(details.changed_cases),
        "changed_fields": dg.MetadataValue.json(details.decision_changes),
        "usage": details.usage,
    }
    if checked.comparison is not None:
        metadata["comparison_verdict"] = checked.comparison.verdict
        metadata["blockers"] = dg.MetadataValue.json([b.to_json_dict() for b in checked.comparison.blockers])
    if checked.accept is not None:
        metadata["accept_command"] = accept_markdown(checked.accept)
    why = f"set {partition}: baseline {details.verdict}"
    if not passed and checked.comparison is not None:
        why = f"set {partition}: {comparison_failure(checked.comparison)}"
    elif not passed and diff is None:
        why = f"set {partition}: no baseline to match; save one with `graft-eval run --save-baseline`"
        why += " (accept_command)" if checked.accept is not None else " once the thresholds pass"
    return dg.AssetCheckResult(
        check_name=BASELINE_CHECK,
        passed=passed,
        severity=dg.AssetCheckSeverity.ERROR if match_required else dg.AssetCheckSeverity.WARN,
        description=why,
        metadata=metadata,
    )


def comparison_failure(comparison: Comparison) -> str:
    """One line: why a case-by-case comparison fails (blockers first), or that it passes."""
    if comparison.blockers:
        ids = ", ".join(b.id for b in comparison.blockers[:5])
        more = f" and {len(comparison.blockers) - 5} more" if len(comparison.blockers) > 5 else ""
        return f"failed: {len(comparison.blockers)} blocker(s) ({ids}{more}), whatever the rates say"
    if comparison.verdict == "regressed":
        rates = ", ".join(r.name for r in comparison.rates if r.in_overall and r.verdict == "regressed")
        return f"failed: regressed ({rates})"
    worse = [m.name for m in comparison.non_inferiority if m.verdict == "worse"]
    if worse:
        return f"failed: worse than the margin ({', '.join(worse)})"
    return f"passed: {comparison.verdict}, no blocker"


def comparison_check(
    comparison: Comparison, metadata: "dict[str, dg.RawMetadataValue]"
) -> dg.AssetCheckResult:
    """The no_regression check: fails on a regressed rate, a worse-than-margin rate or a blocker.

    Its description says which.
    """
    return dg.AssetCheckResult(
        check_name=COMPARISON_CHECK,
        passed=not comparison.failed,
        severity=dg.AssetCheckSeverity.ERROR,
        description=comparison_failure(comparison),
        metadata=metadata,
    )


def accept_markdown(command: str) -> dg.MarkdownMetadataValue:
    return dg.MetadataValue.md(
        f"When the change is intended, review report.md and accept it:\n\n```\n{command}\n```"
    )


def usage_check(published: PublishedRun, usage_required: bool, partition: str) -> dg.AssetCheckResult:
    """Tokens, calls and cost against the baseline.

    Reported (a warning) unless thresholds.json makes them blocking.
    """
    checked = published.checked
    diff = checked.diff
    usage = baseline_check_details(checked.report, diff, None).usage
    metadata: dict[str, dg.RawMetadataValue] = {
        "partition": partition,
        "required": usage_required,
        "compared": diff is not None,
        "usage": usage,
    }
    if checked.accept is not None:
        metadata["accept_command"] = accept_markdown(checked.accept)
    equal = diff is not None and diff.usage_equal
    if diff is None:
        why = "no baseline to compare usage with"
    elif equal:
        why = "usage matches the baseline"
    else:
        gate = (
            "required by thresholds.json (the thresholds check gates on it)"
            if usage_required
            else "a warning"
        )
        why = f"usage moved ({gate}; usage alone never makes a changed case): {usage}"
    return dg.AssetCheckResult(
        check_name=USAGE_CHECK,
        passed=equal or (diff is None and not usage_required),
        severity=dg.AssetCheckSeverity.ERROR if usage_required else dg.AssetCheckSeverity.WARN,
        description=f"set {partition}: {why}",
        metadata=metadata,
    )


def kappa_check(report: AgreementReport) -> dg.AssetCheckResult:
    """A warning below the guide's target or on an undefined kappa.

    Skipped (passes, saying so) when no pair of labelers was compared: a single-labeler set has
    nothing to agree on.
    """
    metadata: dict[str, dg.RawMetadataValue] = {
        "target": TARGET_RISK_KAPPA,
        "pairs_compared": len(report.pairs),
    }
    if not report.pairs:
        skipped = f", {len(report.skipped_pairs)} pair(s) share too few cases" if report.skipped_pairs else ""
        return dg.AssetCheckResult(
            check_name=KAPPA_CHECK,
            passed=True,
            severity=dg.AssetCheckSeverity.WARN,
            description=f"skipped: no double-labelled pair{skipped} (assign-double adds some)",
            metadata={**metadata, "skipped": True},
        )
    passed, low = agreement_check(report)
    description = (
        f"every pair's risk kappa is at least {TARGET_RISK_KAPPA}"
        if passed
        else f"warning: risk kappa below {TARGET_RISK_KAPPA} or undefined for {', '.join(low)}"
    )
    return dg.AssetCheckResult(
        check_name=KAPPA_CHECK,
        passed=passed,
        severity=dg.AssetCheckSeverity.WARN,
        description=description,
        metadata={**metadata, "skipped": False, "pairs_below_target": dg.MetadataValue.json(low)},
    )


def rescan_check(result: RescanResult) -> dg.AssetCheckResult:
    passed = result.applied or not result.affected
    if not result.affected:
        why = "no stored case holds a secret today's rules would redact"
    elif result.applied:
        why = f"{len(result.affected)} case(s) rewritten with the secrets redacted"
    else:
        why = (
            f"{len(result.affected)} case(s) hold a secret today's rules would redact: "
            "materialize with `apply: true`"
        )
    return dg.AssetCheckResult(
        check_name=RESCAN_CHECK,
        passed=passed,
        severity=dg.AssetCheckSeverity.ERROR,
        description=why,
        metadata={"affected_cases": len(result.affected), "applied": result.applied},
    )
