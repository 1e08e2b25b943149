"""Statistics for two runs over the same cases, and for one run against its gold labels.

A one-case flip on a 30-case set moves a rate by 0.033: whether that is a change or noise
depends on how many cases changed which way. Two runs over one set are paired (the same case
is hard or easy for both), so the differences are judged per case: a paired bootstrap over case
ids for any rate, and the exact McNemar test on the cases where a binary outcome changed. Wilson
intervals and Cohen's kappa serve the verifier calibration. Pure functions, numpy only; the
tests check them against scipy and statsmodels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

CONFIDENCE = 0.95
Z_95 = 1.959963984540054  # the 97.5th percentile of the standard normal
DEFAULT_RESAMPLES = 2_000
MIN_RESAMPLES = 2_000
DEFAULT_SEED = 20_261_015
# Cells of the resample-count matrix built at once (resamples × cases): bounds memory on large
# sets (4 M int64 = 32 MB) while a small set is one matrix product.
CHUNK_CELLS = 4_000_000

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def resample_counts(n: int, resamples: int, rng: np.random.Generator) -> list[npt.NDArray[np.int64]]:
    """How often each of `n` cases is drawn in each resample (with replacement), in chunks of rows.

    A row of counts is one bootstrap resample over case ids; a sum over the resample is then the
    row times a per-case column, so every statistic shares the same resamples.
    """
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


def wilson_interval(k: int, n: int, z: float = Z_95) -> Interval | None:
    """Wilson score interval of a share k/n (sensible near 0 and 1, unlike the normal one)."""
    if n <= 0:
        return None
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return Interval(max(0.0, centre - half), min(1.0, centre + half))


def cohen_kappa(table: npt.ArrayLike) -> float | None:
    """Cohen's kappa of a square agreement table (rows one rater, columns the other).

    None when it is undefined: no pairs, or chance agreement of 1 (both always say one class).
    """
    counts = np.asarray(table, dtype=np.float64)
    total = counts.sum()
    if total == 0:
        return None
    observed = np.trace(counts) / total
    expected = float(counts.sum(axis=1) @ counts.sum(axis=0)) / (total * total)
    if expected >= 1:
        return None
    return float((observed - expected) / (1 - expected))


def kappa_interval(
    rater_a: Sequence[int],
    rater_b: Sequence[int],
    classes: int,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Interval | None:
    """Bootstrap interval of Cohen's kappa over cases (class indices 0..classes-1 per rater)."""
    n = len(rater_a)
    if n == 0:
        return None
    cell = np.asarray(rater_a, dtype=np.int64) * classes + np.asarray(rater_b, dtype=np.int64)
    one_hot = np.zeros((n, classes * classes))
    one_hot[np.arange(n), cell] = 1.0
    rng = np.random.default_rng(seed)
    tables = np.vstack([counts @ one_hot for counts in resample_counts(n, resamples, rng)])
    tables = tables.reshape(-1, classes, classes)
    observed = np.trace(tables, axis1=1, axis2=2) / n
    expected = np.einsum("ri,ri->r", tables.sum(axis=2), tables.sum(axis=1)) / (n * n)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappas = (observed - expected) / (1 - expected)
    kappas[expected >= 1] = np.nan
    return percentile_interval(np.asarray(kappas, dtype=np.float64))
