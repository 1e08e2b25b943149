"""Statistics for two runs over the same cases: is a difference a change or noise?

A one-case flip on a 30-case set moves a rate by 0.033: whether that is a change or noise
depends on how many cases changed which way. Two runs over one set are paired (the same case
is hard or easy for both), so the differences are judged per case: a paired bootstrap over case
ids for any rate, and the exact McNemar test on the cases where a binary outcome changed. Pure
functions, numpy only; the tests check them against scipy and statsmodels. numpy is imported
inside the functions that use it: this module's defaults are read by every command, and numpy
(with the pandas probe it sets off in pyarrow) would otherwise cost a plain `graft-eval run` a
third of a second.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]

CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 2_000
MIN_RESAMPLES = 2_000
DEFAULT_SEED = 20_261_015
# Cells of the resample-count matrix built at once (resamples × cases): bounds memory on large
# sets (4 M int64 = 32 MB) while a small set is one matrix product.
CHUNK_CELLS = 4_000_000


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def resample_counts(n: int, resamples: int, rng: np.random.Generator) -> list[npt.NDArray[np.int64]]:
    """How often each of `n` cases is drawn in each resample (with replacement), in chunks of rows.

    A row of counts is one bootstrap resample over case ids; a sum over the resample is then the
    row times a per-case column, so every statistic shares the same resamples.
    """
    import numpy as np

    chunk = max(1, CHUNK_CELLS // max(n, 1))
    out = []
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        picks = rng.integers(0, n, size=(rows, n))
        flat = (np.arange(rows)[:, None] * n + picks).ravel()
        out.append(np.bincount(flat, minlength=rows * n).reshape(rows, n))
    return out


def paired_rate_differences(
    base_num: FloatArray,
    base_den: FloatArray,
    new_num: FloatArray,
    new_den: FloatArray,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> FloatArray:
    """Bootstrap replicates of `rate_new - rate_base` for several rates at once.

    Each argument is (cases × rates): a case's numerator and denominator contribution (0/1 for a
    share) to each rate in each run; a rate is sum(num) / sum(den). Cases are resampled with
    replacement by id, the same draw for both runs and every rate (that is the pairing). Returns
    (resamples × rates); NaN where a resample leaves a denominator empty.
    """
    import numpy as np

    n, rates = base_num.shape
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    if n == 0:
        return np.full((resamples, rates), np.nan)
    columns = np.hstack([base_num, base_den, new_num, new_den]).astype(np.float64)
    rng = np.random.default_rng(seed)
    sums = np.vstack([counts @ columns for counts in resample_counts(n, resamples, rng)])
    b_num, b_den, n_num, n_den = np.hsplit(sums, 4)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = n_num / n_den - b_num / b_den
    diff[(b_den == 0) | (n_den == 0)] = np.nan
    return np.asarray(diff, dtype=np.float64)


def percentile_interval(replicates: FloatArray, confidence: float = CONFIDENCE) -> Interval | None:
    """The central `confidence` interval of one column of bootstrap replicates (NaNs dropped)."""
    import numpy as np

    values = replicates[~np.isnan(replicates)]
    if values.size == 0:
        return None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return Interval(float(low), float(high))


def mcnemar_exact_p(only_base: int, only_new: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs.

    Under no change each discordant case is equally likely to go either way, so the smaller count
    is Binomial(b + c, 1/2): p = min(1, 2 · P(X ≤ min(b, c))). Exact integer arithmetic; 1.0 with
    no discordant pair.
    """
    if only_base < 0 or only_new < 0:
        raise ValueError("discordant counts cannot be negative")
    m, k = only_base + only_new, min(only_base, only_new)
    if m == 0:
        return 1.0
    term, tail = 1, 1  # C(m, 0)
    for i in range(k):
        term = term * (m - i) // (i + 1)
        tail += term
    return min(1.0, 2 * tail / (1 << m))


def trials_exact_p(tables: list[tuple[int, int, int, int]]) -> float:
    """Two-sided exact p that the new run counts an outcome no more often than the base, over paired trials.

    Input: `(base_trials, base_k, new_trials, new_k)` per case.

    Under no change a case's trials are exchangeable across the two runs, so given its total
    k = base_k + new_k, new_k is hypergeometric (k events among base_trials + new_trials trials,
    new_trials of them the new run's). The sum S of new_k over cases is then a sum of independent
    hypergeometrics; its exact distribution (a convolution) gives p = min(1, 2 · min(P(S <= s),
    P(S >= s))). With one trial per run this is the exact McNemar test (`mcnemar_exact_p`): a case
    counted by one run only is a fair coin, the others fixed. Cases with unequal trial counts are
    exact too, where a sign test on per-case shares would not be (a run with more trials shows an
    event at least once more often).
    """
    import numpy as np

    dist = np.ones(1)
    observed = 0
    for base_n, base_k, new_n, new_k in tables:
        if min(base_n, new_n) < 0 or not (0 <= base_k <= base_n and 0 <= new_k <= new_n):
            raise ValueError("each table needs 0 <= k <= trials")
        total = base_k + new_k
        low, high = max(0, total - base_n), min(total, new_n)
        observed += new_k - low
        if high == low:
            continue  # every allocation of this case's events is the same: no information
        support = np.arange(low, high + 1)
        pmf = np.array(
            [math.comb(new_n, int(j)) * math.comb(base_n, total - int(j)) for j in support], dtype=np.float64
        )
        dist = np.convolve(dist, pmf / pmf.sum())
    lower = float(dist[: observed + 1].sum())
    upper = float(dist[observed:].sum())
    return min(1.0, 2 * min(lower, upper))


def holm_adjusted(p_values: list[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (None stays None and is not counted in the family).

    Sorted ascending, the i-th of m gets max over j <= i of (m - j) p_(j), capped at 1: rejecting
    where the adjusted p < alpha keeps the family-wise error at alpha whatever the dependence.
    """
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(present)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(present):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


_log_factorial_table: list[FloatArray] = []


def _log_factorials(n: int) -> FloatArray:
    """`math.lgamma(j + 1)` for j = 0..n (at least), each computed once for the process.

    `mcnemar_critical` is asked for every discordant count of a power sum (thousands at 5,000
    cases); the table makes each call one vector expression over the very floats `math.lgamma`
    gives, so every critical value is the one a per-term loop gives.
    """
    import numpy as np

    table = _log_factorial_table[0] if _log_factorial_table else np.zeros(0)
    if len(table) <= n:
        size = max(n + 1, 2 * len(table))
        more = np.array([math.lgamma(j + 1) for j in range(len(table), size)], dtype=np.float64)
        table = np.concatenate([table, more])
        _log_factorial_table[:] = [table]
    return table


@functools.lru_cache(maxsize=65_536)
def mcnemar_critical(discordant: int, alpha: float) -> int:
    """The fewest new-only discordant cases for which the exact McNemar p is below `alpha`.

    With `discordant` = m: the fewest j for which the two-sided exact McNemar p (`mcnemar_exact_p(m
    - j, j)`) is below `alpha`, in floating point; m + 1 where no split of m reaches it. That is the
    smallest j >= m/2 with 2 P(Binomial(m, 1/2) <= m - j) < alpha.
    """
    import numpy as np

    m = discordant
    k = np.arange(m // 2 + 1)
    lg = _log_factorials(m)
    log_choose = lg[m] - lg[k] - lg[m - k]  # lgamma(m + 1) - lgamma(i + 1) - lgamma(m - i + 1)
    cdf = np.cumsum(np.exp(log_choose - m * math.log(2)))
    ok = np.nonzero(2 * cdf < alpha * (1 - 1e-12))[0]
    return m - int(k[ok].max()) if ok.size else m + 1


def mcnemar_power(n: int, base_only: float, new_only: float, alpha: float) -> float:
    """The power of the exact McNemar test at `alpha` to call the new run worse over `n` paired cases.

    Each case is counted by the base run only with probability `base_only` and by the new run only
    with `new_only`: the discordant count is Binomial(n, base_only + new_only) and, given m of them,
    the new-only count Binomial(m, new_only / (base_only + new_only)). An exact sum over every m.
    """
    import numpy as np

    discord = base_only + new_only
    if n <= 0 or discord <= 0:
        return 0.0
    discord, share = min(discord, 1.0), min(new_only / discord, 1.0)
    log_fact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1)))])
    m = np.arange(n + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_weight = log_fact[n] - log_fact[m] - log_fact[n - m]
        log_weight += m * np.log(discord) + (n - m) * np.log1p(-discord) if discord < 1 else 0.0
        weight = np.exp(log_weight) if discord < 1 else (m == n).astype(np.float64)
    counts = np.nonzero(weight > 1e-15)[0]
    critical = np.array([mcnemar_critical(int(c), alpha) for c in counts])
    if share >= 1 or share <= 0:
        tails = (critical <= counts).astype(np.float64) if share >= 1 else np.zeros(len(counts))
    else:
        b = np.arange(int(counts.max()) + 1)[None, :]
        col = counts[:, None]
        with np.errstate(invalid="ignore", over="ignore"):
            log_pmf = log_fact[col] - log_fact[np.minimum(b, col)] - log_fact[np.maximum(col - b, 0)]
            log_pmf = log_pmf + b * math.log(share) + (col - b) * math.log1p(-share)
        inside = (b >= critical[:, None]) & (b <= col)
        tails = np.where(inside, np.exp(np.where(inside, log_pmf, -np.inf)), 0.0).sum(axis=1)
    power = float((weight[counts] * tails).sum())
    return min(power, 1.0)


@functools.lru_cache(maxsize=16_384)
def min_detectable_difference(
    n: int, discordance: float, alpha: float, power: float = 0.80, step: float = 0.001
) -> float | None:
    """The smallest rise of a rate the exact McNemar test detects with `power` over `n` paired cases.

    The runs already disagree on a share `discordance` of them by noise (half each way) and the
    change adds new-only cases: base-only discordance / 2, new-only discordance / 2 + the rise. The
    test is at `alpha`; the search is over steps of `step` (rounded up to it); None when even a rise
    to every case would not do (too few cases).
    """
    if n <= 0:
        return None
    noise = max(discordance, 0.0) / 2
    if mcnemar_power(n, noise, 1.0 - noise, alpha) < power:
        return None
    low, high = 0, math.ceil((1.0 - 2 * noise) / step)
    while low < high:  # the power rises with the difference: bisect on the grid
        mid = (low + high) // 2
        if mcnemar_power(n, noise, noise + mid * step, alpha) >= power:
            high = mid
        else:
            low = mid + 1
    return round(low * step, 6)
