"""Cohen's kappa and linear-weighted kappa with their intervals (spec 8.1, U-KAPPA-1 to 4).

Values against statsmodels and scikit-learn, intervals against an independent
numpy/scipy/statsmodels implementation, degenerate tables, and a seeded coverage check.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from graft_eval_pipeline.card.models import RISK_CLASSES, RiskClass
from graft_eval_pipeline.evalset.scoring import (
    cohen_kappa,
    kappa_interval,
    weighted_kappa,
    weighted_kappa_interval,
)
from graft_eval_pipeline.evalset.scoring.kappa import SMOOTHING

T: RiskClass = "trivial"
L: RiskClass = "logic"
S: RiskClass = "sensitive"
BY_ORDINAL = {0: T, 1: L, 2: S}

# The oracles are imported inside the tests that use them, and those tests share one xdist worker:
# the default lane's other worker never loads scipy, statsmodels or scikit-learn.
pytestmark = pytest.mark.xdist_group("oracles")


def test_U_KAPPA_1_identical_lists_give_one() -> None:
    labels = [T, L, S, L, T, S]
    assert cohen_kappa(labels, labels, RISK_CLASSES) == 1.0
    assert weighted_kappa(labels, labels) == 1.0
    assert cohen_kappa([True, False, True], [True, False, True], (False, True)) == 1.0


def test_U_KAPPA_2_textbook_example_is_0_4() -> None:
    # 50 items: both yes 20, A yes / B no 5, A no / B yes 10, both no 15.
    a = [True] * 20 + [True] * 5 + [False] * 10 + [False] * 15
    b = [True] * 20 + [False] * 5 + [True] * 10 + [False] * 15
    assert cohen_kappa(a, b, (False, True)) == pytest.approx(0.4, abs=1e-9)


def test_U_KAPPA_3_degenerate_chance_agreement() -> None:
    # p_e = 1 and p_o = 1: both labelers used one and the same class: undefined, not 1.0 (issue 13)
    assert cohen_kappa([L] * 7, [L] * 7, RISK_CLASSES) is None
    assert weighted_kappa([L] * 7, [L] * 7) is None
    # A always one class, B always another: p_o = 0, p_e = 0.
    kappa = cohen_kappa([T] * 6, [S] * 6, RISK_CLASSES)
    assert kappa is not None and kappa <= 0
    weighted = weighted_kappa([T] * 6, [S] * 6)
    assert weighted is not None and weighted <= 0
    assert cohen_kappa([], [], RISK_CLASSES) is None


def test_U_KAPPA_4_weighted_kappa_weighs_trivial_sensitive_twice_trivial_logic() -> None:
    a = [T, L, S, T]
    # One trivial/logic disagreement. Counts A: t2 l1 s1, B: t1 l2 s1.
    # observed Σw·o = 0.5/4 = 1/8; expected Σw·e = (2·2·½ + 2·1·1 + 1·1·½ + 1·1·½ + 1·1·1 + 1·2·½)/16 = 7/16
    # κ_w = 1 − (1/8)/(7/16) = 5/7
    assert weighted_kappa(a, [T, L, S, L]) == pytest.approx(5 / 7, abs=1e-12)
    # One trivial/sensitive disagreement. B: t1 l1 s2.
    # observed = 1/4; expected = (2·1·½ + 2·2·1 + 1·1·½ + 1·2·½ + 1·1·1 + 1·1·½)/16 = 8/16
    # κ_w = 1 − (1/4)/(1/2) = 1/2
    assert weighted_kappa(a, [T, L, S, S]) == pytest.approx(0.5, abs=1e-12)
    # Plain kappa cannot tell the two apart (same p_o and p_e).
    assert cohen_kappa(a, [T, L, S, L], RISK_CLASSES) == pytest.approx(
        cohen_kappa(a, [T, L, S, S], RISK_CLASSES)
    )


def test_cohen_kappa_matches_scikit_learn_published_binary_value() -> None:
    a = [0] * 40 + [1] * 60
    b = [0] * 20 + [1] * 20 + [0] * 10 + [1] * 50
    assert cohen_kappa(a, b, (0, 1)) == pytest.approx(0.34782608695652173, abs=1e-12)


def test_plain_and_linear_kappa_match_scikit_learn_published_three_class_values() -> None:
    a = [BY_ORDINAL[x] for x in [0] * 46 + [1] * 44 + [2] * 10]
    b = [BY_ORDINAL[x] for x in [0] * 50 + [1] * 40 + [2] * 10]
    assert cohen_kappa(a, b, RISK_CLASSES) == pytest.approx(0.9315068493150684, abs=1e-12)
    assert weighted_kappa(a, b) == pytest.approx(0.9411764705882353, abs=1e-12)


def test_kappa_rejects_lists_of_different_length_and_unknown_values() -> None:
    with pytest.raises(ValueError, match="length"):
        cohen_kappa([T], [T, L], RISK_CLASSES)
    with pytest.raises(ValueError, match="categories"):
        cohen_kappa(["huge"], [T], RISK_CLASSES)


def _table(a: Sequence[str], b: Sequence[str]) -> Any:
    index: dict[str, int] = {c: i for i, c in enumerate(RISK_CLASSES)}
    table = [[0] * 3 for _ in range(3)]
    for x, y in zip(a, b, strict=True):
        table[index[x]][index[y]] += 1
    return np.array(table, dtype=float)


def _random_pairs(rng: random.Random, n: int) -> tuple[list[RiskClass], list[RiskClass]]:
    """Random label pairs of every shape.

    Agreement from none to total, margins from one class to all three, so degenerate tables (one
    class only, p_o = p_e) come up too.
    """
    agree = rng.random()
    classes = rng.sample(RISK_CLASSES, rng.randint(1, 3))
    a = [rng.choice(classes) for _ in range(n)]
    b = [x if rng.random() < agree else rng.choice(classes) for x in a]
    return a, b


def test_kappa_and_weighted_kappa_match_statsmodels_and_scikit_learn_on_random_pairs() -> None:
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import cohens_kappa

    rng = random.Random(13)
    undefined = 0
    for _ in range(400):
        a, b = _random_pairs(rng, rng.choice([1, 2, 3, 5, rng.randint(5, 200)]))
        kappa, weighted = cohen_kappa(a, b, RISK_CLASSES), weighted_kappa(a, b)
        table = _table(a, b)
        if (table.sum(1) @ table.sum(0)) / table.sum() ** 2 == 1:  # both used one and the same class
            assert kappa is None and weighted is None
            assert kappa_interval(a, b, RISK_CLASSES) is None and weighted_kappa_interval(a, b) is None
            undefined += 1
            continue
        assert kappa == pytest.approx(cohens_kappa(table).kappa, abs=1e-12)
        expected = cohen_kappa_score(a, b, labels=RISK_CLASSES, weights="linear")
        assert weighted == pytest.approx(expected, abs=1e-12)
    assert undefined > 10
    assert cohen_kappa([], [], RISK_CLASSES) is None and kappa_interval([], [], RISK_CLASSES) is None
    assert weighted_kappa([], []) is None and weighted_kappa_interval([], []) is None


def _numeric_gradient(shares: Any, statistic: Any) -> Any:
    """The derivative d statistic / d share of each cell, by central differences.

    Independent of kappa.py's analytic influence.
    """
    gradient = np.zeros_like(shares)
    for index in np.ndindex(shares.shape):
        step = np.zeros_like(shares)
        step[index] = 1e-6
        gradient[index] = (statistic(shares + step) - statistic(shares - step)) / 2e-6
    return gradient


def _oracle_interval(a: Sequence[RiskClass], b: Sequence[RiskClass], weights: Any, groups: Any = None) -> Any:
    """The documented interval, built with numpy, scipy and statsmodels.

    The multinomial delta-method variance of kappa on the smoothed table (numeric gradient),
    Jeffreys' interval (scipy's beta) at A(1 - A) / var on the A scale, for clusters the design
    effect of statsmodels' cluster-robust against its HC1 variance of the per-item influence,
    Korn-Graubard's t factor.
    """
    from scipy.stats import beta
    from scipy.stats import t as student_t
    from statsmodels.regression.linear_model import OLS

    credit = 1 - weights
    table = _table(a, b)
    n = table.sum()

    def kappa_of(t: Any) -> float:
        t = t / t.sum()
        agree, chance = (t * credit).sum(), (np.outer(t.sum(1), t.sum(0)) * credit).sum()
        return float((agree - chance) / (1 - chance))

    def chance_of(t: Any) -> float:
        t = t / t.sum()
        return float((np.outer(t.sum(1), t.sum(0)) * credit).sum())

    agree, chance = float((table / n * credit).sum()), chance_of(table)
    if agree in (0.0, 1.0) or n < 2:
        size = n
    else:
        smooth = (table + SMOOTHING / 9) / (n + SMOOTHING)
        g = _numeric_gradient(smooth, kappa_of).ravel()
        p = smooth.ravel()
        variance = (1 - chance_of(smooth)) ** 2 * (g @ (np.diag(p) - np.outer(p, p)) @ g) / (n - 1)
        size = agree * (1 - agree) / variance
    if groups is not None:
        clusters = len(set(groups))
        if clusters < 2 or agree in (0.0, 1.0):
            size = min(size, clusters)
        else:
            index = {c: i for i, c in enumerate(RISK_CLASSES)}
            g = _numeric_gradient(table / n, kappa_of)
            influence = np.array([g[index[x], index[y]] for x, y in zip(a, b, strict=True)])
            influence -= (g * table / n).sum()
            ones = np.ones((len(a), 1))
            robust = OLS(influence, ones).fit(cov_type="cluster", cov_kwds={"groups": groups}).bse[0] ** 2
            independent = OLS(influence, ones).fit(cov_type="HC1").bse[0] ** 2
            kg = (student_t.ppf(0.975, n - 1) / student_t.ppf(0.975, clusters - 1)) ** 2
            size = max(min(size, max(clusters, size * independent / robust)) * kg, 1.0)
    low = 0.0 if agree == 0 else beta.ppf(0.025, agree * size + 0.5, (1 - agree) * size + 0.5)
    high = 1.0 if agree == 1 else beta.ppf(0.975, agree * size + 0.5, (1 - agree) * size + 0.5)
    return max(-1.0, (low - chance) / (1 - chance)), min(1.0, (high - chance) / (1 - chance))


PLAIN = 1 - np.eye(3)
LINEAR = np.abs(np.subtract.outer(np.arange(3), np.arange(3))) / 2


def test_kappa_intervals_match_an_independent_numpy_scipy_implementation() -> None:
    rng = random.Random(17)
    compared = 0
    for _ in range(250):
        a, b = _random_pairs(rng, rng.choice([1, 2, 5, rng.randint(5, 120)]))
        bounds, weighted = kappa_interval(a, b, RISK_CLASSES), weighted_kappa_interval(a, b)
        if cohen_kappa(a, b, RISK_CLASSES) is None:
            continue
        assert bounds == pytest.approx(_oracle_interval(a, b, PLAIN), abs=1e-6), (a, b)
        assert weighted == pytest.approx(_oracle_interval(a, b, LINEAR), abs=1e-6), (a, b)
        compared += 1
    assert compared > 90


def test_clustered_kappa_interval_matches_statsmodels_cluster_robust_design_effect() -> None:
    rng = random.Random(19)
    compared = 0
    for _ in range(100):
        cases = rng.randint(2, 30)
        groups = [case for case in range(cases) for _ in range(rng.randint(1, 6))]
        a, b = _random_pairs(rng, len(groups))
        bounds = kappa_interval(a, b, RISK_CLASSES, clusters=groups)
        if cohen_kappa(a, b, RISK_CLASSES) is None:
            assert bounds is None
            continue
        assert bounds == pytest.approx(_oracle_interval(a, b, PLAIN, np.array(groups)), abs=1e-6)
        compared += 1
    assert compared > 50
    with pytest.raises(ValueError, match="cluster list"):
        kappa_interval([T, L], [T, L], RISK_CLASSES, clusters=[1])


def test_clustering_files_of_alike_cases_widens_the_interval() -> None:
    # Ten cases, the files of each case labelled alike: ten cases' worth of information, not 40.
    a = [x for i in range(10) for x in [[T, L][i % 2]] * 4]
    b = [x for i in range(10) for x in [[T, L][i % 2 if i < 8 else 1 - i % 2]] * 4]
    groups = [i for i in range(10) for _ in range(4)]
    flat = kappa_interval(a, b, RISK_CLASSES)
    clustered = kappa_interval(a, b, RISK_CLASSES, clusters=groups)
    assert flat is not None and clustered is not None
    assert clustered[1] - clustered[0] > 1.5 * (flat[1] - flat[0])


def test_degenerate_tables_never_collapse_to_a_point() -> None:
    # Perfect agreement: kappa 1, a lower bound below 1 (5 cases cannot show perfect agreement).
    perfect = kappa_interval([T, L, S, T, L], [T, L, S, T, L], RISK_CLASSES)
    assert perfect is not None and perfect[0] < 0.9 and perfect[1] == 1.0
    weighted = weighted_kappa_interval([T, L, S, T, L], [T, L, S, T, L])
    assert weighted is not None and weighted[0] < 0.9 and weighted[1] == 1.0
    # One labeler one class, the other two: p_o = p_e, kappa 0 with an interval around it.
    zero = kappa_interval([T, L, T, L, T, L], [T] * 6, RISK_CLASSES)
    assert cohen_kappa([T, L, T, L, T, L], [T] * 6, RISK_CLASSES) == 0
    assert zero is not None and zero[0] <= 0 < zero[1]
    # Total disagreement, and one case.
    opposite = kappa_interval([T, S] * 3, [S, T] * 3, RISK_CLASSES)
    assert opposite is not None and opposite[0] == -1.0 and opposite[1] > -1.0
    one = kappa_interval([T], [L], RISK_CLASSES)
    assert one is not None and one[0] < one[1]
    # One class only: undefined, no interval.
    assert kappa_interval([L] * 9, [L] * 9, RISK_CLASSES) is None
    assert weighted_kappa_interval([L] * 9, [L] * 9) is None


def test_textbook_kappa_0_4_interval() -> None:
    # 50 items, kappa 0.4: the interval holds it, a little wider at the top than the large-sample
    # [0.151, 0.649] would be at the bottom (Jeffreys on agreement).
    a = [T] * 20 + [T] * 5 + [L] * 10 + [L] * 15
    b = [T] * 20 + [L] * 5 + [T] * 10 + [L] * 15
    lo, hi = kappa_interval(a, b, RISK_CLASSES) or (None, None)
    assert (lo, hi) == pytest.approx((0.1294, 0.6259), abs=1e-4)


@pytest.mark.parametrize(("margins", "kappa"), [((0.5, 0.3, 0.2), 0.6), ((0.7, 0.2, 0.1), 0.8)])
def test_kappa_interval_coverage_at_20_cases_is_near_nominal(
    margins: tuple[float, ...], kappa: float
) -> None:
    """Seeded: 400 tables of 20 cases (the labeling guide's double-labelled count).

    The full grid is bench/bench_intervals.py.
    """
    rng = np.random.default_rng(5)
    m = np.asarray(margins)
    p = (1 - kappa) * np.outer(m, m) + kappa * np.diag(m)
    covered = defined = 0
    for counts in rng.multinomial(20, p.ravel(), size=400):
        a = [RISK_CLASSES[i // 3] for i, c in enumerate(counts) for _ in range(c)]
        b = [RISK_CLASSES[i % 3] for i, c in enumerate(counts) for _ in range(c)]
        bounds = kappa_interval(a, b, RISK_CLASSES)
        if bounds is not None:
            defined += 1
            covered += bounds[0] <= kappa <= bounds[1]
    assert 0.92 <= covered / defined <= 0.985
