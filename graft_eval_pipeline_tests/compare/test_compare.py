"""Two reports compared case by case: rates with k/n, verdicts, blockers, changed cases."""

from __future__ import annotations

import pytest

from graft_eval_pipeline.evalset.compare.blockers import BASE_TRIALS
from graft_eval_pipeline.evalset.compare.compare import Comparison, compare_reports, margin_verdict
from graft_eval_pipeline.evalset.compare.compare_render import (
    comparison_markdown,
    moved_numbers,
    render_comparison,
    verdict_text,
)
from graft_eval_pipeline.evalset.report.files import load_report
from graft_eval_pipeline.evalset.report.thresholds import margins_for, parse_thresholds
from graft_eval_pipeline.evalset.scoring.report_schema import (
    CaseRow,
    ConfirmationTrials,
    ModelPair,
    PromptInfo,
)
from graft_eval_pipeline.evalset.sets.errors import EvalError
from graft_eval_pipeline.evalset.sets.paths import SYNTHETIC_BASELINE
from graft_eval_pipeline_tests.report.test_report import make_report
from graft_eval_pipeline_tests.row_builders import make_row, with_trials


def rate(comparison: Comparison, name: str) -> dict[str, object]:
    return next(r for r in comparison.rates if r.name == name).model_dump()


def logic_rows(n: int, under: frozenset[int] | set[int] = frozenset(), prefix: str = "c") -> list[CaseRow]:
    """`n` logic-gold cases; those in `under` come out trivial (under-classified)."""
    return [
        make_row(
            f"{prefix}-{i:03d}", gold="logic", floor="trivial", model="trivial" if i in under else "logic"
        )
        for i in range(n)
    ]


def test_a_report_against_itself_has_no_difference_and_its_k_n_match_the_report_metrics() -> None:
    report = load_report(SYNTHETIC_BASELINE)
    comparison = compare_reports(report, report)
    assert comparison.verdict == "no clear difference" and not comparison.failed
    assert comparison.blockers == [] and comparison.changed == [] and comparison.warnings == []
    assert comparison.notes == [] and comparison.shared == 30
    metrics = report.metrics.to_json_dict()
    for r in comparison.rates:  # the k/n computed from the rows are the report's own
        stat = metrics[r.name]
        assert (r.base_k, r.base_n, r.base) == (stat["k"], stat["n"], stat["value"]), r.name
        assert (r.new_k, r.new_n, r.new) == (r.base_k, r.base_n, r.base), r.name
        assert (r.difference, r.low, r.high, r.only_base, r.only_new, r.mcnemar_p) == (0, 0, 0, 0, 0, 1.0)
    uc = rate(comparison, "underClassificationModel")
    assert (uc["base_k"], uc["base_n"]) == (12, 28)  # two unavailable cases have no model class


def test_a_clear_regression_is_regressed_with_its_discordant_counts_and_p_value() -> None:
    base = make_report(logic_rows(60))
    new = make_report(logic_rows(60, under=set(range(10))))
    comparison = compare_reports(base, new)
    uc = rate(comparison, "underClassificationFinal")
    assert (uc["base_k"], uc["base_n"], uc["new_k"], uc["new_n"]) == (0, 60, 10, 60)
    assert (uc["only_base"], uc["only_new"]) == (0, 10)
    assert uc["mcnemar_p"] == pytest.approx(2 / 1024, rel=1e-6)
    assert uc["difference"] == pytest.approx(0.1667, abs=1e-4)
    assert 0 < uc["low"] < uc["difference"] < uc["high"]  # type: ignore[operator]
    assert uc["verdict"] == "regressed"
    assert rate(comparison, "exactAccuracyFinal")["verdict"] == "regressed"
    assert comparison.verdict == "regressed" and comparison.failed
    assert [c.id for c in comparison.changed] == [f"c-{i:03d}" for i in range(10)]
    assert comparison.changed[0].notes == ["newly under-classified"]

    back = compare_reports(new, base)
    assert back.verdict == "improved" and not back.failed
    assert rate(back, "underClassificationFinal")["verdict"] == "improved"
    assert back.changed[0].notes == ["no longer under-classified"]


def test_one_flip_on_thirty_cases_is_no_clear_difference() -> None:
    comparison = compare_reports(make_report(logic_rows(30)), make_report(logic_rows(30, under={4})))
    uc = rate(comparison, "underClassificationFinal")
    assert uc["mcnemar_p"] == 1.0 and uc["low"] == 0 and uc["verdict"] == "no clear difference"
    assert comparison.verdict == "no clear difference" and not comparison.failed


def test_flips_both_ways_cancel_out() -> None:
    base = make_report(logic_rows(60, under=set(range(0, 8))))
    new = make_report(logic_rows(60, under=set(range(8, 16))))
    uc = rate(compare_reports(base, new), "underClassificationFinal")
    assert (uc["only_base"], uc["only_new"], uc["difference"]) == (8, 8, 0)
    assert uc["mcnemar_p"] == 1.0 and uc["verdict"] == "no clear difference"


def test_model_alone_rates_are_shown_but_stay_out_of_the_overall_verdict() -> None:
    """The floor catches what the model missed: final unchanged, the model clearly worse."""
    base = [make_row(f"c-{i:03d}", gold="logic", floor="logic", model="logic") for i in range(60)]
    new = [
        make_row(r.id, gold="logic", floor="logic", model="trivial" if i < 12 else "logic")
        for i, r in enumerate(base)
    ]
    comparison = compare_reports(make_report(base), make_report(new))
    assert rate(comparison, "underClassificationModel")["verdict"] == "regressed"
    assert rate(comparison, "underClassificationFinal")["verdict"] == "no clear difference"
    assert comparison.verdict == "no clear difference" and not comparison.failed
    assert "underClassificationModel *" in render_comparison(comparison)


def test_blockers_override_the_statistics() -> None:
    base = [
        make_row("a-sensitive", gold="sensitive", floor="trivial", model="sensitive"),
        make_row("b-already-under", gold="sensitive", floor="trivial", model="logic"),
        make_row("c-floor-sensitive", gold="sensitive", floor="sensitive", model="sensitive"),
        make_row("d-floor-logic", gold="logic", floor="logic", model="logic"),
        *logic_rows(40),
    ]
    new = [
        make_row("a-sensitive", gold="sensitive", floor="trivial", model="logic"),  # newly under
        make_row("b-already-under", gold="sensitive", floor="trivial", model="trivial"),  # was under already
        make_row(
            "c-floor-sensitive", gold="sensitive", floor="sensitive", model=None, final="sensitive",
            status="unavailable", failure_reason="llm_timeout", verifier_status=None, flag="na",
        ),
        make_row(
            "d-floor-logic", gold="logic", floor="logic", model=None, final="logic",
            status="unavailable", failure_reason="llm_timeout", verifier_status=None, flag="na",
        ),
        *logic_rows(40),
    ]  # fmt: skip
    comparison = compare_reports(make_report(base), make_report(new))
    assert comparison.verdict == "no clear difference"
    assert [(b.id, b.kind) for b in comparison.blockers] == [
        ("a-sensitive", "newly_under_classified_sensitive"),
        ("c-floor-sensitive", "newly_unavailable_sensitive_floor"),
    ]
    assert comparison.failed
    text = render_comparison(comparison)
    assert (
        "a-sensitive: newly under-classified from sensitive gold (gold sensitive, final sensitive → logic; "
        "in 1 of 1 trial(s), base 0 of 1)" in text
    )
    assert "scripted answers repeat: one trial decides" in text
    assert "c-floor-sensitive: newly unavailable with a sensitive floor" in text
    changed = {c.id: c for c in comparison.changed}
    assert set(changed) == {"a-sensitive", "b-already-under", "c-floor-sensitive", "d-floor-logic"}
    assert changed["b-already-under"].notes == []
    assert changed["d-floor-logic"].notes == ["newly unavailable"]
    assert changed["d-floor-logic"].fields == ["model", "status", "failureReason", "verifierStatus", "flag"]
    assert (
        "d-floor-logic: model logic → None, status ok → unavailable, also failureReason, verifierStatus, "
        "flag (gold logic): newly unavailable" in text
    )


def test_different_case_sets_are_compared_on_the_shared_ids_with_a_warning() -> None:
    base = make_report(logic_rows(10) + logic_rows(3, prefix="old"))
    new = make_report(logic_rows(10) + logic_rows(2, prefix="new"))
    comparison = compare_reports(base, new)
    assert comparison.shared == 10
    assert comparison.only_in_base == ["old-000", "old-001", "old-002"]
    assert comparison.only_in_new == ["new-000", "new-001"]
    assert comparison.warnings == [
        "the runs cover different cases: compared on the 10 shared ones (3 only in base, 2 only in new)"
    ]
    assert rate(comparison, "underClassificationFinal")["base_n"] == 10
    text = render_comparison(comparison)
    assert "only in base: old-000, old-001, old-002" in text and "only in new: new-000, new-001" in text

    with pytest.raises(EvalError, match="share no case that ran in both"):
        compare_reports(make_report(logic_rows(3, prefix="x")), make_report(logic_rows(3, prefix="y")))


def test_other_gold_prompt_and_models_are_stated_in_the_header() -> None:
    base = make_report(logic_rows(5))
    rows = logic_rows(5)
    rows[2] = make_row("c-002", gold="sensitive", floor="trivial", model="logic")
    new = make_report(
        rows,
        prompt=PromptInfo(prompt_version="intent-v2", prompt_fingerprint="e" * 64),
        models=ModelPair(fast="claude-haiku-5-5", strong="claude-opus-5"),
        llm="live",
    )
    comparison = compare_reports(base, new)
    assert comparison.gold_differs == ["c-002"]
    assert (
        "gold differs on 1 shared case(s) (c-002): each run is scored against its own gold"
        in comparison.warnings
    )
    assert comparison.notes == [
        "other prompt: intent-v1 (ffffffff) → intent-v2 (eeeeeeee)",
        "other models: claude-haiku-5-5 / claude-sonnet-5-5 → claude-haiku-5-5 / claude-opus-5",
        "other mode: fake → live",
    ]
    # c-002 is under-classified against its new gold, never before: a candidate, which one
    # live trial cannot confirm
    assert comparison.blockers == [] and [c.id for c in comparison.unconfirmed] == ["c-002"]


def test_cases_skipped_by_a_budget_are_left_out() -> None:
    base = logic_rows(6)
    new = [*logic_rows(5), base[5].model_copy(update={"skipped": "budget", "final": None, "model": None})]
    comparison = compare_reports(make_report(base), make_report(new))
    assert comparison.shared == 5 and comparison.skipped == ["c-005"]
    assert rate(comparison, "unavailableRate")["base_n"] == 5
    assert any("skipped in one run (budget or secret)" in w for w in comparison.warnings)


def test_usage_is_totalled_over_the_shared_cases() -> None:
    base = logic_rows(4)
    new = [r.model_copy(update={"cost_usd": 0.004}) for r in base]
    comparison = compare_reports(make_report(base), make_report(new))
    assert comparison.base_usage.cost_usd == pytest.approx(0.012)
    assert comparison.new_usage.cost_usd == pytest.approx(0.016)
    assert comparison.base_usage.calls == comparison.new_usage.calls == 8
    text = render_comparison(comparison)
    assert "usage moved (shared cases, never a changed case): " in text
    assert "cost $0.0120 → $0.0160" in text and "calls 8 (same)" in text
    assert "changed cases: none; usage moved" in text and comparison.usage_moved and not comparison.changed


def test_usage_deltas_show_enough_digits_to_see_that_they_moved() -> None:
    """`$0.2570 → $0.2570` for a moved cost hid the move (issue 26 item 6)."""
    base = logic_rows(2)
    new = [base[0].model_copy(update={"cost_usd": (base[0].cost_usd or 0.0) + 0.00002}), base[1]]
    text = render_comparison(compare_reports(make_report(base), make_report(new)))
    (line,) = [x for x in text.splitlines() if x.startswith("usage moved")]
    old, new_cost = line.split("cost $")[1].split(" → $")
    assert old != new_cost and float(new_cost) - float(old) == pytest.approx(0.00002)
    assert "(same)" not in line.split("cost")[1]
    assert moved_numbers(0.25704, 0.25698) == ("0.25704", "0.25698")
    assert moved_numbers(0.1, 0.1) == ("0.1000", "0.1000")
    assert moved_numbers(0.1, 0.1 + 1e-12) == ("0.10000000", "0.10000000")  # at most 8 decimals


def test_resamples_below_the_minimum_are_refused_and_the_seed_fixes_the_interval() -> None:
    base, new = make_report(logic_rows(40)), make_report(logic_rows(40, under={1, 2, 3}))
    with pytest.raises(EvalError, match="at least 2,000"):
        compare_reports(base, new, resamples=500)
    one = compare_reports(base, new, seed=3)
    assert one == compare_reports(base, new, seed=3)
    assert comparison_markdown(one).startswith("**verdict: no clear difference; no blocker**")
    assert "| underClassificationFinal | lower | 0.0000 (0/40) | 0.0750 (3/40) |" in comparison_markdown(one)


def test_a_live_flip_on_one_trial_is_unconfirmed_and_a_reproduced_one_blocks() -> None:
    """Live answers vary: one trial cannot tell a flip from a regression; the trials can."""
    base_rows = [
        make_row("a-sensitive", gold="sensitive", floor="trivial", model="sensitive"),
        *logic_rows(40),
    ]
    new_rows = [make_row("a-sensitive", gold="sensitive", floor="trivial", model="logic"), *logic_rows(40)]
    once = compare_reports(make_report(base_rows, llm="live"), make_report(new_rows, llm="live"))
    assert once.blockers == [] and not once.failed
    assert [(c.id, c.needs_trials) for c in once.unconfirmed] == [
        ("a-sensitive", once.blocker_rule.confirm_trials)
    ]
    text = render_comparison(once)
    assert "unconfirmed (not blocking" in text and "a-sensitive: newly under-classified" in text

    trials = once.blocker_rule.confirm_trials
    reproduced = [new_rows[0].model_copy(update={"trial": t}) for t in range(1, trials)]
    confirmed = make_report(new_rows, llm="live").model_copy(
        update={
            "confirmation": ConfirmationTrials(
                trials=trials, cases=["a-sensitive"], rows=reproduced, cost_usd=0.0
            )
        }
    )
    base = with_trials(make_report(base_rows, llm="live"), BASE_TRIALS)  # saved with --trials 3
    assert compare_reports(make_report(base_rows, llm="live"), confirmed).blockers == []  # base: one trial
    blocked = compare_reports(base, confirmed)
    assert [(b.id, b.shown, b.trials) for b in blocked.blockers] == [("a-sensitive", trials, trials)]
    assert blocked.failed

    flipped_back = [r.model_copy(update={"model": "sensitive", "final": "sensitive"}) for r in reproduced]
    flaky = compare_reports(
        base,
        confirmed.model_copy(
            update={
                "confirmation": ConfirmationTrials(
                    trials=trials, cases=["a-sensitive"], rows=flipped_back, cost_usd=0.0
                )
            }
        ),
    )
    assert flaky.blockers == [] and [c.id for c in flaky.flaky] == ["a-sensitive"] and not flaky.failed
    assert "flaky (not blocking: shown in some trials only)" in render_comparison(flaky)


def test_rates_carry_the_holm_adjusted_p_and_the_detectable_difference() -> None:
    comparison = compare_reports(
        make_report(logic_rows(60)), make_report(logic_rows(60, under=set(range(10))))
    )
    uc = rate(comparison, "underClassificationFinal")
    family = [r for r in comparison.rates if r.in_overall and r.mcnemar_p is not None]
    assert uc["adjusted_p"] >= uc["mcnemar_p"]  # type: ignore[operator]
    smallest = uc["mcnemar_p"]
    assert isinstance(smallest, float)
    assert uc["adjusted_p"] == pytest.approx(min(1.0, len(family) * smallest))  # smallest p of the family
    model = rate(comparison, "underClassificationModel")
    assert model["adjusted_p"] == model["mcnemar_p"]  # outside the family
    assert uc["detectable"] is not None and 0 < uc["detectable"] < 1  # type: ignore[operator]


def test_no_clear_difference_always_says_what_change_it_could_have_detected() -> None:
    comparison = compare_reports(make_report(logic_rows(60)), make_report(logic_rows(60, under={4})))
    text, markdown = render_comparison(comparison), comparison_markdown(comparison)
    quiet = [r for r in comparison.rates if r.verdict == "no clear difference"]
    assert quiet
    for r in quiet:  # the number in the text is the rate's own `detectable`
        shown = (
            f"no clear difference (could detect changes of ≥ {r.detectable:.4f})"
            if r.detectable is not None
            else "no clear difference (too few shared cases to detect any change)"
        )
        assert verdict_text(r) == shown and shown in text and f"| {shown} |" in markdown
    assert sum(r.detectable is not None for r in quiet) == 7  # flagRecall has no case (no flag)
    assert "no clear difference |" not in markdown.replace(")", "")  # no bare verdict cell
    tiny = compare_reports(make_report(logic_rows(2)), make_report(logic_rows(2)))
    uc = next(r for r in tiny.rates if r.name == "underClassificationFinal")
    assert uc.detectable is None  # two cases cannot reach p < 0.05 / 6 whatever happens
    assert verdict_text(uc) == "no clear difference (too few shared cases to detect any change)"
    moved = compare_reports(make_report(logic_rows(60)), make_report(logic_rows(60, under=set(range(10)))))
    assert verdict_text(next(r for r in moved.rates if r.name == "underClassificationFinal")) == "regressed"


# --- non-inferiority margins (issue 22 item 2) --------------------------------------------------


@pytest.mark.parametrize(
    ("low", "high", "verdict"),
    [
        (-0.05, -0.001, "better"),
        (-0.05, 0.0, "not worse (within margin)"),
        (-0.01, 0.03, "not worse (within margin)"),  # the upper end at the margin is within it
        (0.001, 0.02, "not worse (within margin)"),  # worse than base, but by less than the margin
        (-0.01, 0.031, "inconclusive at this n"),
        (0.02, 0.09, "inconclusive at this n"),  # worse, not shown to be worse than the margin
        (0.031, 0.09, "worse"),
        (None, None, "inconclusive at this n"),
    ],
)
def test_the_margin_verdict_is_read_off_the_interval(
    low: float | None, high: float | None, verdict: str
) -> None:
    assert margin_verdict(low, high, 0.03) == verdict


def sensitive_rows(n: int, severe: set[int], prefix: str = "s") -> list[CaseRow]:
    return [
        make_row(
            f"{prefix}-{i:03d}",
            gold="sensitive",
            floor="trivial",
            model="trivial" if i in severe else "sensitive",
        )
        for i in range(n)
    ]


def test_margins_judge_each_safety_rate_on_its_paired_interval() -> None:
    margins = {
        "underClassificationFinal": 0.05,
        "severeUnderClassificationSensitiveFinal": 0.1,
        "unavailableRate": 0.2,
    }
    base = make_report([*logic_rows(200), *sensitive_rows(20, set())])
    same = compare_reports(base, base, margins=margins)
    by_name = {m.name: m for m in same.non_inferiority}
    assert list(by_name) == [
        "underClassificationFinal",
        "severeUnderClassificationSensitiveFinal",
        "unavailableRate",
    ]
    assert {m.verdict for m in same.non_inferiority} == {"not worse (within margin)"} and not same.failed
    sensitive = by_name["severeUnderClassificationSensitiveFinal"]
    metrics = base.metrics.severe_under_classification_sensitive_final
    assert (sensitive.base_k, sensitive.base_n) == (metrics.k, metrics.n) == (0, 20)  # the report's own k/n
    assert sensitive.margin == 0.1 and (sensitive.low, sensitive.high) == (0, 0)

    worse = compare_reports(
        base,
        make_report([*logic_rows(200, under=set(range(40))), *sensitive_rows(20, set())]),
        margins=margins,
    )
    uc = next(m for m in worse.non_inferiority if m.name == "underClassificationFinal")
    assert uc.verdict == "worse" and uc.low is not None and uc.low > 0.05 and worse.failed
    assert "underClassificationFinal: worse (margin 0.0500): new − base +0.1818 [" in render_comparison(worse)
    assert "- underClassificationFinal: worse (margin 0.0500)" in comparison_markdown(worse)
    # 3 of 20 sensitive cases newly severe: +0.15, the interval reaches below the margin 0.1
    unsure = compare_reports(
        base, make_report([*logic_rows(200), *sensitive_rows(20, {1, 2, 3})]), margins=margins
    )
    severe_ = next(m for m in unsure.non_inferiority if m.name == "severeUnderClassificationSensitiveFinal")
    assert severe_.verdict == "inconclusive at this n" and severe_.difference == 0.15
    better = compare_reports(
        make_report(logic_rows(200, under=set(range(40)))), make_report(logic_rows(200)), margins=margins
    )
    assert next(m for m in better.non_inferiority if m.name == "underClassificationFinal").verdict == "better"
    assert compare_reports(base, base).non_inferiority == []  # no margins, no verdicts


def test_non_inferiority_margins_are_parsed_and_checked() -> None:
    block = parse_thresholds({"pilot": {"nonInferiority": {"underClassificationFinal": 0.02}}})["pilot"]
    assert block.margins == {"underClassificationFinal": 0.02}
    report = make_report(logic_rows(3))  # a synthetic-kind report: the pilot block's margins are not its own
    assert (
        margins_for(report, {"pilot": block}) == {}
        and margins_for(report, {"synthetic": block}) == block.margins
    )
    for spec, message in [
        ({"exactAccuracyFinal": 0.02}, "no margin for this rate"),
        ({"underClassificationFinal": 0}, "above 0 and below 1"),
        ({"underClassificationFinal": 1.5}, "above 0 and below 1"),
        ({"underClassificationFinal": True}, "above 0 and below 1"),
    ]:
        with pytest.raises(EvalError, match=message):
            parse_thresholds({"pilot": {"nonInferiority": spec}})


@pytest.mark.slow  # a simulation of the rule's error rates
def test_the_margin_rule_rarely_calls_a_rise_of_the_margin_not_worse() -> None:
    """Simulation of the rule with its own code (bench/bench_margins.py has the full grid).

    A true rise of exactly the margin is called "not worse" at about the one-sided 2.5% of the
    interval, and no change is never called "worse".
    """
    import numpy as np

    from graft_eval_pipeline.evalset.compare.paired_stats import paired_rate_differences, percentile_interval

    rng = np.random.default_rng(20261201)
    n, p, margin, sims = 150, 0.05, 0.05, 150
    ones = np.ones((n, 1))
    wrong = {0.0: 0, margin: 0}
    for d in wrong:
        for s in range(sims):
            base = (rng.random(n) < p).astype(np.float64)[:, None]
            new = (rng.random(n) < p + d).astype(np.float64)[:, None]
            interval = percentile_interval(
                paired_rate_differences(base, ones, new, ones, resamples=1_000, seed=s)[:, 0]
            )
            assert interval is not None
            verdict = margin_verdict(interval.low, interval.high, margin)
            wrong[d] += verdict == ("worse" if d == 0 else "not worse (within margin)")
    assert wrong[0.0] == 0
    assert wrong[margin] / sims <= 0.06  # nominal 0.025; 150 draws put 0.06 three standard errors above


def test_compare_counts_every_trial_of_both_runs_clustered_by_case() -> None:
    """Rates over case-trials.

    The bootstrap draws cases with all their trials, so trials that repeat trial 0 exactly give the
    one-trial interval, while the exact test gains from them.
    """
    one = compare_reports(make_report(logic_rows(60)), make_report(logic_rows(60, under=set(range(10)))))
    base = with_trials(make_report(logic_rows(60)), 3)
    new = with_trials(make_report(logic_rows(60, under=set(range(10)))), 3)
    three = compare_reports(base, new)
    assert (three.base_trials, three.new_trials) == (3, 3) and (one.base_trials, one.new_trials) == (1, 1)
    uc, uc_one = rate(three, "underClassificationFinal"), rate(one, "underClassificationFinal")
    assert (uc["base_k"], uc["base_n"], uc["new_k"], uc["new_n"]) == (0, 180, 30, 180)
    assert (uc["low"], uc["high"], uc["difference"]) == (uc_one["low"], uc_one["high"], uc_one["difference"])
    assert (uc["only_base"], uc["only_new"]) == (0, 10)
    assert uc["mcnemar_p"] < uc_one["mcnemar_p"]  # type: ignore[operator]
    assert uc["mcnemar_p"] == pytest.approx(2 * (1 / 20) ** 10)  # each case: all 3 of 6 events new
    assert three.verdict == "regressed" and three.flaky_cases == []
    assert "trials: base 3, new 3 per case" in render_comparison(three)
    assert "trials:" not in render_comparison(one)


def test_a_case_whose_trials_disagree_is_flaky_never_changed() -> None:
    base_rows = [make_row("a-flip", gold="logic", floor="trivial", model="logic"), *logic_rows(20)]
    flipped = base_rows[0].model_copy(update={"model": "trivial", "final": "trivial", "trial": 1})
    base = with_trials(make_report(base_rows, llm="live"), 3)
    assert base.trials is not None
    extra = [flipped if (r.id, r.trial) == ("a-flip", 1) else r for r in base.trials.rows]
    base = base.model_copy(update={"trials": base.trials.model_copy(update={"rows": extra})})
    new_rows = [base_rows[0].model_copy(update={"model": "trivial", "final": "trivial"}), *logic_rows(20)]
    comparison = compare_reports(base, make_report(new_rows, llm="live"))
    assert comparison.changed == []
    flaky = [(f.id, f.base_under, f.base_scored, f.new_under, f.new_scored) for f in comparison.flaky_cases]
    assert flaky == [("a-flip", 1, 3, 1, 1)]
    text = render_comparison(comparison)
    assert "flaky cases (trials of a run disagree: a flip, not a change): 1" in text
    assert "a-flip (gold logic): under-classified in 1 of 3 scored base trial(s), 1 of 1 new" in text
    assert "Flaky cases" in comparison_markdown(comparison)
    stable = compare_reports(make_report(base_rows, llm="live"), make_report(new_rows, llm="live"))
    assert [c.id for c in stable.changed] == ["a-flip"] and stable.flaky_cases == []
