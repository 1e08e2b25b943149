"""Kappa with its 95% interval, undefined kappa, and the agreement check with no pairs (issue 13 §4)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from graft_eval_pipeline.card.models import RISK_CLASSES
from graft_eval_pipeline.evalset.evaluate import report_agreement
from graft_eval_pipeline.evalset.labeling.agreement import (
    agreement,
    agreement_check,
    cohen_kappa,
    kappa_interval,
    render_agreement,
)
from graft_eval_pipeline_tests.builders import make_case, make_label

T, L, S = "trivial", "logic", "sensitive"


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


def test_one_class_each_is_undefined_not_one() -> None:
    cases = [
        make_case(
            f"syn-9{i:02d}-x",
            labels=[make_label(labeler="alice", risk=L), make_label(labeler="bob", risk=L)],
        )
        for i in range(6)
    ]
    report = agreement(cases)
    (pair,) = report.pairs
    assert pair.risk.raw_agreement == 1.0
    assert pair.risk.kappa is None and pair.risk.undefined and pair.risk.ci95 is None
    assert pair.risk.weighted_kappa is None
    assert "kappa undefined (both used one class only)" in render_agreement(report)
    passed, failing = agreement_check(report)
    assert not passed and failing == ["alice / bob"]
    (reported,) = report_agreement(report).pairs
    assert (reported.status, reported.kappa, reported.n) == ("undefined", None, 6)


def test_agreement_check_fails_with_no_labeler_pair() -> None:
    single = agreement([make_case(f"syn-9{i:02d}-x") for i in range(6)])
    assert single.pairs == []
    assert agreement_check(single) == (False, [])
    assert "agreement is not measured" in render_agreement(single)
    assert report_agreement(single).pairs == []


def test_agreement_check_passes_only_at_or_above_target_and_shows_the_interval() -> None:
    risks_a = [T, L, S, T, L, S, T, L]
    good = [
        make_case(
            f"syn-9{i:02d}-x",
            labels=[make_label(labeler="alice", risk=r), make_label(labeler="bob", risk=r)],
        )
        for i, r in enumerate(risks_a)
    ]
    report = agreement(good)
    assert agreement_check(report) == (True, [])
    assert report.pairs[0].risk.kappa == 1.0 and report.pairs[0].risk.ci95 == (1.0, 1.0)
    assert "kappa 1.000 [1.000–1.000]" in render_agreement(report)
    noisy = [
        make_case(
            f"syn-9{i:02d}-x",
            labels=[make_label(labeler="alice", risk=r), make_label(labeler="bob", risk=T)],
        )
        for i, r in enumerate(risks_a)
    ]
    passed, failing = agreement_check(agreement(noisy))
    assert not passed and failing == ["alice / bob"]
