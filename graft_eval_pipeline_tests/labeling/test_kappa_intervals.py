"""Kappa with its 95% interval, undefined kappa, and the agreement check with no pairs (issue 13 §4)."""

from __future__ import annotations

from graft_eval_pipeline.evalset.evaluate import report_agreement
from graft_eval_pipeline.evalset.labeling.agreement import (
    agreement,
    agreement_check,
    render_agreement,
)
from graft_eval_pipeline_tests.builders import make_case, make_label

T, L, S = "trivial", "logic", "sensitive"


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
    assert "weighted kappa undefined" in render_agreement(report)
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
    # Perfect agreement on 8 cases: kappa 1, but 8 cases cannot show that agreement is perfect.
    risk = report.pairs[0].risk
    assert risk.kappa == 1.0 and risk.ci95 is not None and risk.ci95[0] < 0.7 and risk.ci95[1] == 1.0
    assert risk.weighted_kappa == 1.0 and risk.weighted_kappa_ci95 is not None
    assert risk.weighted_kappa_ci95[0] < 1.0 and risk.weighted_kappa_ci95[1] == 1.0
    text = render_agreement(report)
    assert f"kappa 1.000 [{risk.ci95[0]:.3f}–1.000]" in text
    assert f"weighted kappa 1.000 [{risk.weighted_kappa_ci95[0]:.3f}–1.000]" in text
    assert "interval clustered by case" in text
    noisy = [
        make_case(
            f"syn-9{i:02d}-x",
            labels=[make_label(labeler="alice", risk=r), make_label(labeler="bob", risk=T)],
        )
        for i, r in enumerate(risks_a)
    ]
    passed, failing = agreement_check(agreement(noisy))
    assert not passed and failing == ["alice / bob"]
