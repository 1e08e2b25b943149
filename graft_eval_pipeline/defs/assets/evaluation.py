"""Evaluation assets: loaded case set → harness run → metrics → report (with its checks).

Thin shells over `evalset/`: the same functions `graft-eval run` calls. Metadata carries ids,
classes, counts, rates and costs only (E8); the card results (model prose) travel through the
sealed IO manager.
"""

# No `from __future__ import annotations` in asset modules: Dagster reads config and IO types
# from the real annotations.

from collections.abc import Sequence
from typing import Any, Literal

import dagster as dg
from pydantic import Field

from graft_eval_pipeline.card.models import RISK_CLASSES
from graft_eval_pipeline.defs.assets.export import case_files
from graft_eval_pipeline.defs.assets.labeling import label_import
from graft_eval_pipeline.defs.jobs import EVALUATION_GROUP
from graft_eval_pipeline.defs.partitions import case_set_partitions
from graft_eval_pipeline.defs.resources import CaseSetsResource
from graft_eval_pipeline.evalset.evaluate import report_agreement
from graft_eval_pipeline.evalset.labeling import AgreementReport
from graft_eval_pipeline.evalset.report import (
    HTML_FILE,
    MARKDOWN_FILE,
    PARQUET_FILE,
    REPORT_FILE,
    SUMMARY_METRICS,
    BaselineDiff,
    PublishedRun,
    brief_markdown,
    build_report,
    dagster_check_passed,
    headline_metadata,
    load_thresholds,
    publish_run,
    render_change,
    threshold_verdict,
)
from graft_eval_pipeline.evalset.run import (
    DEFAULT_MAX_COST_USD,
    DEFAULT_MAX_TOKENS,
    Estimate,
    ProgressEvery,
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
    RateStat,
    ThresholdResult,
    compute_metrics,
    metric_stats,
    model_derived,
)
from graft_eval_pipeline.evalset.sets import THRESHOLDS_FILE, EvalEnv, case_set_hash, label_counts, read_cases

THRESHOLDS_CHECK = "thresholds"
BASELINE_CHECK = "baseline_match"


def model_numbers(llm: str) -> str:
    """Metadata label for model-derived rates, tokens and costs: a fake run's are scripted."""
    return "scripted" if llm == "fake" else "measured"


@dg.asset(partitions_def=case_set_partitions, group_name=EVALUATION_GROUP, deps=[label_import, case_files])
def loaded_case_set(
    context: dg.AssetExecutionContext, case_sets: CaseSetsResource
) -> dg.MaterializeResult[Any]:
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
    explicit `max_cost_usd`; the API key comes from ANTHROPIC_API_KEY only, never config.
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
    allow_secrets: bool = Field(
        default=False,
        description="Live: send a case even when the secret rules find a secret in its prompt text "
        "(default: skip it as secret_detected).",
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
        "estimate_cases_skipped_secret": estimate.cases_skipped_secret,
    }


@dg.asset(partitions_def=case_set_partitions, group_name=EVALUATION_GROUP, deps=[loaded_case_set])
def harness_run(
    context: dg.AssetExecutionContext, config: HarnessConfig, case_sets: CaseSetsResource
) -> dg.Output[HarnessRun]:
    """The card engine over every selected case; card results are stored sealed in pilot sets."""
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
        allow_secrets=config.allow_secrets,
        case_filter=case_filter_for(cs, config.cases, config.tag),
        confirm=confirmed_by_config if live else None,
        on_estimate=estimates.append,
        progress=context.log.info,
        progress_every=ProgressEvery(),  # a Dagster log line is an event: summaries, not one per case
    )
    harness = run_harness(options)
    statuses = [r.status for r in harness.rows]
    fresh_costs = [r.cost_usd for r in harness.rows if not r.cached]
    return dg.Output(
        harness,
        metadata={
            "mode": harness.llm,
            "cases_run": sum(r.skipped is None for r in harness.rows),
            "ok": statuses.count("ok"),
            "unavailable": statuses.count("unavailable"),
            "calls": sum(r.usage.calls for r in harness.rows if not r.cached),
            "complete": harness.run.complete,
            "skipped_budget": harness.run.skipped_budget,
            "skipped_secret_detected": sum(r.skipped == "secret_detected" for r in harness.rows),
            "cached_results": harness.run.cached_results,
            "cost_usd_this_run": None
            if None in fresh_costs
            else round(sum(c or 0.0 for c in fresh_costs), 6),
            **(estimate_metadata(estimates[0]) if estimates else {}),
            "prompt_version": harness.prompt.prompt_version,
            "prompt_fingerprint": harness.prompt.prompt_fingerprint,
            "models": models_label(harness.models.fast, harness.models.strong),
            "model_numbers": model_numbers(harness.llm),
        },
    )


def confusion_table(confusion: Confusion) -> dg.TableMetadataValue:
    """Rows gold, columns predicted."""
    return dg.MetadataValue.table(
        [
            dg.TableRecord({"gold": gold_class, **dict(zip(RISK_CLASSES, counts, strict=True))})
            for gold_class, counts in zip(RISK_CLASSES, confusion.matrix, strict=True)
        ],
        schema=dg.TableSchema(
            columns=[dg.TableColumn("gold", "string"), *(dg.TableColumn(k, "int") for k in RISK_CLASSES)]
        ),
    )


METRIC_COLUMNS = dg.TableSchema(
    columns=[
        dg.TableColumn("metric", "string"),
        dg.TableColumn("k", "int"),
        dg.TableColumn("n", "int"),
        dg.TableColumn("value", "float"),
        dg.TableColumn("ci95_low", "float"),
        dg.TableColumn("ci95_high", "float"),
        dg.TableColumn("upper95", "float"),
        dg.TableColumn("basis", "string"),
    ]
)


def metric_table(metrics: Metrics, llm: str, names: Sequence[str] = SUMMARY_METRICS) -> dg.TableMetadataValue:
    """Headline metrics with k, n, interval and upper bound; `basis` says "scripted" for a fake
    run's model-derived numbers."""
    stats = metric_stats(metrics)
    records = []
    for name in names:
        stat = stats[name]
        rate = stat if isinstance(stat, RateStat) else None
        value = stat.value if isinstance(stat, RateStat) else stat
        records.append(
            dg.TableRecord(
                {
                    "metric": name,
                    "k": rate.k if rate else None,
                    "n": rate.n if rate else None,
                    "value": value,
                    "ci95_low": rate.ci95[0] if rate and rate.ci95 else None,
                    "ci95_high": rate.ci95[1] if rate and rate.ci95 else None,
                    "upper95": getattr(rate, "upper95", None),
                    "basis": "scripted" if llm == "fake" and model_derived(name) else "measured",
                }
            )
        )
    return dg.MetadataValue.table(records, schema=METRIC_COLUMNS)


@dg.asset(partitions_def=case_set_partitions, group_name=EVALUATION_GROUP)
def eval_metrics(harness_run: HarnessRun) -> dg.Output[Metrics]:
    """Every report metric (under-classification, confusion, precision/recall, cost), from the
    per-case rows; each headline rate is numeric metadata, so Dagster plots it over runs and
    partitions."""
    metrics = compute_metrics(harness_run.rows)
    uc = metrics.under_classification_final
    return dg.Output(
        metrics,
        metadata={
            **headline_metadata(metrics),
            "scored": metrics.scored,
            "run_cases": metrics.run_cases,
            "metrics": metric_table(metrics, harness_run.llm),
            "confusion_floor": confusion_table(metrics.confusion.floor),
            "confusion_model": confusion_table(metrics.confusion.model),
            "confusion_final": confusion_table(metrics.confusion.final),
            "under_classification_final": uc.value,
            "under_classification_final_k_of_n": f"{uc.k}/{uc.n}",
            "under_classification_final_upper95": uc.upper95,
            "model_numbers": model_numbers(harness_run.llm),
        },
    )


THRESHOLDS_DESCRIPTION = (
    "Every limit of eval/thresholds.json for the set's kind (and the regression against its "
    "baseline) holds. Blocking: a failure fails the run; a provisional block (pilot) only reports."
)
BASELINE_DESCRIPTION = (
    "The report equals the set's baseline but for run id, time, commit and duration. Blocking with "
    "ERROR severity where thresholds.json asks for the match (synthetic), a warning elsewhere."
)
MAX_CHANGES_IN_METADATA = 50
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
    """What failed, by metric, value, limit and verdict; provisional failures do not fail it."""
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


def _baseline_verdict(diff: BaselineDiff | None) -> str:
    if diff is None:
        return "no baseline to compare with"
    if not diff.comparable:
        return "not comparable: " + "; ".join(diff.not_comparable)
    if diff.equal:
        return "matches the baseline"
    return (
        f"differs from the baseline: {len(diff.case_changes)} case field(s), "
        f"{len(diff.changes)} other field(s)"
    )


def baseline_check(
    published: PublishedRun, match_required: bool, partition: str, set_dir: str
) -> dg.AssetCheckResult:
    """`compared` only when a baseline existed; what changed, and the command that accepts it."""
    diff = published.checked.diff
    match = next((r for r in published.checked.report.thresholds if r.name == "matchBaseline"), None)
    passed = match.passed if match is not None else diff is None or diff.equal
    changes = diff.case_changes if diff is not None else []
    accept = f"graft-eval run --set {set_dir} --save-baseline {published.baseline}"
    metadata: dict[str, dg.RawMetadataValue] = {
        "partition": partition,
        "required": match_required,
        "compared": diff is not None,
        "baseline": dg.MetadataValue.path(str(published.baseline)),
        "verdict": _baseline_verdict(diff),
        "changed_cases": len({c.where for c in changes}),
        "changed_fields": dg.MetadataValue.json(
            [render_change(c) for c in changes[:MAX_CHANGES_IN_METADATA]]
            + (
                [f"… and {len(changes) - MAX_CHANGES_IN_METADATA} more (report.md)"]
                if len(changes) > MAX_CHANGES_IN_METADATA
                else []
            )
        ),
    }
    if diff is None or not diff.equal:
        metadata["accept_command"] = dg.MetadataValue.md(
            f"When the change is intended, review report.md and accept it:\n\n```\n{accept}\n```"
        )
    return dg.AssetCheckResult(
        check_name=BASELINE_CHECK,
        passed=passed,
        severity=dg.AssetCheckSeverity.ERROR if match_required else dg.AssetCheckSeverity.WARN,
        description=f"set {partition}: {_baseline_verdict(diff)}",
        metadata=metadata,
    )


@dg.asset(
    partitions_def=case_set_partitions,
    group_name=EVALUATION_GROUP,
    check_specs=[
        dg.AssetCheckSpec(
            THRESHOLDS_CHECK, asset="eval_report", blocking=True, description=THRESHOLDS_DESCRIPTION
        ),
        dg.AssetCheckSpec(
            BASELINE_CHECK, asset="eval_report", blocking=True, description=BASELINE_DESCRIPTION
        ),
    ],
)
def eval_report(
    context: dg.AssetExecutionContext,
    harness_run: HarnessRun,
    eval_metrics: Metrics,
    labeler_agreement: AgreementReport,
    case_sets: CaseSetsResource,
) -> dg.MaterializeResult:  # type: ignore[type-arg]  # bare: with check_specs Dagster rejects [Any]
    """report.json, report.md, report.html and cases.parquet under the set's runs/, diffed and
    checked; each is a path in the metadata, beside a one-screen brief of the run."""
    cs = case_sets.open(context.partition_key)
    thresholds = load_thresholds(THRESHOLDS_FILE)
    report = build_report(harness_run, eval_metrics, label_agreement=report_agreement(labeler_agreement))
    published = publish_run(cs, report, thresholds=thresholds, strict=False, results=harness_run.results)
    report, diff = published.checked.report, published.checked.diff
    block = thresholds.get(report.set.kind)
    match_required = block is not None and block.match_baseline
    out = published.out_dir
    return dg.MaterializeResult(
        metadata={
            "run_id": report.run_id,
            "report": dg.MetadataValue.md(brief_markdown(report, diff)),  # one screen: opens at its top
            "report_html": dg.MetadataValue.path(str(out / HTML_FILE)),
            "report_md": dg.MetadataValue.path(str(out / MARKDOWN_FILE)),
            "report_json": dg.MetadataValue.path(str(out / REPORT_FILE)),
            "cases_parquet": dg.MetadataValue.path(str(out / PARQUET_FILE)),
            "metrics": metric_table(report.metrics, report.llm),
            "prompt_version": report.prompt.prompt_version,
            "prompt_fingerprint": report.prompt.prompt_fingerprint,
            "models": models_label(report.models.fast, report.models.strong),
            "llm": report.llm,
            "model_numbers": model_numbers(report.llm),
            "changed_cases": 0 if diff is None else len({c.where for c in diff.case_changes}),
        },
        check_results=[
            thresholds_check(report.thresholds, context.partition_key),
            baseline_check(published, match_required, context.partition_key, str(cs.dir)),
        ],
    )
