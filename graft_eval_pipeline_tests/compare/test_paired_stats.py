"""The comparison statistics against scipy and statsmodels, and the bootstrap on simulated data."""

from __future__ import annotations

import gc
import math
import random

import numpy as np
import pytest

from graft_eval_pipeline.evalset.compare.paired_stats import (
    holm_adjusted,
    mcnemar_critical,
    mcnemar_exact_p,
    mcnemar_power,
    min_detectable_difference,
    paired_rate_differences,
    percentile_interval,
    trials_exact_p,
)

EDGE_PAIRS = [(0, 0), (0, 1), (1, 0), (0, 7), (7, 0), (5, 5), (0, 40), (40, 40), (3, 60), (430, 500)]

# The oracles are imported inside the tests that use them, and those tests share one xdist worker:
# the default lane's other worker never loads scipy or statsmodels.
pytestmark = pytest.mark.xdist_group("oracles")


def _random_pairs(count: int, seed: int) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    return [(rng.randint(0, 80), rng.randint(0, 80)) for _ in range(count)]


@pytest.mark.parametrize("b, c", EDGE_PAIRS + _random_pairs(60, seed=14))
def test_mcnemar_exact_p_matches_statsmodels(b: int, c: int) -> None:
    # the concordant cells do not enter the exact test: random ones must not change it
    from statsmodels.stats.contingency_tables import mcnemar

    table = [[17, b], [c, 4]]
    expected = mcnemar(table, exact=True).pvalue
    assert mcnemar_exact_p(b, c) == pytest.approx(expected, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("b, c", [p for p in EDGE_PAIRS + _random_pairs(60, seed=15) if sum(p) > 0])
def test_mcnemar_exact_p_matches_a_two_sided_binomial_test_on_the_discordant_pairs(b: int, c: int) -> None:
    from scipy.stats import binomtest

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
    """`n` cases with (base outcome, new outcome) drawn from P(1,1), P(1,0), P(0,1), P(0,0)."""
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
    """400 simulated pairs of runs, each one column of one call.

    The columns share the resampled case ids, as the rates of one comparison do; the data sets
    themselves are independent.
    """
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
    from graft_eval_pipeline.evalset.compare import paired_stats

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


@pytest.mark.parametrize("seed", range(12))
def test_holm_adjusted_matches_statsmodels_and_leaves_missing_p_out_of_the_family(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from statsmodels.stats.multitest import multipletests

    # Its Holm branch calls gc.collect() (half a second in a worker that holds the suite's objects);
    # the adjusted values do not depend on it.
    monkeypatch.setattr(gc, "collect", lambda generation=2: 0)

    rng = random.Random(seed)
    size = rng.randint(1, 8)
    p = [rng.choice([rng.random(), rng.random() / 100, 1.0, 0.0]) for _ in range(size)]
    present: list[float | None] = list(p)
    gaps = rng.sample(range(size + 1), k=min(2, size))
    for at in sorted(gaps):
        present.insert(at, None)
    got = holm_adjusted(present)
    assert [g is None for g in got] == [q is None for q in present]
    expected = multipletests(p, method="holm")[1]
    assert [g for g in got if g is not None] == pytest.approx(list(expected), abs=1e-12)
    assert holm_adjusted([]) == [] and holm_adjusted([None]) == [None]


@pytest.mark.parametrize("alpha", [0.05, 0.05 / 6, 0.001])
def test_mcnemar_critical_is_the_fewest_new_only_cases_the_exact_test_rejects(alpha: float) -> None:
    for m in range(0, 250):
        expected = next((j for j in range((m + 1) // 2, m + 1) if mcnemar_exact_p(m - j, j) < alpha), m + 1)
        assert mcnemar_critical(m, alpha) == expected, m


@pytest.mark.parametrize(
    "n, base_only, new_only, alpha",
    [(1, 0.1, 0.2, 0.05), (20, 0.0, 0.3, 0.05), (60, 0.05, 0.15, 0.05 / 6), (150, 0.02, 0.06, 0.01),
     (40, 0.5, 0.5, 0.05), (30, 0.0, 1.0, 0.05), (25, 0.2, 0.0, 0.05)],
)  # fmt: skip
def test_mcnemar_power_is_the_exact_sum_over_the_discordant_counts(
    n: int, base_only: float, new_only: float, alpha: float
) -> None:
    """The oracle of the McNemar power, from scipy's binomial pmf and the exact McNemar test.

    The oracle: scipy's binomial pmf and the exact McNemar test on every (base-only, new-only)
    split, summed over the multinomial of the three cells.
    """
    from scipy.stats import multinomial

    rest = max(0.0, 1 - base_only - new_only)
    expected = 0.0
    for b in range(n + 1):
        for c in range(n + 1 - b):
            if c > b and mcnemar_exact_p(b, c) < alpha:
                expected += multinomial.pmf([b, c, n - b - c], n, [base_only, new_only, rest])
    assert mcnemar_power(n, base_only, new_only, alpha) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("n, discordance", [(30, 0.0), (100, 0.08), (300, 0.12), (1000, 0.3), (60, 0.0)])
def test_min_detectable_difference_is_the_smallest_rise_with_80_percent_power(
    n: int, discordance: float
) -> None:
    alpha = 0.05 / 6
    found = min_detectable_difference(n, discordance, alpha)
    assert found is not None
    noise = discordance / 2
    assert mcnemar_power(n, noise, noise + found, alpha) >= 0.80
    assert mcnemar_power(n, noise, noise + found - 0.001, alpha) < 0.80


def test_min_detectable_difference_edges() -> None:
    assert min_detectable_difference(0, 0.0, 0.05) is None  # no case: nothing is detectable
    assert min_detectable_difference(3, 0.0, 0.05) is None  # 3 discordant pairs never reach p < 0.05
    assert min_detectable_difference(6, 0.0, 0.05) is not None  # 6 of 6 one way: p = 0.031
    assert min_detectable_difference(100, 0.05, 0.05) < min_detectable_difference(100, 0.2, 0.05)  # type: ignore[operator]
    assert min_detectable_difference(300, 0.1, 0.05) < min_detectable_difference(100, 0.1, 0.05)  # type: ignore[operator]


def test_power_at_the_stated_detectable_difference_holds_in_simulation() -> None:
    """The rule as a decision.

    Simulated paired data at the stated rise are called worse by the exact McNemar test in about 80%
    of data sets (at least 75% of 2,000).
    """
    rng = np.random.default_rng(5)
    n, discordance, alpha = 120, 0.1, 0.05 / 6
    rise = min_detectable_difference(n, discordance, alpha)
    assert rise is not None
    cells = rng.multinomial(n, [discordance / 2, discordance / 2 + rise, 1 - discordance - rise], size=2_000)
    hits = [c > b and mcnemar_exact_p(int(b), int(c)) < alpha for b, c, _ in cells]
    assert 0.75 <= sum(hits) / len(hits) <= 0.9


def _trials_oracle(tables: list[tuple[int, int, int, int]]) -> float:
    """The exact conditional p from scipy's hypergeometric pmf, convolved by enumeration."""
    from itertools import product

    from scipy.stats import hypergeom

    supports = []
    observed = 0
    for base_n, base_k, new_n, new_k in tables:
        total = base_k + new_k
        values = range(max(0, total - base_n), min(total, new_n) + 1)
        supports.append([(j, hypergeom.pmf(j, base_n + new_n, total, new_n)) for j in values])
        observed += new_k
    lower = upper = 0.0
    for combo in product(*supports):
        s, p = sum(j for j, _ in combo), math.prod(q for _, q in combo)
        lower += p if s <= observed else 0.0
        upper += p if s >= observed else 0.0
    return min(1.0, 2 * min(lower, upper))


def _random_tables(rng: random.Random) -> list[tuple[int, int, int, int]]:
    tables = []
    for _ in range(rng.randint(0, 6)):
        base_n, new_n = rng.randint(1, 4), rng.randint(1, 4)  # a paired case has trials in both
        tables.append((base_n, rng.randint(0, base_n), new_n, rng.randint(0, new_n)))
    return tables


@pytest.mark.parametrize("seed", range(60))
def test_the_trials_exact_p_matches_scipy_hypergeometric_enumeration(seed: int) -> None:
    tables = _random_tables(random.Random(seed))
    assert trials_exact_p(tables) == pytest.approx(_trials_oracle(tables), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("b, c", EDGE_PAIRS + _random_pairs(30, seed=16))
def test_the_trials_exact_p_with_one_trial_each_is_the_exact_mcnemar_test(b: int, c: int) -> None:
    concordant = [(1, 1, 1, 1)] * 7 + [(1, 0, 1, 0)] * 5  # no information: left out
    tables = [(1, 1, 1, 0)] * b + [(1, 0, 1, 1)] * c + concordant
    assert trials_exact_p(tables) == pytest.approx(mcnemar_exact_p(b, c), rel=1e-9, abs=1e-300)


def test_the_trials_exact_p_is_one_without_information_and_refuses_bad_tables() -> None:
    assert trials_exact_p([]) == 1.0
    assert trials_exact_p([(3, 0, 1, 0), (3, 3, 1, 1), (0, 0, 2, 2)]) == 1.0
    with pytest.raises(ValueError, match="0 <= k <= trials"):
        trials_exact_p([(1, 2, 1, 0)])


def test_the_trials_exact_p_holds_its_level_with_unequal_trials_where_a_sign_test_does_not() -> None:
    """No change, the base with 3 trials and the new run with 1.

    The exact test rejects in at most 5% of simulated comparisons; the sign test on per-case shares
    rejects far more often.
    """
    rng = np.random.default_rng(3)
    exact = sign = 0
    sims = 400
    for _ in range(sims):
        p = rng.choice([0.02, 0.1, 0.3], size=120)
        base_k, new_k = rng.binomial(3, p), rng.binomial(1, p)
        tables = [(3, int(b), 1, int(n)) for b, n in zip(base_k, new_k, strict=True)]
        exact += trials_exact_p(tables) < 0.05
        higher_new = int((new_k > base_k / 3).sum())
        higher_base = int((base_k / 3 > new_k).sum())
        sign += mcnemar_exact_p(higher_base, higher_new) < 0.05
    assert exact / sims <= 0.05
    assert sign / sims > 0.3  # 0.47 on this seed
