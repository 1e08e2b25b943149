"""The agreement report of labeler pairs (spec 8.1, U-KAPPA-5).

The statistics themselves are tested in scoring/test_kappa.py.
"""

from __future__ import annotations

import pytest

from graft_eval_pipeline.card.models import RISK_CLASSES, RiskClass
from graft_eval_pipeline.evalset.labeling.agreement import agreement, render_agreement
from graft_eval_pipeline.evalset.scoring import cohen_kappa, weighted_kappa
from graft_eval_pipeline.evalset.sets.case_schema import EvalCase, LabelSet
from graft_eval_pipeline_tests.builders import make_case, make_file, make_inputs, make_label

T: RiskClass = "trivial"
L: RiskClass = "logic"
S: RiskClass = "sensitive"
BY_ORDINAL = {0: T, 1: L, 2: S}


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
