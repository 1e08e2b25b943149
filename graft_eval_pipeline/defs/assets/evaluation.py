"""Evaluation assets: loaded case set → harness run → metrics → report (with its checks).

Thin shells over `evalset/`: the same functions `graft-eval run` calls. Metadata carries ids,
classes, counts, rates and costs only (E8); the card results (model prose) travel through the
sealed IO manager.
"""

# No `from __future__ import annotations` in asset modules: Dagster reads config and IO types
# from the real annotations.

from collections.abc import Sequence

import dagster as dg
from pydantic import Field

from graft_eval_pipeline.card.models import RISK_CLASSES
from graft_eval_pipeline.defs.assets.export import exported_cases
from graft_eval_pipeline.defs.assets.labeling import label_import
from graft_eval_pipeline.defs.jobs import EVALUATION_GROUP
from graft_eval_pipeline.defs.partitions import case_set_partitions
from graft_eval_pipeline.defs.resources import CaseSetsResource
from graft_eval_pipeline.evalset.case_schema import case_set_hash, gold, needs_adjudication
from graft_eval_pipeline.evalset.harness import RunOptions, case_filter_for, run_harness
from graft_eval_pipeline.evalset.metrics import compute_metrics
from graft_eval_pipeline.evalset.report import (
    MARKDOWN_FILE,
    REPORT_FILE,
    SUMMARY_METRICS,
    THRESHOLDS_FILE,
    build_report,
    load_thresholds,
    publish_run,
)
from graft_eval_pipeline.evalset.report_schema import Confusion, Metrics, ThresholdResult
from graft_eval_pipeline.evalset.rows import HarnessRun
from graft_eval_pipeline.evalset.store import read_cases

THRESHOLDS_CHECK = "thresholds"
BASELINE_CHECK = "baseline_match"


@dg.asset(
    partitions_def=case_set_partitions, group_name=EVALUATION_GROUP, deps=[label_import, exported_cases]
)
def loaded_case_set(context: dg.AssetExecutionContext, case_sets: CaseSetsResource) -> dg.MaterializeResult:
    """Every case parsed, validated (and decrypted); a malformed case fails naming its file."""
    cs = case_sets.open(context.partition_key)
    cases = read_cases(cs)
    return dg.MaterializeResult(
        metadata={
            "kind": cs.meta.kind,
            "cases": len(cases),
            "labelled": sum(bool(c.labels) for c in cases),
            "gold": sum(gold(c) is not None for c in cases),
            "needs_adjudication": sum(needs_adjudication(c) for c in cases),
            "case_set_hash": case_set_hash(cases),
        }
    )


class HarnessConfig(dg.Config):
    """The `graft-eval run` flags that choose and pace the cases (fake mode)."""

    cases: list[str] = Field(default_factory=list, description="Only these case ids (default: all).")
    tag: str | None = Field(default=None, description="Only cases with this tag.")
    concurrency: int | None = Field(default=None, description="Cases in flight (default 8 fake).")


@dg.asset(partitions_def=case_set_partitions, group_name=EVALUATION_GROUP, deps=[loaded_case_set])
def harness_run(
    context: dg.AssetExecutionContext, config: HarnessConfig, case_sets: CaseSetsResource
) -> dg.Output[HarnessRun]:
    """The card engine over every selected case; card results are stored sealed in pilot sets."""
    cs = case_sets.open(context.partition_key)
    env = case_sets.env()
    options = RunOptions(
        set=cs,
        mode="fake",
        models=env.models(),
        timeout_ms=env.timeout_ms,
        concurrency=config.concurrency,
        case_filter=case_filter_for(cs, config.cases, config.tag),
        progress=context.log.info,
    )
    harness = run_harness(options)
    statuses = [r.status for r in harness.rows]
    return dg.Output(
        harness,
        metadata={
            "mode": harness.llm,
            "cases_run": len(harness.rows),
            "ok": statuses.count("ok"),
            "unavailable": statuses.count("unavailable"),
            "calls": sum(r.usage.calls for r in harness.rows),
            "prompt_version": harness.prompt.prompt_version,
            "prompt_fingerprint": harness.prompt.prompt_fingerprint,
            "models": f"{harness.models.fast} / {harness.models.strong}",
        },
    )


def confusion_table(confusion: Confusion) -> dg.TableMetadataValue:
    """Rows gold, columns predicted (spec 8.5)."""
    return dg.MetadataValue.table(
        [
            dg.TableRecord({"gold": gold_class, **dict(zip(RISK_CLASSES, counts, strict=True))})
            for gold_class, counts in zip(RISK_CLASSES, confusion.matrix, strict=True)
        ],
        schema=dg.TableSchema(
            columns=[dg.TableColumn("gold", "string"), *(dg.TableColumn(k, "int") for k in RISK_CLASSES)]
        ),
    )


def metric_table(metrics: Metrics, names: Sequence[str] = SUMMARY_METRICS) -> dg.TableMetadataValue:
    values = metrics.to_json_dict()
    return dg.MetadataValue.table(
        [dg.TableRecord({"metric": name, "value": values[name]}) for name in names],
        schema=dg.TableSchema(columns=[dg.TableColumn("metric", "string"), dg.TableColumn("value", "float")]),
    )


@dg.asset(partitions_def=case_set_partitions, group_name=EVALUATION_GROUP)
def eval_metrics(harness_run: HarnessRun) -> dg.Output[Metrics]:
    """Every metric of spec section 8, from the per-case rows."""
    metrics = compute_metrics(harness_run.rows)
    return dg.Output(
        metrics,
        metadata={
            "metrics": metric_table(metrics),
            "confusion_floor": confusion_table(metrics.confusion.floor),
            "confusion_model": confusion_table(metrics.confusion.model),
            "confusion_final": confusion_table(metrics.confusion.final),
            "under_classification_final": metrics.under_classification_final,
            "scored": metrics.scored,
        },
    )


def threshold_checks(results: list[ThresholdResult], match_required: bool) -> list[dg.AssetCheckResult]:
    """The thresholds (blocking) and the baseline match (blocking where thresholds.json asks for it)."""
    limits = [r for r in results if r.name != "matchBaseline"]
    match = next((r for r in results if r.name == "matchBaseline"), None)
    rows = {r.name: ("n/a" if r.na else "pass" if r.passed else "FAIL") for r in limits}
    return [
        dg.AssetCheckResult(
            check_name=THRESHOLDS_CHECK,
            passed=all(r.passed or r.provisional for r in limits),
            severity=dg.AssetCheckSeverity.ERROR,
            metadata={
                "results": dg.MetadataValue.json(rows),
                "provisional_failures": [r.name for r in limits if not r.passed and r.provisional],
            },
        ),
        dg.AssetCheckResult(
            check_name=BASELINE_CHECK,
            passed=match is None or match.passed,
            severity=dg.AssetCheckSeverity.ERROR if match_required else dg.AssetCheckSeverity.WARN,
            metadata={"required": match_required, "compared": match is not None},
        ),
    ]


@dg.asset(
    partitions_def=case_set_partitions,
    group_name=EVALUATION_GROUP,
    check_specs=[
        dg.AssetCheckSpec(THRESHOLDS_CHECK, asset="eval_report", blocking=True),
        dg.AssetCheckSpec(BASELINE_CHECK, asset="eval_report", blocking=True),
    ],
)
def eval_report(
    context: dg.AssetExecutionContext,
    harness_run: HarnessRun,
    eval_metrics: Metrics,
    case_sets: CaseSetsResource,
) -> dg.MaterializeResult:
    """report.json, report.md and cases.parquet under the set's runs/, diffed and checked."""
    cs = case_sets.open(context.partition_key)
    thresholds = load_thresholds(THRESHOLDS_FILE)
    published = publish_run(cs, build_report(harness_run, eval_metrics), thresholds=thresholds, strict=False)
    report, diff = published.checked.report, published.checked.diff
    block = thresholds.get(report.set.kind)
    match_required = block is not None and block.match_baseline
    return dg.MaterializeResult(
        metadata={
            "run_id": report.run_id,
            "report": dg.MetadataValue.md(published.checked.markdown),
            "metrics": metric_table(report.metrics),
            "prompt_version": report.prompt.prompt_version,
            "prompt_fingerprint": report.prompt.prompt_fingerprint,
            "models": f"{report.models.fast} / {report.models.strong}",
            "llm": report.llm,
            "changed_cases": 0 if diff is None else len(diff.case_changes),
            "report_json": dg.MetadataValue.path(str(published.out_dir / REPORT_FILE)),
            "report_md": dg.MetadataValue.path(str(published.out_dir / MARKDOWN_FILE)),
        },
        check_results=threshold_checks(report.thresholds, match_required),
    )
