"""The case-clustered interval of a rate over trials, against a direct sandwich formula."""

from __future__ import annotations

import numpy as np
import pytest

from graft_eval_pipeline.evalset.scoring.intervals import wilson
from graft_eval_pipeline.evalset.scoring.trials import cluster_interval


def sandwich_oracle(outcomes: list[list[int]]) -> tuple[float, float]:
    """OLS of every (case, trial) outcome on a constant, cluster-robust (CR1, G/(G-1)) variance."""
    y = np.concatenate([np.asarray(o, float) for o in outcomes])
    groups = np.repeat(np.arange(len(outcomes)), [len(o) for o in outcomes])
    p = y.mean()
    scores = np.bincount(groups, weights=y - p)
    g = len(outcomes)
    se = np.sqrt(g / (g - 1) * (scores**2).sum()) / len(y)
    return max(p - 1.959963984540054 * se, 0.0), min(p + 1.959963984540054 * se, 1.0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cluster_interval_matches_the_sandwich_formula(seed: int) -> None:
    rng = np.random.default_rng(seed)
    outcomes = [list(rng.integers(0, 2, size=int(rng.integers(1, 5)))) for _ in range(25)]
    got = cluster_interval([sum(o) for o in outcomes], [len(o) for o in outcomes])
    assert got == pytest.approx(sandwich_oracle(outcomes), abs=1e-9)


def test_perfectly_correlated_trials_give_no_more_evidence_than_one_trial() -> None:
    # 10 cases x 5 identical trials: the clustered width matches 10 observations, not 50
    counts, sizes = [5] * 3 + [0] * 7, [5] * 10
    clustered = cluster_interval(counts, sizes)
    assert clustered == pytest.approx(cluster_interval([1] * 3 + [0] * 7, [1] * 10))
    naive = wilson(15, 50)
    assert clustered is not None and naive is not None
    assert clustered[1] - clustered[0] > naive[1] - naive[0]


def test_no_variance_falls_back_to_wilson_over_cases_and_one_case_gives_none() -> None:
    assert cluster_interval([0, 0, 0], [3, 3, 3]) == wilson(0, 3)
    assert cluster_interval([2], [3]) is None
