"""Binomial intervals for every rate of a report: how far the data bound the true rate.

A rate on 30 designed cases that reads 0.0 is not evidence of a zero rate; the 95% interval
says how large the rate could still be. Safety rates (under-classification, unavailable) use the
exact Clopper-Pearson interval, which never undercovers; the others use Wilson's score interval,
which is shorter and close to nominal. The normal quantile is the standard library's; the beta
quantile (the inverse regularised incomplete beta function) is computed here in plain Python
(`beta_quantile`) because scipy's import alone (numpy included) took a third of a whole
`graft-eval run`'s start-up budget for a few dozen numbers per report. The tests check every
bound against statsmodels' `proportion_confint` and the beta quantile against scipy's
`betaincinv` on random shapes, small and large.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Literal

CONFIDENCE = 0.95
BOUND_DECIMALS = 4

IntervalMethod = Literal["clopper-pearson", "wilson"]


_TINY = 1e-300
_CF_EPS = 1e-16
_CF_MAX_TERMS = 100_000
_NEWTON_STEPS = 100


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function, by the modified Lentz method.

    Numerical Recipes, 3rd ed., section 6.4; converges fast for x < (a + 1) / (a + b + 2).
    """

    def guard(value: float) -> float:
        return _TINY if abs(value) < _TINY else value

    c, d = 1.0, 1.0 / guard(1.0 - (a + b) * x / (a + 1.0))
    h = d
    for m in range(1, _CF_MAX_TERMS):
        even = m * (b - m) * x / ((a - 1.0 + 2 * m) * (a + 2 * m))
        d = 1.0 / guard(1.0 + even * d)
        c = guard(1.0 + even / c)
        h *= d * c
        odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1.0 + 2 * m))
        d = 1.0 / guard(1.0 + odd * d)
        c = guard(1.0 + odd / c)
        h *= d * c
        if abs(d * c - 1.0) < _CF_EPS:
            break
    return h


def beta_cdf(x: float, a: float, b: float) -> float:
    """The regularised incomplete beta function I_x(a, b): P(X <= x) for X ~ Beta(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - _log_beta(a, b))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _continued_fraction(a, b, x) / a
    return 1.0 - front * _continued_fraction(b, a, 1.0 - x) / b


def _first_guess(q: float, a: float, b: float) -> float:
    """A starting point for Newton's method (Numerical Recipes, 3rd ed., `invbetai`)."""
    if a >= 1.0 and b >= 1.0:
        tail = min(q, 1.0 - q)
        t = math.sqrt(-2.0 * math.log(tail))
        z = (2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t
        z = -z if q < 0.5 else z
        lam = (z * z - 3.0) / 6.0
        h = 2.0 / (1.0 / (2.0 * a - 1.0) + 1.0 / (2.0 * b - 1.0))
        w = z * math.sqrt(lam + h) / h - (1.0 / (2.0 * b - 1.0) - 1.0 / (2.0 * a - 1.0)) * (
            lam + 5.0 / 6.0 - 2.0 / (3.0 * h)
        )
        return a / (a + b * math.exp(2.0 * w))
    t = math.exp(a * math.log(a / (a + b))) / a
    u = math.exp(b * math.log(b / (a + b))) / b
    w = t + u
    return math.pow(a * w * q, 1.0 / a) if q < t / w else 1.0 - math.pow(b * w * (1.0 - q), 1.0 / b)


def beta_quantile(q: float, a: float, b: float) -> float:
    """The q-quantile of Beta(a, b) (a, b > 0).

    Halley's method on `beta_cdf`, kept inside a shrinking bracket (a step that leaves it bisects
    instead), to within a few ulps.
    """
    if q <= 0.0:
        return 0.0
    if q >= 1.0:
        return 1.0
    low, high = 0.0, 1.0
    x = min(max(_first_guess(q, a, b), _TINY), 1.0 - 1e-16)
    log_norm = -_log_beta(a, b)
    for _ in range(_NEWTON_STEPS):
        error = beta_cdf(x, a, b) - q
        if error == 0.0:
            return x
        if error > 0.0:
            high = x
        else:
            low = x
        density = math.exp((a - 1.0) * math.log(x) + (b - 1.0) * math.log1p(-x) + log_norm)
        step = error / density if density > 0.0 else math.inf
        step /= 1.0 - 0.5 * min(1.0, step * ((a - 1.0) / x - (b - 1.0) / (1.0 - x)))
        if abs(step) <= 1e-15 * x:
            return x - step
        candidate = x - step
        x = candidate if low < candidate < high else (low + high) / 2.0
        if high - low <= 1e-15 * high:
            return x
    return x


def normal_quantile(q: float) -> float:
    return NormalDist().inv_cdf(q)


def t_quantile(q: float, df: float) -> float:
    """Student's t quantile for q > 0.5, from the beta: df / (df + T²) ~ Beta(df/2, 1/2)."""
    if not 0.5 < q < 1 or df <= 0:
        raise ValueError("t_quantile needs 0.5 < q < 1 and df > 0")
    x = beta_quantile(2 * (1 - q), df / 2, 0.5)
    return math.sqrt(df * (1 - x) / x)


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


def jeffreys(k: float, n: float, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Jeffreys' interval of k of n, with the bounds at 0 and 1 of Brown, Cai and DasGupta (2001).

    The equal-tailed quantiles of Beta(k + 1/2, n - k + 1/2), with the bound at 0 (k = 0) or 1 (k =
    n); None when n is 0. Close to the mid-p exact interval; `k` and `n` may be non-integer (an
    effective size).
    """
    _check(k, n)
    if n == 0:
        return None
    alpha = 1 - confidence
    lo = 0.0 if k <= 0 else beta_quantile(alpha / 2, k + 0.5, n - k + 0.5)
    hi = 1.0 if k >= n else beta_quantile(1 - alpha / 2, k + 0.5, n - k + 0.5)
    return lo, hi


def upper_bound(k: float, n: float, confidence: float = CONFIDENCE) -> float | None:
    """One-sided exact upper bound: the rate is below it with `confidence` (0 of 30 → 0.0950)."""
    _check(k, n)
    if n == 0:
        return None
    return 1.0 if k == n else beta_quantile(confidence, k + 1, n - k)


def lower_bound(k: float, n: float, confidence: float = CONFIDENCE) -> float | None:
    """One-sided exact lower bound: the rate is above it with `confidence` (30 of 30 → 0.9050)."""
    _check(k, n)
    if n == 0:
        return None
    return 0.0 if k == 0 else beta_quantile(1 - confidence, k, n - k + 1)


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
    """An upper bound to 4 decimals, rounded up.

    0.020004 reads 0.0201, never 0.02: a gate on a rounded bound must not pass what the exact bound
    fails.
    """
    return float(math.ceil(value * 10**BOUND_DECIMALS - 1e-9) / 10**BOUND_DECIMALS)
