"""Binomial intervals of every rate, checked against statsmodels as an oracle (issue 13 §1)."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from graft_eval_pipeline.evalset.scoring.intervals import (
    beta_cdf,
    beta_quantile,
    clopper_pearson,
    error_free_cases_needed,
    lower_bound,
    upper_bound,
    wilson,
)
from graft_eval_pipeline.evalset.scoring.rates import rate_stat, safety_rate

# The oracles are imported inside the tests that use them, and those tests share one xdist worker:
# the default lane's other worker never loads scipy or statsmodels.
pytestmark = pytest.mark.xdist_group("oracles")


def proportion_confint(count: float, nobs: float, alpha: float, method: str) -> Any:
    """The oracle: statsmodels' interval (imported on first use)."""
    from statsmodels.stats.proportion import proportion_confint as oracle

    return oracle(count, nobs, alpha=alpha, method=method)


def random_counts(seed: int, draws: int = 300) -> list[tuple[int, int]]:
    """Random (k, n) with the edges included: k = 0 and k = n for every n drawn, and n = 1."""
    rng = random.Random(seed)
    pairs = [(0, 1), (1, 1), (0, 30), (30, 30)]
    for _ in range(draws):
        n = rng.choice([rng.randint(1, 20), rng.randint(21, 400), rng.randint(401, 5000)])
        pairs += [(rng.randint(0, n), n), (0, n), (n, n)]
    return pairs


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_clopper_pearson_matches_statsmodels_beta(seed: int) -> None:
    for k, n in random_counts(seed):
        lo, hi = proportion_confint(k, n, alpha=0.05, method="beta")
        assert clopper_pearson(k, n) == pytest.approx((lo, hi), abs=1e-10), (k, n)


def random_shapes(seed: int, draws: int = 400) -> list[tuple[float, float, float]]:
    """Random (a, b, q) of every shape.

    Random (a, b, q): shapes below 1 (non-integer counts), small, large and huge integers, quantiles
    at the interval ends, uniform ones and far tails.
    """
    rng = random.Random(seed)

    def shape() -> float:
        return rng.choice(
            [rng.uniform(0.05, 1), rng.uniform(1, 30), rng.uniform(30, 5000), float(rng.randint(1, 20_000))]
        )

    def quantile() -> float:
        return rng.choice([0.025, 0.05, 0.95, 0.975, rng.random(), 1e-6, 1 - 1e-6])

    return [(shape(), shape(), quantile()) for _ in range(draws)] + [(1.0, 1.0, 0.5), (1.0, 30.0, 0.95)]


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_beta_quantile_and_cdf_match_scipy(seed: int) -> None:
    from scipy.special import betainc, betaincinv

    for a, b, q in random_shapes(seed):
        x = beta_quantile(q, a, b)
        assert x == pytest.approx(float(betaincinv(a, b, q)), abs=1e-11), (a, b, q)
        assert beta_cdf(x, a, b) == pytest.approx(float(betainc(a, b, x)), abs=1e-9), (a, b, q)


def test_beta_quantile_of_probability_0_and_1_is_the_support_edge() -> None:
    assert beta_quantile(0.0, 2.0, 3.0) == 0.0 and beta_quantile(1.0, 2.0, 3.0) == 1.0
    assert beta_cdf(0.0, 2.0, 3.0) == 0.0 and beta_cdf(1.0, 2.0, 3.0) == 1.0


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_wilson_matches_statsmodels_wilson(seed: int) -> None:
    for k, n in random_counts(seed):
        lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert wilson(k, n) == pytest.approx((lo, hi), abs=1e-10), (k, n)


@pytest.mark.parametrize("seed", [7, 8])
def test_one_sided_upper_bound_is_the_upper_end_of_the_90_percent_exact_interval(seed: int) -> None:
    for k, n in random_counts(seed):
        expected = 1.0 if k == n else proportion_confint(k, n, alpha=0.10, method="beta")[1]
        assert upper_bound(k, n) == pytest.approx(expected, abs=1e-10), (k, n)


def test_non_integer_counts_of_an_effective_sample_size_match_statsmodels() -> None:
    for k, n in [(0.0, 37.4), (2.5, 41.2), (10.25, 10.25), (3.3, 7.9)]:
        lo, hi = proportion_confint(k, n, alpha=0.05, method="beta")
        expected_lo = 0.0 if k == 0 else lo
        expected_hi = 1.0 if k == n else hi
        assert clopper_pearson(k, n) == pytest.approx((expected_lo, expected_hi), abs=1e-10)


def test_empty_denominator_gives_no_interval_and_a_null_rate() -> None:
    assert clopper_pearson(0, 0) is None and wilson(0, 0) is None and upper_bound(0, 0) is None
    empty = safety_rate(0, 0)
    assert (empty.k, empty.n, empty.value, empty.ci95, empty.upper95) == (0, 0, None, None, None)
    assert rate_stat(0, 0).to_json_dict() == {"k": 0, "n": 0, "value": None, "ci95": None, "method": "wilson"}
    with pytest.raises(ValueError, match="0 <= k <= n"):
        clopper_pearson(4, 3)


def test_zero_of_thirty_reads_below_0_095_one_sided_and_0_116_two_sided() -> None:
    stat = safety_rate(0, 30)
    assert (stat.k, stat.n, stat.value, stat.method) == (0, 30, 0.0, "clopper-pearson")
    # exact bounds 0.11570 and 0.09503, stored rounded outwards, printed to 3 decimals
    assert stat.ci95 == (0.0, 0.1158) and stat.upper95 == 0.0951
    assert (f"{stat.ci95[1]:.3f}", f"{stat.upper95:.3f}") == ("0.116", "0.095")
    # 0 of 100 gold cases only bounds the rate at 3.6%, above a 2% gate
    assert upper_bound(0, 100) == pytest.approx(0.0295, abs=1e-4)
    assert clopper_pearson(0, 100) == pytest.approx((0.0, 0.0362), abs=1e-4)


def test_error_free_cases_needed_is_149_for_two_percent_and_is_the_smallest_such_n() -> None:
    assert error_free_cases_needed(0.02) == 149
    rng = random.Random(9)
    for limit in [0.02, 0.05, 0.1, 0.25, *(rng.uniform(0.001, 0.9) for _ in range(50))]:
        n = error_free_cases_needed(limit)
        assert n is not None
        upper = upper_bound(0, n)
        assert upper is not None and upper <= limit
        if n > 1:
            before = upper_bound(0, n - 1)
            assert before is not None and before > limit
    assert error_free_cases_needed(0) is None and error_free_cases_needed(1) is None


def test_rate_stat_rounds_value_to_four_decimals_and_bounds_outwards() -> None:
    stat = rate_stat(1, 3)
    assert stat.value == 0.3333 and stat.method == "wilson"
    lo, hi = proportion_confint(1, 3, alpha=0.05, method="wilson")
    assert stat.ci95 == (math.floor(lo * 1e4) / 1e4, math.ceil(hi * 1e4) / 1e4)
    for k, n in random_counts(10, draws=100):
        for rounded, exact in ((rate_stat(k, n), wilson(k, n)), (safety_rate(k, n), clopper_pearson(k, n))):
            assert rounded.ci95 is not None and exact is not None
            assert rounded.ci95[0] <= exact[0] + 1e-12 and rounded.ci95[1] >= exact[1] - 1e-12
        upper, exact_upper = safety_rate(k, n).upper95, upper_bound(k, n)
        assert upper is not None and exact_upper is not None and upper >= exact_upper - 1e-12


@pytest.mark.parametrize("seed", [9, 10])
def test_one_sided_lower_bound_matches_scipy_and_the_90_percent_exact_interval(seed: int) -> None:
    from scipy.stats import beta

    for k, n in random_counts(seed):
        expected = 0.0 if k == 0 else proportion_confint(k, n, alpha=0.10, method="beta")[0]
        assert lower_bound(k, n) == pytest.approx(expected, abs=1e-10), (k, n)
        if k > 0:
            assert lower_bound(k, n) == pytest.approx(float(beta.ppf(0.05, k, n - k + 1)), abs=1e-10)
    assert lower_bound(0, 0) is None and lower_bound(30, 30) == pytest.approx(0.05 ** (1 / 30))
