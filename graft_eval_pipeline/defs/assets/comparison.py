"""The comparison asset: did the change help?

This run case by case against the set's baseline (or the previous report), beside `eval_report`
rather than after it; it writes the compare page (`compare-<base run id>.html`) into the run's
folder beside report.html.
"""

# No `from __future__ import annotations` in asset modules: Dagster reads config and IO types
# from the real annotations.

from pathlib import Path
from typing import Literal

import dagster as dg
from pydantic import Field

from graft_eval_pipeline.defs.assets import EVALUATION_GROUP
from graft_eval_pipeline.defs.assets.evaluation import eval_report, report_run_id, set_thresholds
from graft_eval_pipeline.defs.checks import (
    COMPARISON_CHECK,
    COMPARISON_CHECKS,
    comparison_check,
    comparison_failure,
)
from graft_eval_pipeline.defs.isolation import report_inputs
from graft_eval_pipeline.defs.metadata import rates_table
from graft_eval_pipeline.defs.partitions import case_set_partitions
from graft_eval_pipeline.defs.resources import CaseSetsResource
from graft_eval_pipeline.evalset.compare import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    MIN_RESAMPLES,
    compare_reports,
    comparison_markdown,
)
from graft_eval_pipeline.evalset.report import (
    REPORT_FILE,
    build_report,
    compare_file_name,
    default_baseline_path,
    default_out_dir,
    load_report,
    margins_for,
    write_compare_page,
)
from graft_eval_pipeline.evalset.run import collector_paused
from graft_eval_pipeline.evalset.scoring import HarnessRun, Metrics
from graft_eval_pipeline.evalset.sets import CaseSet, EvalError


class ComparisonConfig(dg.Config):
    """What to compare this run's results with, and the bootstrap behind the intervals."""

    against: Literal["baseline", "previous"] = Field(
        default="baseline",
        description="The set's baseline (the previous report when the set has none), or the previous report.",
    )
    resamples: int = Field(
        default=DEFAULT_RESAMPLES, ge=MIN_RESAMPLES, description="Paired bootstrap resamples over case ids."
    )
    seed: int = Field(default=DEFAULT_SEED, description="Seed of the bootstrap.")


def previous_report_path(context: dg.AssetExecutionContext) -> Path | None:
    """report.json of the newest eval_report of this partition made by another Dagster run."""
    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=eval_report.key, asset_partitions=[context.partition_key]), limit=20
    ).records
    for record in records:
        materialization = record.asset_materialization
        if record.run_id == context.run.run_id or materialization is None:
            continue
        entry = materialization.metadata.get("report_json")
        if entry is not None and Path(str(entry.value)).is_file():
            return Path(str(entry.value))
    return None


def comparison_base(
    context: dg.AssetExecutionContext, config: ComparisonConfig, cs: CaseSet
) -> tuple[str, Path] | None:
    """(what, path) of the report to compare with: the baseline or the previous report."""
    baseline = default_baseline_path(cs.dir, cs.meta)
    if config.against == "baseline" and baseline.is_file():
        return "baseline", baseline
    previous = previous_report_path(context)
    return ("previous report", previous) if previous is not None else None


@dg.asset(
    partitions_def=case_set_partitions,
    group_name=EVALUATION_GROUP,
    check_specs=COMPARISON_CHECKS,
)
def eval_comparison(
    context: dg.AssetExecutionContext,
    config: ComparisonConfig,
    harness_run: HarnessRun,
    eval_metrics: Metrics,
    case_sets: CaseSetsResource,
) -> dg.MaterializeResult:  # type: ignore[type-arg]  # bare: with check_specs Dagster rejects [Any]
    """This run case by case against the set's baseline (or the previous report).

    Each headline rate with k/n, the paired difference with a 95% interval, McNemar p, a verdict and
    blockers.

    Beside the report rather than after it, so a failing baseline check does not hide the
    comparison that explains it.
    """
    with collector_paused():  # as `graft-eval run`: no collection walks the run's values
        cs = case_sets.open_for_run(context)
        new = build_report(
            harness_run,
            eval_metrics,
            run_id=report_run_id(context, harness_run),
            inputs=report_inputs(context),
        )
        base = comparison_base(context, config, cs)
        comparison = None
        reason = "nothing to compare with: the set has no baseline and no earlier report"
        if base is not None:
            try:
                margins = margins_for(new, set_thresholds())
                base_report = load_report(base[1])
                comparison = compare_reports(
                    base_report, new, resamples=config.resamples, seed=config.seed, margins=margins
                )
            except EvalError as err:
                reason = str(err)
        if comparison is None:
            return dg.MaterializeResult(
                metadata={"compared": False, "reason": reason},
                check_results=[
                    dg.AssetCheckResult(
                        check_name=COMPARISON_CHECK,
                        passed=True,
                        description=f"skipped: {reason}",
                        metadata={"compared": False, "reason": reason},
                    )
                ],
            )
        assert base is not None
        run_dir = default_out_dir(cs.dir, new)
        page = write_compare_page(
            base_report,
            new,
            comparison,
            run_dir / compare_file_name(comparison.base.run_id),
            base_json=base[1],
            new_json=run_dir / REPORT_FILE,
        )
        verdict: dict[str, dg.RawMetadataValue] = {
            "compared": True,
            "against": base[0],
            "base_run_id": comparison.base.run_id,
            "new_run_id": comparison.new.run_id,
            "verdict": comparison_failure(comparison),
            "rates_verdict": comparison.verdict,
            "blockers": dg.MetadataValue.json([b.to_json_dict() for b in comparison.blockers]),
        }
        return dg.MaterializeResult(
            metadata={
                **verdict,
                "shared_cases": comparison.shared,
                "changed_cases": dg.MetadataValue.json([c.id for c in comparison.changed][:100]),
                "usage_moved": comparison.usage_moved,
                "rates": rates_table(comparison),
                "detectable": dg.MetadataValue.json({r.name: r.detectable for r in comparison.rates}),
                "non_inferiority": dg.MetadataValue.json(
                    [m.to_json_dict() for m in comparison.non_inferiority]
                ),
                "comparison": dg.MetadataValue.md(comparison_markdown(comparison)),
                "compare_html": dg.MetadataValue.path(str(page)),
            },
            check_results=[comparison_check(comparison, verdict)],
        )
