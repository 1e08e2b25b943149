"""The comparison statistics against scipy and statsmodels, and the bootstrap on simulated data."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar

from graft_eval_pipeline.evalset.report.paired_stats import (
    mcnemar_exact_p,
    paired_rate_differences,
    percentile_interval,
)

EDGE_PAIRS = [(0, 0), (0, 1), (1, 0), (0, 7), (7, 0), (5, 5), (0, 40), (40, 40), (3, 60), (430, 500)]


def _random_pairs(count: int, seed: int) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    return [(rng.randint(0, 80), rng.randint(0, 80)) for _ in range(count)]


@pytest.mark.parametrize("b, c", EDGE_PAIRS + _random_pairs(60, seed=14))
def test_mcnemar_exact_p_matches_statsmodels(b: int, c: int) -> None:
    # the concordant cells do not enter the exact test: random ones must not change it
    table = [[17, b], [c, 4]]
    expected = mcnemar(table, exact=True).pvalue
    assert mcnemar_exact_p(b, c) == pytest.approx(expected, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("b, c", [p for p in EDGE_PAIRS + _random_pairs(60, seed=15) if sum(p) > 0])
def test_mcnemar_exact_p_matches_a_two_sided_binomial_test_on_the_discordant_pairs(b: int, c: int) -> None:
    expected = binomtest(b, b + c, 0.5, alternative="two-sided").pvalue
    assert mcnemar_exact_p(b, c) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_mcnemar_exact_p_edges() -> None:
    assert mcnemar_exact_p(0, 0) == 1.0  # no discordant pair: no evidence either way
    assert mcnemar_exact_p(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact_p(0, 6) == pytest.approx(2 / 64)
    assert mcnemar_exact_p(3, 3) == 1.0
    assert mcnemar_exact_p(0, 60) == pytest.approx(2 * 0.5**60)
    assert mcnemar_exact_p(1000, 1000) == 1.0 and 0.01 < mcnemar_exact_p(900, 1000) < 0.05
    with pytest.raises(ValueError):
        mcnemar_exact_p(-1, 3)


def simulate_pairs(rng: np.random.Generator, n: int, joint: tuple[float, float, float, float]) -> np.ndarray:
    """n cases with (base outcome, new outcome) drawn from P(1,1), P(1,0), P(0,1), P(0,0)."""
    cells = rng.choice(4, size=n, p=joint)
    base = np.isin(cells, (0, 1)).astype(float)
    new = np.isin(cells, (0, 2)).astype(float)
    return np.column_stack([base, new])


JOINT = (0.20, 0.05, 0.12, 0.63)  # P(1,1), P(1,0), P(0,1), P(0,0): correlated runs
TRUE_DIFFERENCE = (JOINT[0] + JOINT[2]) - (JOINT[0] + JOINT[1])


def _interval_for(pairs: np.ndarray, seed: int) -> tuple[float, float]:
    ones = np.ones((len(pairs), 1))
    reps = paired_rate_differences(pairs[:, :1], ones, pairs[:, 1:], ones, resamples=2_000, seed=seed)
    interval = percentile_interval(reps[:, 0])
    assert interval is not None
    return interval.low, interval.high


def test_paired_bootstrap_interval_covers_the_true_difference_about_95_percent_of_the_time() -> None:
    """400 simulated pairs of runs, each one column of one call (the columns share the resampled
    case ids, as the rates of one comparison do; the data sets themselves are independent)."""
    rng = np.random.default_rng(2026)
    trials, n = 400, 150
    data = [simulate_pairs(rng, n, JOINT) for _ in range(trials)]
    base = np.column_stack([d[:, 0] for d in data])
    new = np.column_stack([d[:, 1] for d in data])
    ones = np.ones((n, trials))
    reps = paired_rate_differences(base, ones, new, ones, resamples=2_000, seed=14)
    intervals = [percentile_interval(reps[:, t]) for t in range(trials)]
    covered = sum(i is not None and i.low <= TRUE_DIFFERENCE <= i.high for i in intervals)
    coverage = covered / trials
    # binomial sd of the estimate at 95 %: 1.1 points; the percentile bootstrap runs a little low
    assert 0.91 <= coverage <= 0.985, coverage


def test_paired_bootstrap_spread_is_the_paired_standard_error_not_the_unpaired_one() -> None:
    rng = np.random.default_rng(7)
    n = 400
    pairs = simulate_pairs(rng, n, JOINT)
    ones = np.ones((n, 1))
    reps = paired_rate_differences(pairs[:, :1], ones, pairs[:, 1:], ones, resamples=4_000, seed=1)[:, 0]
    p10 = float(np.mean((pairs[:, 0] == 1) & (pairs[:, 1] == 0)))
    p01 = float(np.mean((pairs[:, 0] == 0) & (pairs[:, 1] == 1)))
    paired_se = math.sqrt((p10 + p01 - (p01 - p10) ** 2) / n)
    pb, pn = pairs[:, 0].mean(), pairs[:, 1].mean()
    unpaired_se = math.sqrt(pb * (1 - pb) / n + pn * (1 - pn) / n)
    assert reps.std() == pytest.approx(paired_se, rel=0.08)
    assert reps.std() < 0.8 * unpaired_se
    assert reps.mean() == pytest.approx(pn - pb, abs=0.005)


def test_bootstrap_is_seeded_and_ratio_rates_with_empty_resamples_are_nan() -> None:
    rng = np.random.default_rng(3)
    pairs = simulate_pairs(rng, 60, JOINT)
    assert _interval_for(pairs, seed=5) == _interval_for(pairs, seed=5)
    assert _interval_for(pairs, seed=5) != _interval_for(pairs, seed=6)
    # a ratio rate whose denominator is one case in 60: most resamples miss it
    den = np.zeros((60, 1))
    den[0] = 1
    reps = paired_rate_differences(den, den, den * 0, den, resamples=2_000, seed=1)
    assert np.isnan(reps).mean() == pytest.approx((59 / 60) ** 60, abs=0.03)
    assert set(np.unique(reps[~np.isnan(reps)])) == {-1.0}
    empty = paired_rate_differences(np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2)))
    assert np.isnan(empty).all() and percentile_interval(empty[:, 0]) is None


def test_large_sets_are_resampled_in_chunks_with_the_same_result_as_small_ones() -> None:
    from graft_eval_pipeline.evalset.report import paired_stats

    rng = np.random.default_rng(11)
    pairs = simulate_pairs(rng, 500, JOINT)
    whole = _interval_for(pairs, seed=9)
    original = paired_stats.CHUNK_CELLS
    try:
        paired_stats.CHUNK_CELLS = 500 * 7  # 7 resamples per chunk
        chunked = _interval_for(pairs, seed=9)
    finally:
        paired_stats.CHUNK_CELLS = original
    assert chunked == pytest.approx(whole, abs=0.01)
