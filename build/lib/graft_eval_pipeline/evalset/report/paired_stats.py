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
