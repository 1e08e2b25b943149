"""A rate as the report holds it: k of n, the share and its 95% interval (intervals.py).

Shares are rounded to 4 decimals; bounds are rounded outwards, so the printed interval always
contains the exact one. Gates compare the exact numbers (thresholds.py), not these.
"""

from __future__ import annotations

from graft_eval_pipeline.evalset.scoring.intervals import (
    IntervalMethod,
    interval,
    round_down,
    round_up,
    upper_bound,
)
from graft_eval_pipeline.evalset.scoring.report_schema import RateStat, SafetyRate

RATE_DECIMALS = 4


def rate(numerator: float, denominator: float) -> float | None:
    """A share rounded to 4 decimals; None on an empty denominator."""
    return round(numerator / denominator, RATE_DECIMALS) if denominator else None


def rounded(bounds: tuple[float, float] | None) -> tuple[float, float] | None:
    """An interval to 4 decimals, rounded outwards so it still holds the exact one."""
    return None if bounds is None else (round_down(bounds[0]), round_up(bounds[1]))


def rate_stat(k: int, n: int, method: IntervalMethod = "wilson") -> RateStat:
    """`k` of `n` with the share and its two-sided 95% interval (null on an empty denominator)."""
    return RateStat(k=k, n=n, value=rate(k, n), ci95=rounded(interval(method, k, n)), method=method)


def safety_rate(k: int, n: int) -> SafetyRate:
    """`k` of `n` with the exact interval and the one-sided 95% upper bound."""
    upper = upper_bound(k, n)
    return SafetyRate(
        **rate_stat(k, n, "clopper-pearson").model_dump(),
        upper95=None if upper is None else round_up(upper),
    )
