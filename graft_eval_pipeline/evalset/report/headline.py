"""The headline rates: what report.html shows first and Dagster records as numeric metadata.

report.html plots them over runs; Dagster records them on `eval_metrics` so it can plot them over
runs and partitions.

Each is a rate of the metrics with its evidence (k of n and the 95% interval); every view
(HTML, brief, Dagster `<name>`, `<name>_lower` / `<name>_upper`) reads it from here.
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


def headline_metadata(metrics: Metrics) -> dict[str, float | None]:
    """Every headline rate as a number (null on an empty denominator) with its bounds.

    What Dagster plots over runs and partitions.
    """
    values: dict[str, float | None] = {}
    for headline in headline_metrics(metrics):
        key = snake_name(headline.name)
        values[key] = headline.value
        if headline.interval is not None:
            values[f"{key}_lower"], values[f"{key}_upper"] = headline.interval
    return values
