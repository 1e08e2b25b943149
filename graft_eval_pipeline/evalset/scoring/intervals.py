"""Binomial intervals for every rate of a report: how far the data bound the true rate.

A rate on 30 designed cases that reads 0.0 is not evidence of a zero rate; the 95% interval
says how large the rate could still be. Safety rates (under-classification, unavailable) use the
exact Clopper-Pearson interval, which never undercovers; the others use Wilson's score interval,
which is shorter and close to nominal. The quantiles come from scipy.special (the inverse
regularised incomplete beta function is the beta quantile; `ndtri` the normal one), imported on
first use so commands that never compute a rate do not pay for it; the tests check every bound
against statsmodels' `proportion_confint`.
"""

from __future__ import annotations

import math
from typing import Literal

CONFIDENCE = 0.95
BOUND_DECIMALS = 4

IntervalMethod = Literal["clopper-pearson", "wilson"]


def beta_quantile(q: float, a: float, b: float) -> float:
    """The q-quantile of Beta(a, b)."""
    from scipy.special import betaincinv

    return float(betaincinv(a, b, q))


def normal_quantile(q: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(q))


def _check(k: float, n: float) -> None:
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")


def clopper_pearson(k: float, n: float, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Exact two-sided interval from the beta quantiles; None when n is 0.

    `k` and `n` may be non-integer (an effective sample size of a weighted estimate).
    """
    _check(k, n)
    if n == 0:
        return None
    alpha = 1 - confidence
    lo = 0.0 if k == 0 else beta_quantile(alpha / 2, k, n - k + 1)
    hi = 1.0 if k == n else beta_quantile(1 - alpha / 2, k + 1, n - k)
    return lo, hi


def upper_bound(k: float, n: float, confidence: float = CONFIDENCE) -> float | None:
    """One-sided exact upper bound: the rate is below it with `confidence` (0 of 30 → 0.0950)."""
    _check(k, n)
    if n == 0:
        return None
    return 1.0 if k == n else beta_quantile(confidence, k + 1, n - k)


def wilson(k: float, n: float, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Wilson's score interval; None when n is 0."""
    _check(k, n)
    if n == 0:
        return None
    z = normal_quantile(1 - (1 - confidence) / 2)
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def interval(
    method: IntervalMethod, k: float, n: float, confidence: float = CONFIDENCE
) -> tuple[float, float] | None:
    return clopper_pearson(k, n, confidence) if method == "clopper-pearson" else wilson(k, n, confidence)


def error_free_cases_needed(limit: float, confidence: float = CONFIDENCE) -> int | None:
    """How many cases with no error show a rate below `limit` at `confidence` (one-sided, exact).

    With 0 errors in n the exact upper bound is 1 − (1 − confidence)^(1/n), so n must reach
    ln(1 − confidence) / ln(1 − limit): 149 for 2% at 95%. None for a limit of 0 (no finite
    sample shows a zero rate) or of 1 and above (any sample does).
    """
    if limit <= 0 or limit >= 1:
        return None
    return math.ceil(math.log(1 - confidence) / math.log(1 - limit))


def round_down(value: float) -> float:
    """A lower bound to 4 decimals, rounded down: a rounded interval still holds the exact one."""
    return float(math.floor(value * 10**BOUND_DECIMALS + 1e-9) / 10**BOUND_DECIMALS)


def round_up(value: float) -> float:
    """An upper bound to 4 decimals, rounded up (0.020004 reads 0.0201, never 0.02: a gate on
    a rounded bound must not pass what the exact bound fails)."""
    return float(math.ceil(value * 10**BOUND_DECIMALS - 1e-9) / 10**BOUND_DECIMALS)
