"""Evaluation assets: loaded case set → harness run → metrics → report (with its checks).

Thin shells over `evalset/`: the same functions `graft-eval run` calls. Metadata carries ids,
classes, counts, rates and costs only (E8); the card results (model prose) travel through the
sealed IO manager.
"""

# No `from __future__ import annotations` in asset modules: Dagster reads config and IO types
# from the real annotations.

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import dagster as dg
from pydantic import Field

from graft_eval_pipeline.card.models import RISK_CLASSES
from graft_eval_pipeline.card.result import CardResult
from graft_eval_pipeline.defs.assets.export import case_files
from graft_eval_pipeline.defs.assets.labeling import label_import
from graft_eval_pipeline.defs.jobs import EVALUATION_GROUP
from graft_eval_pipeline.defs.partitions import case_set_partitions
from graft_eval_pipeline.defs.resources import CaseSetsResource
from graft_eval_pipeline.evalset.evaluate import report_agreement
from graft_eval_pipeline.evalset.labeling import AgreementReport
from graft_eval_pipeline.evalset.report import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    HTML_FILE,
    MARKDOWN_FILE,
    MIN_RESAMPLES,
    PARQUET_FILE,
    REPORT_FILE,
    SUMMARY_METRICS,
    Comparison,
    PublishedRun,
    baseline_check_details,
    brief_markdown,
    build_report,
    calibrate,
    calibration_markdown,
    compare_reports,
    comparison_markdown,
    dagster_check_passed,
    default_baseline_path,
    headline_metadata,
    load_report,
    load_thresholds,
    new_run_id,
    publish_run,
    threshold_verdict,
    trials_metadata,
)
from graft_eval_pipeline.evalset.run import (
    DEFAULT_MAX_COST_USD,
    DEFAULT_MAX_TOKENS,
    Estimate,
    ProgressEvery,
    RunOptions,
    anthropic_llm,
    case_filter_for,
    read_card_results,
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
from graft_eval_pipeline.evalset.sets import (
    CARD_RESULTS_FILE,
    THRESHOLDS_FILE,
    CaseSet,
    CaseTally,
    EvalEnv,
    EvalError,
    iter_cases,
)

THRESHOLDS_CHECK = "thresholds"
BASELINE_CHECK = "baseline_match"
USAGE_CHECK = "baseline_usage"
COMPARISON_CHECK = "no_regression"


def model_numbers(llm: str) -> str:
    """Metadata label for model-derived rates, tokens and costs: a fake run's are scripted."""
    return "scripted" if llm == "fake" else "measured"


@dg.asset(partitions_def=case_set_partitions, group_name=EVALUATION_GROUP, deps=[label_import, case_files])
def loaded_case_set(
    context: dg.AssetExecutionContext, case_sets: CaseSetsResource
) -> dg.MaterializeResult[Any]:
    """Every case parsed, validated (and decrypted), one at a time; a malformed case fails naming
    its file. Only the counts and the set hash are kept."""
    cs = case_sets.open(context.partition_key)
    tally = CaseTally()
    for case in iter_cases(cs):
        tally.add(case)
    return dg.MaterializeResult(
        metadata={
            "kind": cs.meta.kind,
            **tally.counts()._asdict(),
            "case_set_hash": tally.case_set_hash(),
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
    batch: bool = Field(
        default=False,
        description="Live: calls through the Message Batches API at half price (answers within 24 h; "
        "a stopped run resumes its batches when materialized again).",
    )
    trials: int = Field(
        default=1,
        ge=1,
        description="Runs of each case (live: each trial cached on its own; not with batch); the "
        "report adds agreement between trials, flaky cases and clustered intervals.",
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
    """The card engine over every selected case, streamed; each card result is written to the
    set's assets/harness_run.card-results.jsonl as its case ends (sealed in a pilot set)."""
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
        allow_secrets=config.allow_secrets,
        case_filter=case_filter_for(cs, config.cases, config.tag),
        confirm=confirmed_by_config if live else None,
        on_estimate=estimates.append,
        progress=context.log.info,
        progress_every=ProgressEvery(),  # a Dagster log line is an event: summaries, not one per case
        batch=config.batch,
        trials=config.trials,
        card_results=CARD_RESULTS_FILE,
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
            **pacing_metadata(harness),
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
    "The report's decisions (per case floor, rules, classes, status, verifier status and flag, and "
    "every metric over them) equal the set's baseline; a live run instead must show no regression "
    "and no blocker when compared case by case. Blocking with ERROR severity where "
    "thresholds.json asks for the match (synthetic), a warning elsewhere."
)
USAGE_DESCRIPTION = (
    "Tokens, calls and cost equal the set's baseline. A warning (a prompt edit moves them without "
    "changing a decision) unless thresholds.json sets matchBaselineUsage."
)
COMPARISON_DESCRIPTION = (
    "Compared case by case with the set's baseline (or the previous report), no headline rate "
    "regressed and no sensitive case was newly under-classified or newly unavailable."
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
    limits = [r for r in results if not r.name.startswith("matchBaseline")]
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
    """The decisions against the baseline: `compared` only when a baseline existed; the verdict
    by part, what changed, and the command that accepts it."""
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
    return dg.AssetCheckResult(
        check_name=BASELINE_CHECK,
        passed=passed,
        severity=dg.AssetCheckSeverity.ERROR if match_required else dg.AssetCheckSeverity.WARN,
        description=f"set {partition}: baseline {details.verdict}",
        metadata=metadata,
    )


def accept_markdown(command: str) -> dg.MarkdownMetadataValue:
    return dg.MetadataValue.md(
        f"When the change is intended, review report.md and accept it:\n\n```\n{command}\n```"
    )


def usage_check(published: PublishedRun, usage_required: bool, partition: str) -> dg.AssetCheckResult:
    """Tokens, calls and cost against the baseline: reported (a warning) unless thresholds.json
    makes them blocking."""
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
    return dg.AssetCheckResult(
        check_name=USAGE_CHECK,
        passed=equal or (diff is None and not usage_required),
        severity=dg.AssetCheckSeverity.ERROR if usage_required else dg.AssetCheckSeverity.WARN,
        description=f"set {partition}: "
        + ("no baseline" if diff is None else "usage matches the baseline" if equal else usage),
        metadata=metadata,
    )


def synthetic_cards(cs: CaseSet, harness: HarnessRun) -> dict[str, CardResult] | None:
    """The cards the synthetic set's report.html shows, read back from the run's card-results
    file (the designed set: a few dozen cards); None for a pilot set, whose report.html shows none."""
    if cs.meta.kind != "synthetic" or harness.card_results is None:
        return None
    return dict(read_card_results(cs, harness.card_results))


def report_run_id(context: dg.AssetExecutionContext, harness: HarnessRun) -> str:
    """One report run id per Dagster run, so the report and the comparison name the same run."""
    return new_run_id(harness.created_at, context.run.run_id.replace("-", "")[:4])


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
        dg.AssetCheckSpec(USAGE_CHECK, asset="eval_report", blocking=True, description=USAGE_DESCRIPTION),
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
    checked; each is a path in the metadata, beside a one-screen brief of the run and, for
    repeated trials, the flaky cases and the worst-case share as numbers."""
    cs = case_sets.open(context.partition_key)
    thresholds = load_thresholds(THRESHOLDS_FILE)
    report = build_report(
        harness_run,
        eval_metrics,
        run_id=report_run_id(context, harness_run),
        label_agreement=report_agreement(labeler_agreement),
    )
    published = publish_run(
        cs, report, thresholds=thresholds, strict=False, results=synthetic_cards(cs, harness_run)
    )
    report, diff = published.checked.report, published.checked.diff
    block = thresholds.get(report.set.kind)
    match_required = block is not None and block.match_baseline
    out = published.out_dir
    return dg.MaterializeResult(
        metadata={
            "run_id": report.run_id,
            "report": dg.MetadataValue.md(brief_markdown(report, diff)),  # one screen: opens at its top
            "verifier_calibration": dg.MetadataValue.md(calibration_markdown(calibrate(report.cases))),
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
            **trials_metadata(report.trials),
        },
        check_results=[
            thresholds_check(report.thresholds, context.partition_key),
            baseline_check(published, match_required, context.partition_key),
            usage_check(published, block is not None and block.match_usage, context.partition_key),
        ],
    )


# --- the comparison: did the change help? ----------------------------------------------------


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


def rates_table(comparison: Comparison) -> dg.TableMetadataValue:
    columns = [
        "rate",
        "base",
        "new",
        "difference",
        "low",
        "high",
        "only_base",
        "only_new",
        "mcnemar_p",
        "verdict",
    ]
    return dg.MetadataValue.table(
        [
            dg.TableRecord(
                {
                    "rate": r.name,
                    "base": f"{r.base} ({r.base_k}/{r.base_n})",
                    "new": f"{r.new} ({r.new_k}/{r.new_n})",
                    "difference": r.difference,
                    "low": r.low,
                    "high": r.high,
                    "only_base": r.only_base,
                    "only_new": r.only_new,
                    "mcnemar_p": r.mcnemar_p,
                    "verdict": r.verdict,
                }
            )
            for r in comparison.rates
        ],
        schema=dg.TableSchema(
            columns=[
                dg.TableColumn(c, "float" if c in ("difference", "low", "high", "mcnemar_p") else "string")
                for c in columns
            ]
        ),
    )


@dg.asset(
    partitions_def=case_set_partitions,
    group_name=EVALUATION_GROUP,
    check_specs=[
        dg.AssetCheckSpec(COMPARISON_CHECK, asset="eval_comparison", description=COMPARISON_DESCRIPTION)
    ],
)
def eval_comparison(
    context: dg.AssetExecutionContext,
    config: ComparisonConfig,
    harness_run: HarnessRun,
    eval_metrics: Metrics,
    case_sets: CaseSetsResource,
) -> dg.MaterializeResult:  # type: ignore[type-arg]  # bare: with check_specs Dagster rejects [Any]
    """This run case by case against the set's baseline (or the previous report): each headline
    rate with k/n, the paired difference with a 95% interval, McNemar p, a verdict and blockers.

    Beside the report rather than after it, so a failing baseline check does not hide the
    comparison that explains it."""
    cs = case_sets.open(context.partition_key)
    new = build_report(harness_run, eval_metrics, run_id=report_run_id(context, harness_run))
    base = comparison_base(context, config, cs)
    comparison = None
    reason = "nothing to compare with: the set has no baseline and no earlier report"
    if base is not None:
        try:
            comparison = compare_reports(
                load_report(base[1]), new, resamples=config.resamples, seed=config.seed
            )
        except EvalError as err:
            reason = str(err)
    if comparison is None:
        return dg.MaterializeResult(
            metadata={"compared": False, "reason": reason},
            check_results=[
                dg.AssetCheckResult(
                    check_name=COMPARISON_CHECK, passed=True, metadata={"compared": False, "reason": reason}
                )
            ],
        )
    assert base is not None
    verdict: dict[str, dg.RawMetadataValue] = {
        "compared": True,
        "against": base[0],
        "base_run_id": comparison.base.run_id,
        "new_run_id": comparison.new.run_id,
        "verdict": comparison.verdict,
        "blockers": dg.MetadataValue.json([b.to_json_dict() for b in comparison.blockers]),
    }
    return dg.MaterializeResult(
        metadata={
            **verdict,
            "shared_cases": comparison.shared,
            "changed_cases": dg.MetadataValue.json([c.id for c in comparison.changed][:100]),
            "rates": rates_table(comparison),
            "comparison": dg.MetadataValue.md(comparison_markdown(comparison)),
        },
        check_results=[
            dg.AssetCheckResult(
                check_name=COMPARISON_CHECK,
                passed=not comparison.failed,
                severity=dg.AssetCheckSeverity.ERROR,
                metadata=verdict,
            )
        ],
    )
