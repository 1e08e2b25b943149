"""Typed metadata of the evaluation assets.

Numbers as numbers (the UI plots them over runs and partitions), tables with a schema, and labels
for the model pair and for scripted numbers.

Ids, classes, counts, rates and costs only (E8), never case content.
"""

from collections.abc import Sequence

import dagster as dg

from graft_eval_pipeline.card import RISK_CLASSES
from graft_eval_pipeline.evalset.compare import Comparison, verdict_text
from graft_eval_pipeline.evalset.report import SUMMARY_METRICS
from graft_eval_pipeline.evalset.run import Estimate
from graft_eval_pipeline.evalset.scoring import (
    Confusion,
    HarnessRun,
    Metrics,
    RateStat,
    metric_stats,
    model_derived,
)


def model_numbers(llm: str) -> str:
    """Metadata label for model-derived rates, tokens and costs: a fake run's are scripted."""
    return "scripted" if llm == "fake" else "measured"


def models_label(fast: str, strong: str) -> str:
    """The model pair as metadata; the prompt-change sensor compares it with the environment's."""
    return f"{fast} / {strong}"


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
    """Headline metrics with k, n, interval and upper bound.

    `basis` says "scripted" for a fake run's model-derived numbers.
    """
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


FLOAT_RATE_COLUMNS = ("difference", "low", "high", "mcnemar_p", "adjusted_p", "detectable")


def rates_table(comparison: Comparison) -> dg.TableMetadataValue:
    """The comparison's rates as a table.

    `detectable` is the change each rate could detect with 80% power (a number), and the verdict
    text says it beside "no clear difference".
    """
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
        "adjusted_p",
        "detectable",
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
                    "adjusted_p": r.adjusted_p,
                    "detectable": r.detectable,
                    "verdict": verdict_text(r),
                }
            )
            for r in comparison.rates
        ],
        schema=dg.TableSchema(
            columns=[dg.TableColumn(c, "float" if c in FLOAT_RATE_COLUMNS else "string") for c in columns]
        ),
    )
