"""Metrics of spec section 8 on hand-built rows (U-MET-1 … U-MET-10)."""

from __future__ import annotations

from graft_eval_pipeline.evalset.scoring.metrics import compute_metrics, flag_outcome, oos_counts
from graft_eval_pipeline.evalset.scoring.report_schema import CaseRow, OosCounts
from graft_eval_pipeline.evalset.sets.case_schema import case_set_hash
from graft_eval_pipeline_tests.builders import make_case, make_label
from graft_eval_pipeline_tests.row_builders import make_row


def six_rows() -> list[CaseRow]:
    """Six rows (gold / floor / model / final) chosen so every metric differs between the three predictors."""
    return [
        make_row("c1", gold="trivial", floor="trivial", model="trivial", final="trivial"),
        make_row("c2", gold="logic", floor="trivial", model="logic", final="logic"),
        make_row("c3", gold="sensitive", floor="trivial", model="trivial", final="trivial"),
        make_row("c4", gold="sensitive", floor="sensitive", model="logic", final="sensitive"),
        make_row("c5", gold="trivial", floor="logic", model="sensitive", final="sensitive"),
        make_row(
            "c6",
            gold="logic",
            floor="logic",
            model=None,
            final="logic",
            status="unavailable",
            failure_reason="llm_unavailable",
            verifier_status=None,
            oos=None,
            flag="na",
        ),
    ]


def test_U_MET_1_under_severe_over_and_accuracy_for_floor_model_and_final() -> None:
    m = compute_metrics(six_rows())
    # floor over 6 rows: under c2, c3; severe c3; over c5; exact c1, c4, c6
    assert (m.under_classification_floor.value, m.severe_under_classification_floor.value) == (0.3333, 0.1667)
    assert (m.under_classification_floor.k, m.under_classification_floor.n) == (2, 6)
    assert (m.over_classification_floor.value, m.exact_accuracy_floor.value) == (0.1667, 0.5)
    # model over 5 rows (c6 has none): under c3, c4; severe c3; over c5; exact c1, c2
    assert (m.under_classification_model.value, m.severe_under_classification_model.value) == (0.4, 0.2)
    assert (m.over_classification_model.value, m.exact_accuracy_model.value) == (0.2, 0.4)
    # final over 6 rows: under c3; severe c3; over c5; exact c1, c2, c4, c6
    assert (m.under_classification_final.value, m.severe_under_classification_final.value) == (0.1667, 0.1667)
    assert (m.over_classification_final.value, m.exact_accuracy_final.value) == (0.1667, 0.6667)
    # trivially-gold c1, c5: only c1 stays trivial
    assert (m.trivial_recall.k, m.trivial_recall.n, m.trivial_recall.value) == (1, 2, 0.5)


def test_U_MET_2_missing_model_risk_leaves_s_m_but_stays_in_s_r() -> None:
    m = compute_metrics(six_rows())
    assert m.confusion.model.n == 5
    assert m.confusion.final.n == 6
    assert m.confusion.floor.n == 6
    assert m.scored == 6


def test_U_MET_3_confusion_matrix_with_precision_recall_and_null_on_zero() -> None:
    final = compute_metrics(six_rows()).confusion.final
    assert final.matrix == [[1, 0, 1], [0, 2, 0], [1, 0, 1]]
    assert {c: s["value"] for c, s in final.precision.model_dump().items()} == {
        "trivial": 0.5,
        "logic": 1.0,
        "sensitive": 0.5,
    }
    assert {c: (s["k"], s["n"]) for c, s in final.recall.model_dump().items()} == {
        "trivial": (1, 2),
        "logic": (2, 2),
        "sensitive": (1, 2),
    }

    no_sensitive = compute_metrics(
        [make_row("a", gold="logic", floor="logic"), make_row("b", gold="trivial", floor="trivial")]
    ).confusion.floor
    assert no_sensitive.matrix == [[1, 0, 0], [0, 1, 0], [0, 0, 0]]
    assert no_sensitive.precision.sensitive.value is None and no_sensitive.precision.sensitive.ci95 is None
    assert no_sensitive.recall.sensitive.value is None
    assert no_sensitive.precision.logic.value == 1.0


def test_U_MET_4_out_of_scope_micro_scores_count_verifier_unexplained_and_skip_non_ok() -> None:
    # card says a.ts, the verifier's unexplained adds b.ts; gold is b.ts and c.ts
    assert oos_counts(["a.ts", "b.ts"], ["b.ts", "c.ts"]) == OosCounts(tp=1, fp=1, fn=1)
    assert oos_counts([], []) == OosCounts(tp=0, fp=0, fn=0)
    rows = [
        make_row("a", oos=OosCounts(tp=1, fp=0, fn=0)),
        make_row("b", oos=OosCounts(tp=0, fp=1, fn=2)),
        make_row("c", oos=OosCounts(tp=1, fp=0, fn=0)),
        make_row("d", status="unavailable", failure_reason="too_large", oos=OosCounts(tp=0, fp=5, fn=5)),
    ]
    m = compute_metrics(rows)
    assert m.out_of_scope_counts == OosCounts(tp=2, fp=1, fn=2)
    assert m.out_of_scope_precision.value == 0.6667  # 2 / 3
    assert m.out_of_scope_recall.value == 0.5  # 2 / 4
    assert m.out_of_scope_exact_set_rate.value == 0.6667  # a and c of the three ok rows


def test_U_MET_5_flag_metrics_exclude_error_and_unavailable() -> None:
    assert flag_outcome("disagree", True) == "tp"
    assert flag_outcome("disagree", False) == "fp"
    assert flag_outcome("agree", True) == "fn"
    assert flag_outcome("agree", False) == "tn"
    assert flag_outcome("error", True) == "na"
    assert flag_outcome(None, False) == "na"
    assert flag_outcome("agree", None) == "na"
    rows = [
        make_row("a", flag="tp", verifier_status="disagree"),
        make_row("b", flag="tp", verifier_status="disagree"),
        make_row("c", flag="fp", verifier_status="disagree"),
        make_row("d", flag="fn", verifier_status="agree"),
        make_row("e", flag="tn", verifier_status="agree"),
        make_row("f", flag="na", verifier_status="error"),
        make_row("g", flag="na", verifier_status=None, status="unavailable", failure_reason="llm_timeout"),
    ]
    m = compute_metrics(rows)
    assert m.flag_counts.model_dump() == {"tp": 2, "fp": 1, "fn": 1, "tn": 1}
    assert m.flag_precision.value == 0.6667
    assert m.flag_recall.value == 0.6667
    assert m.verifier_error_rate.value == 0.1667  # 1 error among the 6 ok rows


def test_U_MET_6_unavailable_rate_counts_ungolded_and_excludes_skipped() -> None:
    rows = [
        make_row("a"),
        make_row("b", gold=None, status="unavailable", failure_reason="too_large", verifier_status=None),
        make_row("c", status="unavailable", failure_reason="llm_unavailable", verifier_status=None),
        make_row("d", final=None, model=None, status=None, verifier_status=None, flag="na", skipped="budget"),
    ]
    m = compute_metrics(rows)
    assert m.run_cases == 3
    assert m.skipped == 1
    assert m.scored == 2
    assert (m.unavailable_rate.k, m.unavailable_rate.n, m.unavailable_rate.value) == (2, 3, 0.6667)
    assert m.unavailable_rate.method == "clopper-pearson"
    assert m.unavailable_by_reason == {"llm_unavailable": 1, "too_large": 1}


def test_U_MET_7_injection_detection_over_injection_tagged_rows() -> None:
    rows = [
        make_row("a", tags=["injection"], instructions_in_data=True),
        make_row("b", tags=["injection", "floor"], floor_rules=["injection_marker"]),
        make_row("c", tags=["injection"]),
        make_row("d", tags=["docs"], instructions_in_data=True),
    ]
    m = compute_metrics(rows)
    assert m.injection_cases == 3
    assert m.injection_detection_rate.value == 0.6667


def test_U_MET_8_card_acceptable_rate() -> None:
    rows = [
        make_row("a", gold="logic", floor="logic"),  # right class, exact oos, tn
        make_row("b", gold="logic", floor="logic", oos=OosCounts(tp=0, fp=1, fn=0)),  # extra oos
        make_row("c", gold="sensitive", floor="logic"),  # wrong class
        make_row("d", gold="logic", floor="logic", verifier_status="error", flag="na"),  # na counts
        make_row("e", gold="logic", floor="logic", flag="fn", should_flag=True),  # missed flag
        make_row("f", gold="logic", floor="logic", status="unavailable", failure_reason="llm_timeout"),
    ]
    assert compute_metrics(rows).card_acceptable_rate.value == 0.4  # a and d of 5 ok rows


def test_U_MET_9_empty_input_gives_null_rates_and_zero_counts() -> None:
    m = compute_metrics([]).to_json_dict()
    rates = [k for k, v in m.items() if isinstance(v, dict) and "value" in v]
    assert len(rates) == 27 and all(m[k]["value"] is None and m[k]["ci95"] is None for k in rates)
    assert all(m[k]["n"] == 0 for k in rates)
    assert m["exactAccuracyFinal"]["value"] is None and m["trivialRecall"]["value"] is None
    assert (m["runCases"], m["scored"], m["skipped"], m["injectionCases"]) == (0, 0, 0, 0)
    assert m["usage"] == {
        "inputTokens": 0,
        "outputTokens": 0,
        "cacheReadTokens": 0,
        "cacheWriteTokens": 0,
        "calls": 0,
    }
    assert m["confusion"]["final"]["matrix"] == [[0, 0, 0]] * 3
    assert m["costUsd"] == 0 and m["costPerCaseUsd"] is None
    assert m["underClassificationByTag"] == {} and m["unavailableByReason"] == {}


def test_U_MET_10_case_set_hash_follows_gold_risk_not_goal_text_or_tags() -> None:
    base = [make_case("syn-901-a"), make_case("syn-902-b", labels=[make_label(risk="logic")])]
    reference = case_set_hash(base)
    other_goal = [base[0], make_case("syn-902-b", labels=[make_label(risk="logic", goal="Other words.")])]
    other_tag = [base[0], make_case("syn-902-b", tags=["docs"], labels=[make_label(risk="logic")])]
    other_risk = [base[0], make_case("syn-902-b", labels=[make_label(risk="sensitive")])]
    assert case_set_hash(other_goal) == reference
    assert case_set_hash(other_tag) == reference
    assert case_set_hash(list(reversed(base))) == reference
    assert case_set_hash(other_risk) != reference


def test_metrics_cost_and_per_tag_under_classification() -> None:
    rows = [
        make_row("a", tags=["docs"], gold="logic", floor="trivial", model="trivial"),
        make_row("b", tags=["docs", "ci"], gold="logic", floor="logic", model="logic", cached=True),
        make_row("c", cost_usd=None),
    ]
    m = compute_metrics(rows)
    docs = m.under_classification_by_tag["docs"]
    assert (docs.n, docs.too_small) == (2, True)
    assert [(r.k, r.n, r.value) for r in (docs.floor, docs.model, docs.final)] == [(1, 2, 0.5)] * 3
    assert m.under_classification_by_tag["ci"].final.value == 0.0
    assert m.cost_usd is None  # an unpriced model makes the total unknown
    assert compute_metrics(rows[:2]).cost_usd == 0.006
    assert compute_metrics(rows[:2]).cost_usd_this_run == 0.003
    assert compute_metrics(rows[:2]).cost_per_case_usd == 0.003
    assert m.usage.calls == 6
