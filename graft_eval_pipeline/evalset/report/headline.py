"""The headline rates: what report.html shows first, plots over runs, and what Dagster records
as numeric metadata on `eval_metrics` so it can plot them over runs and partitions.

Each rate comes with its count (k of n) where the metrics hold it, and an interval slot that is
empty today: once the metrics carry intervals (issue 13), `headline_metrics` fills
`Headline.interval` from them and every view (HTML, Dagster `<name>_lower` / `<name>_upper`)
shows them without further changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from graft_eval_pipeline.card.models import RISK_CLASSES, RISK_ORDER
from graft_eval_pipeline.evalset.report.thresholds import METRIC_DIRECTIONS, Direction
from graft_eval_pipeline.evalset.scoring import Confusion, Metrics

Count = tuple[int, int]  # (k, n)


def _matrix_count(confusion: Confusion, counts: Callable[[int, int], bool]) -> Count:
    k = sum(
        n
        for g, row in enumerate(confusion.matrix)
        for p, n in enumerate(row)
        if counts(RISK_ORDER[RISK_CLASSES[g]], RISK_ORDER[RISK_CLASSES[p]])
    )
    return k, confusion.n


def _under(c: Confusion) -> Count:
    return _matrix_count(c, lambda g, p: p < g)


def _severe(c: Confusion) -> Count:
    return _matrix_count(c, lambda g, p: g == 2 and p == 0)


def _over(c: Confusion) -> Count:
    return _matrix_count(c, lambda g, p: p > g)


def _exact(c: Confusion) -> Count:
    return _matrix_count(c, lambda g, p: g == p)


def _trivial_recall(c: Confusion) -> Count:
    return c.matrix[0][0], sum(c.matrix[0])


# camelCase metric -> (label, its count from the metrics, or None when the metrics do not hold it)
HEADLINE_RATES: dict[str, tuple[str, Callable[[Metrics], Count] | None]] = {
    "underClassificationFinal": ("Under-classified (final)", lambda m: _under(m.confusion.final)),
    "severeUnderClassificationFinal": (
        "Severe under (sensitive → trivial, final)",
        lambda m: _severe(m.confusion.final),
    ),
    "overClassificationFinal": ("Over-classified (final)", lambda m: _over(m.confusion.final)),
    "exactAccuracyFinal": ("Exact class (final)", lambda m: _exact(m.confusion.final)),
    "underClassificationFloor": ("Under-classified (floor)", lambda m: _under(m.confusion.floor)),
    "underClassificationModel": ("Under-classified (model)", lambda m: _under(m.confusion.model)),
    "severeUnderClassificationFloor": ("Severe under (floor)", lambda m: _severe(m.confusion.floor)),
    "trivialRecall": ("Trivial recall (final)", lambda m: _trivial_recall(m.confusion.final)),
    "outOfScopePrecision": (
        "Out-of-scope precision",
        lambda m: (m.out_of_scope_counts.tp, m.out_of_scope_counts.tp + m.out_of_scope_counts.fp),
    ),
    "outOfScopeRecall": (
        "Out-of-scope recall",
        lambda m: (m.out_of_scope_counts.tp, m.out_of_scope_counts.tp + m.out_of_scope_counts.fn),
    ),
    "flagPrecision": ("Flag precision", lambda m: (m.flag_counts.tp, m.flag_counts.tp + m.flag_counts.fp)),
    "flagRecall": ("Flag recall", lambda m: (m.flag_counts.tp, m.flag_counts.tp + m.flag_counts.fn)),
    "unavailableRate": ("Unavailable", lambda m: (sum(m.unavailable_by_reason.values()), m.run_cases)),
    "cardAcceptableRate": ("Card acceptable", None),
}


@dataclass(frozen=True)
class Headline:
    name: str  # the camelCase metric, as report.json and thresholds.json name it
    label: str
    value: float | None
    count: Count | None  # (k, n) behind the rate, where the metrics hold it
    interval: tuple[float, float] | None  # empty until the metrics carry intervals (issue 13)
    direction: Direction | None


def headline_metrics(metrics: Metrics) -> list[Headline]:
    values = metrics.to_json_dict()
    return [
        Headline(
            name=name,
            label=label,
            value=values[name],
            count=count(metrics) if count is not None else None,
            interval=None,
            direction=METRIC_DIRECTIONS.get(name),
        )
        for name, (label, count) in HEADLINE_RATES.items()
    ]


def snake_name(name: str) -> str:
    """`underClassificationFinal` -> `under_classification_final` (Dagster metadata keys)."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def headline_metadata(metrics: Metrics) -> dict[str, float | None]:
    """Every headline rate as a number (null on an empty denominator), and its bounds once the
    metrics carry them: what Dagster plots over runs and partitions."""
    values: dict[str, float | None] = {}
    for headline in headline_metrics(metrics):
        key = snake_name(headline.name)
        values[key] = headline.value
        if headline.interval is not None:
            values[f"{key}_lower"], values[f"{key}_upper"] = headline.interval
    return values
