"""Evaluation assets: loaded case set → harness run → metrics → report (with its checks).

Their metadata builders are in `defs/metadata.py`, the checks in `defs/checks.py`, and the
comparison beside the report in `comparison.py`.

Thin shells over `evalset/`: the same functions `graft-eval run` calls. Metadata carries ids,
classes, counts, rates and costs only (E8); the card results (model prose) travel through the
sealed IO manager.
"""

# No `from __future__ import annotations` in asset modules: Dagster reads config and IO types
# from the real annotations.

from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import dagster as dg
from pydantic import Field

from graft_eval_pipeline.card import CardResult
from graft_eval_pipeline.defs.assets import EVALUATION_GROUP
from graft_eval_pipeline.defs.assets.export import case_files
from graft_eval_pipeline.defs.assets.labeling import label_import
from graft_eval_pipeline.defs.checks import REPORT_CHECKS, baseline_check, thresholds_check, usage_check
from graft_eval_pipeline.defs.isolation import report_inputs
from graft_eval_pipeline.defs.metadata import (
    confusion_table,
    estimate_metadata,
    metric_table,
    model_numbers,
    models_label,
    pacing_metadata,
)
from graft_eval_pipeline.defs.partitions import case_set_partitions
from graft_eval_pipeline.defs.resources import CaseSetsResource
from graft_eval_pipeline.defs.run_memo import keep, kept
from graft_eval_pipeline.evalset.compare import calibrate, calibration_markdown
from graft_eval_pipeline.evalset.evaluate import KeptDetails, report_agreement
from graft_eval_pipeline.evalset.labeling import AgreementReport, scan_set
from graft_eval_pipeline.evalset.report import (
    HTML_FILE,
    MARKDOWN_FILE,
    PARQUET_FILE,
    REPORT_FILE,
    CaseDetail,
    ThresholdBlock,
    brief_markdown,
    build_report,
    case_facts,
    load_thresholds,
    new_run_id,
    plotted_metadata,
    publish_run,
    rate_evidence,
    trials_metadata,
)
from graft_eval_pipeline.evalset.run import (
    DEFAULT_CONCURRENCY_TEXT,
    DEFAULT_MAX_COST_USD,
    DEFAULT_MAX_TOKENS,
    Estimate,
    RunSettings,
    SettingNames,
    collector_paused,
    drop_other_card_results,
    read_card_results,
    run_harness,
)
from graft_eval_pipeline.evalset.run.live import anthropic_llm, require_live_env
from graft_eval_pipeline.evalset.scoring import (
    HarnessRun,
    Metrics,
    compute_metrics,
)
from graft_eval_pipeline.evalset.sets import (
    THRESHOLDS_FILE,
    CaseSet,
    EvalError,
    card_results_file,
)


@dg.asset(partitions_def=case_set_partitions, group_name=EVALUATION_GROUP, deps=[label_import, case_files])
def loaded_case_set(
    context: dg.AssetExecutionContext, case_sets: CaseSetsResource
) -> dg.MaterializeResult[Any]:
    """Every case parsed, validated (and decrypted), one at a time; a malformed case fails naming its file.

    Only the counts and the set hash are kept. The label import's read of the same
    files serves here when no case changed since (`scan_set`), so a run reads the set once
    before the harness.
    """
    cs = case_sets.open_for_run(context)
    scan = scan_set(cs)
    return dg.MaterializeResult(
        metadata={
            "kind": cs.meta.kind,
            **scan.counts._asdict(),
            "case_set_hash": scan.case_set_hash,
        }
    )


class HarnessConfig(dg.Config):
    """The `graft-eval run` flags that choose, pace and (live) cap the run.

    Live mode has no terminal to ask on, so it runs only with `confirm_live: true` and an
    explicit `max_cost_usd`; the API key comes from ANTHROPIC_API_KEY only, never config.
    """

    cases: list[str] = Field(default_factory=list, description="Only these case ids (default: all).")
    tag: str | None = Field(default=None, description="Only cases with this tag.")
    concurrency: int | None = Field(
        default=None, description=f"Cases in flight (default {DEFAULT_CONCURRENCY_TEXT})."
    )
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


LIVE_NEEDS_CONFIRMATION = (
    "live mode in Dagster needs `confirm_live: true` and `max_cost_usd` in the harness_run "
    "config: there is no terminal to show the estimate and ask on"
)
CONFIG_NAMES = SettingNames(
    batch="`batch: true`",
    trials="`trials`",
    add_live="set `mode: live`",
    live_needs_cap=LIVE_NEEDS_CONFIRMATION,
)
"""The harness_run config's keys, as `RunSettings`' rules name them."""


def run_settings(config: HarnessConfig) -> RunSettings:
    """The config as the run's settings; a broken rule fails the step before any call."""
    if config.mode == "live" and not config.confirm_live:
        raise dg.Failure(LIVE_NEEDS_CONFIRMATION)
    try:
        return RunSettings(
            CONFIG_NAMES,
            cases=tuple(config.cases),
            tag=config.tag,
            live=config.mode == "live",
            concurrency=config.concurrency,
            max_cost_usd=config.max_cost_usd if config.mode == "live" else DEFAULT_MAX_COST_USD,
            max_tokens=config.max_tokens,
            use_cache=config.use_cache,
            allow_secrets=config.allow_secrets,
            batch=config.batch,
            trials=config.trials,
        )
    except EvalError as err:
        raise dg.Failure(str(err)) from None


async def confirmed_by_config(_estimate: Estimate) -> bool:
    """`confirm_live: true` in the run config is the operator's answer (checked by `run_settings`)."""
    return True


@dg.asset(partitions_def=case_set_partitions, group_name=EVALUATION_GROUP, deps=[loaded_case_set])
def harness_run(
    context: dg.AssetExecutionContext, config: HarnessConfig, case_sets: CaseSetsResource
) -> dg.Output[HarnessRun]:
    """The card engine over every selected case, streamed.

    Each card result is written to the set's assets/harness_run.card-results.<run id>.jsonl as its
    case ends (sealed in a pilot set). The case panels of report.html are kept for the rest of the
    run as the cases go (`kept_details`), as `graft-eval run` keeps them.
    """
    settings = run_settings(config)
    cs = case_sets.open_for_run(context)
    env = case_sets.env()
    if settings.live:
        require_live_env(env)
    estimates: list[Estimate] = []
    details = KeptDetails(content=cs.meta.kind == "synthetic")
    options = replace(
        settings.run_options(cs, env, llm=anthropic_llm, confirm=confirmed_by_config),
        on_estimate=estimates.append,
        on_case=details.seen,
        on_result=details.ended,
        progress=context.log.info,  # in summaries (ProgressEvery): each Dagster log line is an event
        card_results=card_results_file(context.run.run_id),
    )
    harness = run_harness(options)
    drop_other_card_results(cs, card_results_file(context.run.run_id))
    keep(context.run.run_id, _details_name(cs, harness), details.details)
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
            "engine_fingerprint": harness.prompt.engine_fingerprint or "",
            "models": models_label(harness.models.fast, harness.models.strong),
            "model_numbers": model_numbers(harness.llm),
        },
    )


@dg.asset(partitions_def=case_set_partitions, group_name=EVALUATION_GROUP)
def eval_metrics(harness_run: HarnessRun) -> dg.Output[Metrics]:
    """Every report metric (under-classification, confusion, precision/recall, cost), from the per-case rows.

    Each headline rate, the severe rate among sensitive gold and the cost are one number each,
    ranked so the Plots tab shows the gated rates first; their k/n and intervals are one JSON entry
    beside them (not plotted).
    """
    with collector_paused():
        metrics = compute_metrics(harness_run.rows)
    return dg.Output(
        metrics,
        metadata={
            **plotted_metadata(metrics),
            "rate_evidence": dg.MetadataValue.json(rate_evidence(metrics)),
            "cases": f"{metrics.run_cases} run, {metrics.scored} scored",
            "metrics": metric_table(metrics, harness_run.llm),
            "confusion_floor": confusion_table(metrics.confusion.floor),
            "confusion_model": confusion_table(metrics.confusion.model),
            "confusion_final": confusion_table(metrics.confusion.final),
            "model_numbers": model_numbers(harness_run.llm),
        },
    )


def _details_name(cs: CaseSet, harness: HarnessRun) -> str:
    return f"case details {cs.dir} {harness.card_results}"


def kept_details(
    context: dg.AssetExecutionContext, cs: CaseSet, harness: HarnessRun
) -> dict[str, CaseDetail] | None:
    """The case panels the harness of this run kept as it went, when `harness` is that run's value.

    None when the harness ran in another run or process: the report then reads them back
    (`synthetic_cards`, `pilot_panels`), which gives the same panels.
    """
    found = kept(context.run.run_id, _details_name(cs, harness))
    return found if isinstance(found, dict) and harness.card_results is not None else None


def synthetic_cards(cs: CaseSet, harness: HarnessRun) -> dict[str, CardResult] | None:
    """The cards the synthetic set's report.html shows, read back from the run's card-results file.

    The designed set holds a few dozen cards; None for a pilot set (see `pilot_panels`).
    """
    if cs.meta.kind != "synthetic" or harness.card_results is None:
        return None
    return dict(read_card_results(cs, harness.card_results))


def pilot_panels(cs: CaseSet, harness: HarnessRun) -> dict[str, CaseDetail] | None:
    """A pilot set's report.html panels: the classes, claim ids and counts of each card.

    Read back one result at a time (no card is kept); None for the synthetic set.
    """
    if cs.meta.kind == "synthetic" or harness.card_results is None:
        return None
    return {
        case_id: CaseDetail(facts=case_facts(result))
        for case_id, result in read_card_results(cs, harness.card_results)
    }


def set_thresholds() -> dict[str, ThresholdBlock]:
    """eval/thresholds.json, read when an asset needs it: one file for both gates and margins.

    eval_report's gates and eval_comparison's non-inferiority margins both come from it.
    """
    return load_thresholds(THRESHOLDS_FILE)


def report_file_metadata(cs: CaseSet, out: Path, run_id: str) -> "dict[str, dg.RawMetadataValue]":
    """The run's files.

    `open_report` says how to open report.html (a browser does not follow a file:// link from the
    UI's http page, so a URL entry would not open either), and each file is a path entry (a click
    copies it).
    """
    html = out / HTML_FILE
    return {
        "open_report": dg.MetadataValue.md(
            "Open report.html (browsers do not follow `file://` links from the Dagster UI):\n\n"
            f"```\ngraft-eval view --set {cs.dir} --run {run_id}\n```\n\n"
            f"or paste `{html.resolve().as_uri()}` into the address bar."
        ),
        "report_html": dg.MetadataValue.path(str(html)),
        "report_md": dg.MetadataValue.path(str(out / MARKDOWN_FILE)),
        "report_json": dg.MetadataValue.path(str(out / REPORT_FILE)),
        "cases_parquet": dg.MetadataValue.path(str(out / PARQUET_FILE)),
    }


def report_run_id(context: dg.AssetExecutionContext, harness: HarnessRun) -> str:
    """One report run id per Dagster run, so the report and the comparison name the same run."""
    return new_run_id(harness.created_at, context.run.run_id.replace("-", "")[:4])


@dg.asset(
    partitions_def=case_set_partitions,
    group_name=EVALUATION_GROUP,
    check_specs=REPORT_CHECKS,
)
def eval_report(
    context: dg.AssetExecutionContext,
    harness_run: HarnessRun,
    eval_metrics: Metrics,
    labeler_agreement: AgreementReport,
    case_sets: CaseSetsResource,
) -> dg.MaterializeResult:  # type: ignore[type-arg]  # bare: with check_specs Dagster rejects [Any]
    """report.json, report.md, report.html and cases.parquet under the set's runs/, diffed and checked.

    Each is a path in the metadata, beside a one-screen brief of the run and, for repeated trials,
    the flaky cases and the worst-case share as numbers.
    """
    with collector_paused():  # as `graft-eval run`: no collection walks the run's values
        cs = case_sets.open_for_run(context)
        thresholds = set_thresholds()
        report = build_report(
            harness_run,
            eval_metrics,
            run_id=report_run_id(context, harness_run),
            label_agreement=report_agreement(labeler_agreement),
            inputs=report_inputs(context),
        )
        details = kept_details(context, cs, harness_run)
        published = publish_run(
            cs,
            report,
            thresholds=thresholds,
            strict=False,
            results=synthetic_cards(cs, harness_run) if details is None else None,
            details=pilot_panels(cs, harness_run) if details is None else details,
        )
        for why in published.warnings:
            context.log.warning(why)
        report, diff = published.checked.report, published.checked.diff
        block = thresholds.get(report.set.kind)
        match_required = block is not None and block.match_baseline
        out = published.out_dir
        return dg.MaterializeResult(
            metadata={
                "run_id": report.run_id,
                "inputs": dg.MetadataValue.json(report.inputs or {}),
                "report": dg.MetadataValue.md(brief_markdown(report, diff)),  # one screen: opens at its top
                "verifier_calibration": dg.MetadataValue.md(calibration_markdown(calibrate(report.cases))),
                **report_file_metadata(cs, out, report.run_id),
                "metrics": metric_table(report.metrics, report.llm),
                "prompt_version": report.prompt.prompt_version,
                "prompt_fingerprint": report.prompt.prompt_fingerprint,
                "engine_fingerprint": report.prompt.engine_fingerprint or "",
                "models": models_label(report.models.fast, report.models.strong),
                "llm": report.llm,
                "model_numbers": model_numbers(report.llm),
                "changed_cases": 0 if diff is None else len(diff.changed_cases),
                "usage_moved": diff is not None and diff.usage_moved,
                **trials_metadata(report.trials),
            },
            check_results=[
                thresholds_check(report.thresholds, context.partition_key),
                baseline_check(published, match_required, context.partition_key),
                usage_check(published, block is not None and block.match_usage, context.partition_key),
            ],
        )
