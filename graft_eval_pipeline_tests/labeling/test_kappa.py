"""Cohen's kappa, weighted kappa and the agreement report (spec 8.1, U-KAPPA-*)."""

from __future__ import annotations

import pytest

from graft_eval_pipeline.card.models import RISK_CLASSES, RiskClass
from graft_eval_pipeline.evalset.labeling.agreement import (
    agreement,
    cohen_kappa,
    render_agreement,
    weighted_kappa,
)
from graft_eval_pipeline.evalset.sets.case_schema import EvalCase, LabelSet
from graft_eval_pipeline_tests.builders import make_case, make_file, make_inputs, make_label

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


def _two_file_case(case_id: str, *labels: LabelSet) -> EvalCase:
    files = [make_file("src/a.ts"), make_file("src/b.ts")]
    return make_case(case_id, inputs=make_inputs(files), labels=list(labels))


def test_U_KAPPA_5_agreement_report() -> None:
    cases = []
    # alice and bob share 6 cases; carol shares 2 with alice (pair omitted).
    risks_bob = [T, L, S, T, L, L]
    risks_alice = [T, L, S, T, L, S]  # case 5 disagrees on risk
    for i in range(6):
        oos_bob = ["src/b.ts"] if i == 2 else []  # case 2 disagrees on one file
        flag_bob = i == 3  # case 3 disagrees on should-flag
        labels = [
            make_label("alice", risk=risks_alice[i]),
            make_label("bob", risk=risks_bob[i], out_of_scope=oos_bob, should_flag=flag_bob),
        ]
        if i < 2:
            labels.append(make_label("carol"))
        cases.append(_two_file_case(f"syn-90{i}-case", *labels))
    # A case only alice labeled does not count for any pair.
    cases.append(_two_file_case("syn-909-solo", make_label("alice", risk=S)))
    # The adjudication is ignored: agreement uses each labeler's own set.
    cases[5] = cases[5].model_copy(update={"adjudicated": make_label("dana", risk=S)})

    report = agreement(cases)

    assert [p.labelers for p in report.pairs] == [("alice", "bob")]
    pair = report.pairs[0]
    assert pair.shared_cases == 6
    assert pair.disagreeing_case_ids == ["syn-902-case", "syn-903-case", "syn-905-case"]
    assert pair.risk.n == 6
    assert pair.risk.raw_agreement == pytest.approx(5 / 6)
    assert pair.risk.kappa == pytest.approx(cohen_kappa(risks_alice, risks_bob, RISK_CLASSES))
    assert pair.risk.weighted_kappa == pytest.approx(weighted_kappa(risks_alice, risks_bob))
    assert pair.should_flag.n == 6
    assert pair.should_flag.raw_agreement == pytest.approx(5 / 6)
    # Out-of-scope: 2 files × 6 cases = 12 per-file decisions, one differs.
    assert pair.out_of_scope.n == 12
    assert pair.out_of_scope.raw_agreement == pytest.approx(11 / 12)
    alice_oos = [False] * 12
    bob_oos = [False] * 12
    bob_oos[5] = True  # case 2, second file
    assert pair.out_of_scope.kappa == pytest.approx(cohen_kappa(alice_oos, bob_oos, (False, True)))
    assert [(s.labelers, s.shared_cases) for s in report.skipped_pairs] == [
        (("alice", "carol"), 2),
        (("bob", "carol"), 2),
    ]

    data = report.to_json_dict()
    assert data["pairs"][0]["disagreeingCaseIds"] == pair.disagreeing_case_ids
    assert data["pairs"][0]["risk"]["weightedKappa"] == pytest.approx(pair.risk.weighted_kappa)

    text = render_agreement(report)
    assert "alice / bob: 6 shared cases" in text
    assert "syn-902-case, syn-903-case, syn-905-case" in text
    assert "alice / carol: skipped, only 2 shared cases" in text
    assert "src/" not in text and "Adjusts a helper" not in text  # ids and numbers only


def test_agreement_report_warns_when_risk_kappa_is_below_target() -> None:
    risks_a = [T, L, T, L, T]
    risks_b = [L, T, L, T, T]
    cases = [
        make_case(f"syn-91{i}-case", labels=[make_label("alice", risk=ra), make_label("bob", risk=rb)])
        for i, (ra, rb) in enumerate(zip(risks_a, risks_b, strict=True))
    ]
    report = agreement(cases)
    assert report.pairs[0].risk.kappa is not None and report.pairs[0].risk.kappa < 0.6
    assert "below the target 0.6" in render_agreement(report)
