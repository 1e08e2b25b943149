"""The headline rates: what report.html shows first and Dagster records as numeric metadata.

report.html plots them over runs; Dagster records them on `eval_metrics` so it can plot them over
runs and partitions.

Each is a rate of the metrics with its evidence (k of n and the 95% interval); every view
(HTML, brief, Dagster) reads it from here.

Dagster draws one chart per numeric metadata entry, sorted by key: each plotted rate is one
float whose key starts with its rank (`01_under_classification_final`), the most watched first,
and the evidence (k/n, interval, upper bound) is one JSON entry that is not plotted.
"""

from __future__ import annotations

from dataclasses import dataclass

from graft_eval_pipeline.evalset.report.thresholds import METRIC_DIRECTIONS, Direction
from graft_eval_pipeline.evalset.scoring import Metrics, RateStat

Count = tuple[int, int]  # (k, n)

# camelCase metric (as report.json and thresholds.json name it) -> label
HEADLINE_RATES: dict[str, str] = {
    "underClassificationFinal": "Under-classified (final)",
    "severeUnderClassificationFinal": "Severe under (sensitive → trivial, final)",
    "overClassificationFinal": "Over-classified (final)",
    "exactAccuracyFinal": "Exact class (final)",
    "underClassificationFloor": "Under-classified (floor)",
    "underClassificationModel": "Under-classified (model)",
    "severeUnderClassificationFloor": "Severe under (floor)",
    "trivialRecall": "Trivial recall (final)",
    "outOfScopePrecision": "Out-of-scope precision",
    "outOfScopeRecall": "Out-of-scope recall",
    "flagPrecision": "Flag precision",
    "flagRecall": "Flag recall",
    "unavailableRate": "Unavailable",
    "cardAcceptableRate": "Card acceptable",
}


@dataclass(frozen=True)
class Headline:
    name: str  # the camelCase metric
    label: str
    value: float | None
    count: Count | None  # (k, n) behind the rate
    interval: tuple[float, float] | None  # two-sided 95%; None on an empty denominator
    direction: Direction | None


def snake_name(name: str) -> str:
    """`underClassificationFinal` -> `under_classification_final` (attributes, Dagster metadata keys)."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def headline_metrics(metrics: Metrics) -> list[Headline]:
    headlines = []
    for name, label in HEADLINE_RATES.items():
        rate = getattr(metrics, snake_name(name))
        assert isinstance(rate, RateStat), name
        headlines.append(
            Headline(
                name=name,
                label=label,
                value=rate.value,
                count=(rate.k, rate.n),
                interval=rate.ci95,
                direction=METRIC_DIRECTIONS.get(name),
            )
        )
    return headlines


# What Dagster plots, in this order: the gated safety rates first, then the other headline rates.
PLOTTED_RATES: tuple[str, ...] = (
    "underClassificationFinal",
    "severeUnderClassificationFinal",
    "severeUnderClassificationSensitiveFinal",
    "unavailableRate",
    "exactAccuracyFinal",
    "overClassificationFinal",
    "flagRecall",
    "flagPrecision",
    "outOfScopeRecall",
    "outOfScopePrecision",
    "underClassificationFloor",
    "underClassificationModel",
    "severeUnderClassificationFloor",
    "trivialRecall",
    "cardAcceptableRate",
)
COST_KEY = "cost_usd"


def plotted_key(name: str) -> str:
    """The metadata key of a plotted rate: its rank, then its snake_case name."""
    return f"{PLOTTED_RATES.index(name) + 1:02d}_{snake_name(name)}"


def plotted_metadata(metrics: Metrics) -> dict[str, float | None]:
    """The numbers Dagster plots over runs and partitions, in PLOTTED_RATES order, then the cost.

    The cost's key is `<rank>_cost_usd`; a value is null on an empty denominator or an unpriced model.
    """
    values: dict[str, float | None] = {}
    for name in PLOTTED_RATES:
        rate = getattr(metrics, snake_name(name))
        assert isinstance(rate, RateStat), name
        values[plotted_key(name)] = rate.value
    values[f"{len(PLOTTED_RATES) + 1:02d}_{COST_KEY}"] = metrics.cost_usd
    return values


def rate_evidence(metrics: Metrics) -> dict[str, dict[str, object]]:
    """Each plotted rate's k, n, 95% interval and (safety rates) upper bound.

    One JSON entry beside the plotted numbers, so the intervals do not crowd the Plots tab.
    """
    evidence: dict[str, dict[str, object]] = {}
    for name in PLOTTED_RATES:
        rate = getattr(metrics, snake_name(name))
        assert isinstance(rate, RateStat), name
        evidence[name] = {
            "k": rate.k,
            "n": rate.n,
            "value": rate.value,
            "ci95": list(rate.ci95) if rate.ci95 is not None else None,
            **({"upper95": rate.upper95} if hasattr(rate, "upper95") else {}),
        }
    return evidence
