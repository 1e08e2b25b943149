"""Cohen's kappa, its large-sample interval and linear-weighted kappa (spec 8.1, U-KAPPA-1 to 4),
checked against statsmodels and scikit-learn's published values."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from graft_eval_pipeline.card.models import RISK_CLASSES, RiskClass
from graft_eval_pipeline.evalset.scoring import cohen_kappa, kappa_interval, weighted_kappa

T: RiskClass = "trivial"
L: RiskClass = "logic"
S: RiskClass = "sensitive"
BY_ORDINAL = {0: T, 1: L, 2: S}


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


def test_kappa_interval_matches_statsmodels_on_random_label_pairs() -> None:
    rng = random.Random(13)
    compared = 0
    for _ in range(300):
        n = rng.randint(5, 200)
        agree = rng.random()
        a = [rng.choice(RISK_CLASSES) for _ in range(n)]
        b = [x if rng.random() < agree else rng.choice(RISK_CLASSES) for x in a]
        bounds = kappa_interval(a, b, RISK_CLASSES)
        if cohen_kappa(a, b, RISK_CLASSES) is None:
            assert bounds is None
            continue
        oracle = cohens_kappa(_table(a, b))
        assert cohen_kappa(a, b, RISK_CLASSES) == pytest.approx(oracle.kappa, abs=1e-12)
        expected = (max(-1.0, oracle.kappa_low), min(1.0, oracle.kappa_upp))
        assert bounds == pytest.approx(expected, abs=1e-9), (n, agree)
        compared += 1
    assert compared > 250


def test_textbook_kappa_0_4_has_its_published_asymptotic_interval() -> None:
    a = [T] * 20 + [T] * 5 + [L] * 10 + [L] * 15
    b = [T] * 20 + [L] * 5 + [T] * 10 + [L] * 15
    lo, hi = kappa_interval(a, b, RISK_CLASSES) or (None, None)
    assert (lo, hi) == pytest.approx((0.1511, 0.6489), abs=1e-4)
