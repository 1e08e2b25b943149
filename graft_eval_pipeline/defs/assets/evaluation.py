"""Evaluation assets: loaded case set → harness run → metrics → report (with its checks).

Thin shells over `evalset/`: the same functions `graft-eval run` calls. Metadata carries ids,
classes, counts, rates and costs only (E8); the card results (model prose) travel through the
sealed IO manager.
"""

# No `from __future__ import annotations` in asset modules: Dagster reads config and IO types
# from the real annotations.

from collections.abc import Sequence
from typing import Literal

import dagster as dg
from pydantic import Field

from graft_eval_pipeline.card.models import RISK_CLASSES
from graft_eval_pipeline.defs.assets.export import exported_cases
from graft_eval_pipeline.defs.assets.labeling import label_import
from graft_eval_pipeline.defs.jobs import EVALUATION_GROUP
from graft_eval_pipeline.defs.partitions import case_set_partitions
from graft_eval_pipeline.defs.resources import CaseSetsResource
from graft_eval_pipeline.evalset.report import (
    MARKDOWN_FILE,
    REPORT_FILE,
    SUMMARY_METRICS,
    build_report,
    load_thresholds,
    publish_run,
)
from graft_eval_pipeline.evalset.run import (
    DEFAULT_MAX_COST_USD,
    DEFAULT_MAX_TOKENS,
    Estimate,
    RunOptions,
    anthropic_llm,
    case_filter_for,
    require_live_env,
    run_harness,
)
from graft_eval_pipeline.evalset.scoring import (
    Confusion,
    HarnessRun,
    Metrics,
    ThresholdResult,
    compute_metrics,
)
from graft_eval_pipeline.evalset.sets import THRESHOLDS_FILE, EvalEnv, case_set_hash, label_counts, read_cases

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
            **label_counts(cases)._asdict(),
            "case_set_hash": case_set_hash(cases),
        }
    )


def models_label(fast: str, strong: str) -> str:
    """The model pair as metadata; the prompt-change sensor compares it with the environment's."""
    return f"{fast} / {strong}"


class HarnessConfig(dg.Config):
    """The `graft-eval run` flags that choose, pace and (live) cap the run.

    Live mode has no terminal to ask on, so it runs only with `confirm_live: true` and an
    explicit `max_cost_usd` (E19); the API key comes from ANTHROPIC_API_KEY only, never config.
    """

    cases: list[str] = Field(default_factory=list, description="Only these case ids (default: all).")
    tag: str | None = Field(default=None, description="Only cases with this tag.")
    concurrency: int | None = Field(default=None, description="Cases in flight (default 4 live, 8 fake).")
    mode: Literal["fake", "live"] = Field(default="fake", description="live calls the Anthropic API.")
    confirm_live: bool = Field(
        default=False, description="Live: the operator accepts the cost up to the cap."
    )
    max_cost_usd: float | None = Field(
        default=None, ge=0, description="Live (required): refuse a larger estimate, start no case past it."
    )
    max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, ge=1, description="Live: start no case past it.")
    use_cache: bool = Field(default=True, description="Live: read cached results (they are always written).")
    batch: bool = Field(
        default=False,
        description="Live: calls through the Message Batches API at half price (answers within 24 h; "
        "a stopped run resumes its batches when materialized again).",
    )


def live_cap(config: HarnessConfig, env: EvalEnv) -> float:
    """The cost cap of a confirmed live run; anything missing fails before any call."""
    if not config.confirm_live or config.max_cost_usd is None:
        raise dg.Failure(
            "live mode in Dagster needs `confirm_live: true` and `max_cost_usd` in the harness_run "
            "config: there is no terminal to show the estimate and ask on"
        )
    require_live_env(env)
    return config.max_cost_usd


async def confirmed_by_config(_estimate: Estimate) -> bool:
    """`confirm_live: true` in the run config is the operator's answer (checked by `live_cap`)."""
    return True


def estimate_metadata(estimate: Estimate) -> dict[str, int | float]:
    return {
        "estimate_cases_to_call": estimate.cases_to_call,
        "estimate_cases_cached": estimate.cases_cached,
        "estimate_tokens": estimate.estimated_tokens,
        "estimate_upper_bound_usd": round(estimate.upper_bound_usd, 4),
    }


def pacing_metadata(harness: HarnessRun) -> dict[str, int | bool]:
    """How a live run paced its calls: the limiter's range and waits, the batches' counts."""
    meta: dict[str, int | bool] = {}
    limiter = harness.run.limiter
    if limiter is not None:
        meta |= {
            "concurrency_min": limiter.min_concurrency,
            "concurrency_max": limiter.max_concurrency,
            "throttled": limiter.throttled,
            "limiter_waiting_ms": limiter.waiting_ms,
        }
    batch = harness.run.batch
    if batch is not None:
        meta |= {
            "batch": True,
            "batch_phases": batch.phases,
            "batches": batch.batches,
            "batches_resumed": batch.resumed_batches,
            "batch_requests": batch.requests,
            "batch_retried_interactively": batch.retried_interactively,
        }
    return meta


@dg.asset(partitions_def=case_set_partitions, group_name=EVALUATION_GROUP, deps=[loaded_case_set])
def harness_run(
    context: dg.AssetExecutionContext, config: HarnessConfig, case_sets: CaseSetsResource
) -> dg.Output[HarnessRun]:
    """The card engine over every selected case; card results are stored sealed in pilot sets."""
    if config.batch and config.mode != "live":
        raise dg.Failure("`batch: true` sends live calls through the Message Batches API: set `mode: live`")
    cs = case_sets.open(context.partition_key)
    env = case_sets.env()
    live = config.mode == "live"
    estimates: list[Estimate] = []
    options = RunOptions(
        set=cs,
        mode=config.mode,
        llm_factory=(lambda: anthropic_llm(env)) if live else None,
        models=env.models(),
        timeout_ms=env.timeout_ms,
        concurrency=config.concurrency,
        max_cost_usd=live_cap(config, env) if live else DEFAULT_MAX_COST_USD,
        max_tokens=config.max_tokens,
        use_cache=config.use_cache,
        case_filter=case_filter_for(cs, config.cases, config.tag),
        confirm=confirmed_by_config if live else None,
        on_estimate=estimates.append,
        progress=context.log.info,
        batch=config.batch,
    )
    harness = run_harness(options)
    statuses = [r.status for r in harness.rows]
    fresh_costs = [r.cost_usd for r in harness.rows if not r.cached]
    return dg.Output(
        harness,
        metadata={
            "mode": harness.llm,
            "cases_run": len(harness.rows) - harness.run.skipped_budget,
            "ok": statuses.count("ok"),
            "unavailable": statuses.count("unavailable"),
            "calls": sum(r.usage.calls for r in harness.rows if not r.cached),
            "complete": harness.run.complete,
            "skipped_budget": harness.run.skipped_budget,
            "cached_results": harness.run.cached_results,
            "cost_usd_this_run": None
            if None in fresh_costs
            else round(sum(c or 0.0 for c in fresh_costs), 6),
            **(estimate_metadata(estimates[0]) if estimates else {}),
            **pacing_metadata(harness),
            "prompt_version": harness.prompt.prompt_version,
            "prompt_fingerprint": harness.prompt.prompt_fingerprint,
            "models": models_label(harness.models.fast, harness.models.strong),
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
            "models": models_label(report.models.fast, report.models.strong),
            "llm": report.llm,
            "changed_cases": 0 if diff is None else len(diff.case_changes),
            "report_json": dg.MetadataValue.path(str(published.out_dir / REPORT_FILE)),
            "report_md": dg.MetadataValue.path(str(published.out_dir / MARKDOWN_FILE)),
        },
        check_results=threshold_checks(report.thresholds, match_required),
    )
