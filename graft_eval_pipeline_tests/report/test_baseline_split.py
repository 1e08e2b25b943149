"""The baseline judged by decisions.

Usage and context are reported apart; live runs are gated by the paired comparison (issue 14, item
2).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graft_eval_pipeline.evalset.compare.blockers import BASE_TRIALS
from graft_eval_pipeline.evalset.report.baseline import accept_command, diff_reports
from graft_eval_pipeline.evalset.report.publish import check_run
from graft_eval_pipeline.evalset.report.render import baseline_check_details, render_markdown, summary_text
from graft_eval_pipeline.evalset.report.thresholds import (
    ThresholdBlock,
    check_failed,
    check_thresholds,
    parse_thresholds,
)
from graft_eval_pipeline.evalset.scoring import ConfirmationTrials
from graft_eval_pipeline.evalset.scoring.report_schema import CaseRow, PromptInfo, UsageSummary
from graft_eval_pipeline_tests.report.test_report import THRESHOLDS, make_report
from graft_eval_pipeline_tests.row_builders import make_row, with_trials

MATCH = parse_thresholds({"synthetic": {"matchBaseline": True}})
MATCH_USAGE = parse_thresholds({"synthetic": {"matchBaseline": True, "matchBaselineUsage": True}})


def rows(n: int = 40, under: frozenset[int] = frozenset()) -> list[CaseRow]:
    return [
        make_row(f"c-{i:03d}", gold="logic", floor="trivial", model="trivial" if i in under else "logic")
        for i in range(n)
    ]


def more_tokens(row: CaseRow) -> CaseRow:
    usage = UsageSummary(
        input_tokens=1200, output_tokens=100, cache_read_tokens=0, cache_write_tokens=0, calls=2
    )
    return row.model_copy(update={"usage": usage, "cost_usd": 0.0036})


def results(
    report_rows: list[CaseRow], base_rows: list[CaseRow], block: dict[str, ThresholdBlock] = MATCH
) -> dict[str, bool]:
    base, cur = make_report(base_rows), make_report(report_rows)
    return {t.name: t.passed for t in check_thresholds(cur, block, diff_reports(base, cur), strict=False)}


def test_usage_only_changes_leave_the_decisions_equal() -> None:
    base = make_report(rows())
    cur = make_report([more_tokens(r) for r in rows()])
    diff = diff_reports(base, cur)
    assert diff.comparable and not diff.equal
    assert diff.decisions_equal and not diff.usage_equal
    assert diff.changed_case_ids("usage") == [f"c-{i:03d}" for i in range(40)]
    assert {c.field for c in diff.part("usage") if c.where == "report"} == {
        "metrics.usage.inputTokens", "metrics.costUsd", "metrics.costPerCaseUsd",
    }  # fmt: skip
    assert diff.part("decisions") == [] and diff.part("context") == []
    assert results([more_tokens(r) for r in rows()], rows()) == {"matchBaseline": True}
    assert results([more_tokens(r) for r in rows()], rows(), MATCH_USAGE) == {
        "matchBaseline": True,
        "matchBaselineUsage": False,
    }
    # decisions still gate: one class moved
    assert results(rows(under=frozenset({3})), rows()) == {"matchBaseline": False}


def test_cached_and_the_prompt_fingerprint_are_not_decisions() -> None:
    base = make_report(rows())
    cached = make_report([r.model_copy(update={"cached": True}) for r in rows()])
    assert diff_reports(base, cached).equal  # like run.cachedResults: the run's, not the result's
    edited = make_report(rows(), prompt=PromptInfo(prompt_version="intent-v2", prompt_fingerprint="e" * 64))
    diff = diff_reports(base, edited)
    assert diff.decisions_equal and diff.usage_equal and not diff.equal
    assert [c.field for c in diff.part("context")] == ["prompt.promptFingerprint", "prompt.promptVersion"]


def test_the_summary_shows_usage_totals_the_changed_decisions_and_the_accepting_command(
    tmp_path: Path,
) -> None:
    base = make_report(rows())
    cur = make_report([more_tokens(r) for r in rows(under=frozenset({3}))])
    diff = diff_reports(base, cur)
    accept = accept_command(tmp_path / "synthetic", tmp_path / "baselines" / "synthetic.json", live=False)
    text = summary_text(cur, diff, check_thresholds(cur, MATCH, diff, False), accept)
    assert (
        "baseline: decisions differ (1 changed case(s), " in text
        and "usage moved (40 case(s), 3 report field(s))" in text
    )
    assert "  c-003: model logic → trivial" in text and "  c-003: final logic → trivial" in text
    assert "  usage: input tokens 40000 → 48000, cost USD 0.12 → 0.144 (in 40 case(s)); not blocking" in text
    assert text.rstrip().endswith("FAIL: matchBaseline = false (decisions equal to baseline)")
    assert (
        f"to accept these results as the baseline: graft-eval run --set {tmp_path}/synthetic --save-baseline"
        in text
    )
    md = render_markdown(cur, diff, accept)
    assert (
        "- c-003: final logic → trivial" in md
        and "input tokens" not in md.split("## Changed cases")[1].split("##")[0]
    )
    assert "## Usage moved" in md and "```\n" + accept + "\n```" in md
    details = baseline_check_details(cur, diff, accept)
    assert details.changed_cases == ["c-003"] and details.accept_command == accept
    assert details.decisions_equal is False and details.usage_equal is False


def test_accept_command_is_relative_to_the_working_folder_and_says_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert accept_command(
        tmp_path / "eval" / "synthetic", tmp_path / "eval" / "baselines" / "s.json", False
    ) == ("graft-eval run --set eval/synthetic --save-baseline eval/baselines/s.json")
    assert accept_command(Path("/elsewhere/my set"), Path("/elsewhere/my set/baseline.json"), True) == (
        "graft-eval run --set '/elsewhere/my set' --live --save-baseline '/elsewhere/my set/baseline.json'"
    )


def test_a_live_run_is_gated_by_the_paired_comparison_not_by_equality() -> None:
    base = make_report(rows(60))
    one_flip = make_report(rows(60, under=frozenset({7})), llm="live")
    checked = check_run(one_flip, base, MATCH, strict=False)
    assert checked.diff is not None and not checked.diff.decisions_equal  # not equal ...
    assert checked.comparison is not None and checked.comparison.verdict == "no clear difference"
    match = next(t for t in checked.report.thresholds if t.name == "matchBaseline")
    assert match.passed and match.limit == "no regression or blocker vs baseline"  # ... but no regression
    assert (
        "compared with the baseline case by case: verdict: no clear difference; no blocker"
        in checked.summary()
    )
    assert "## Comparison with the baseline" in checked.markdown

    regressed = make_report(rows(60, under=frozenset(range(12))), llm="live")
    checked = check_run(regressed, base, MATCH, strict=False)
    assert checked.comparison is not None and checked.comparison.verdict == "regressed"
    assert check_failed(checked.report.thresholds) and checked.baseline_failed
    assert "  underClassificationFinal: regressed" in checked.summary()

    sensitive = [make_row("s-1", gold="sensitive", floor="trivial", model="sensitive"), *rows(60)]
    blocked = [make_row("s-1", gold="sensitive", floor="trivial", model="logic"), *rows(60)]
    once = check_run(make_report(blocked, llm="live"), make_report(sensitive), MATCH, strict=False)
    assert once.comparison is not None and once.comparison.verdict == "no clear difference"
    # one live trial cannot tell a flip from a regression: unconfirmed, not blocking
    assert not once.baseline_failed and [c.id for c in once.comparison.unconfirmed] == ["s-1"]
    assert "unconfirmed s-1" in once.summary()
    trials = once.comparison.blocker_rule.confirm_trials
    again = [blocked[0].model_copy(update={"trial": t}) for t in range(1, trials)]
    confirmed = make_report(blocked, llm="live").model_copy(
        update={"confirmation": ConfirmationTrials(trials=trials, cases=["s-1"], rows=again, cost_usd=0.0)}
    )
    assert not check_run(confirmed, make_report(sensitive), MATCH, strict=False).baseline_failed
    # a baseline of one trial cannot show the case is new; one saved with --trials 3 can
    checked = check_run(confirmed, with_trials(make_report(sensitive), BASE_TRIALS), MATCH, strict=False)
    assert (
        checked.baseline_failed
        and f"blocker s-1: gold sensitive, final sensitive → logic; in {trials} of {trials} trial(s)"
        in checked.summary()
    )

    # a fake run keeps exact equality
    assert check_run(make_report(rows(60, under=frozenset({7}))), base, MATCH, strict=False).baseline_failed
    assert THRESHOLDS["synthetic"].match_baseline and not THRESHOLDS["synthetic"].match_usage


def test_trials_against_a_baseline_without_them_are_one_summary_line_not_a_field_dump() -> None:
    """`--trials 3` against a one-trial baseline (issue 26 item 2).

    One context line, and no line of the summary or report.md runs long, however many rows the
    trials block holds.
    """
    base = make_report(rows(200))
    current = with_trials(make_report(rows(200)), 3)
    diff = diff_reports(base, current)
    assert diff.decisions_equal
    context = [(c.field, c.baseline, c.current) for c in diff.part("context")]
    assert context == [("trials", "1 trial", "3 trials, 0 flaky cases")]
    for text in (summary_text(current, diff, []), render_markdown(current, diff)):
        assert "trials: 1 trial → 3 trials, 0 flaky cases" in text
        assert "trials.rows" not in text and max(len(line) for line in text.splitlines()) < 400
    confirmed = current.model_copy(
        update={
            "confirmation": ConfirmationTrials(trials=5, cases=["c-001"], rows=[], cost_usd=0.0),
        }
    )
    later = [(c.field, c.current) for c in diff_reports(current, confirmed).part("context")]
    assert later == [("confirmation", "1 case confirmed over 5 trials")]


def test_the_accepting_command_is_offered_only_where_accepting_can_help() -> None:
    accept = "graft-eval run --set eval/synthetic --save-baseline eval/baselines/synthetic.json"
    base, changed = make_report(rows()), make_report(rows(under=frozenset({3})))
    assert check_run(changed, base, MATCH, False, accept).accept == accept  # only the match fails
    assert check_run(changed, None, MATCH, False, accept).accept == accept  # no baseline yet
    assert check_run(base, base, MATCH, False, accept).accept is None  # nothing to accept
    # a failing `max 0` fails against any baseline: no advice in the summary or report.md
    max_zero = parse_thresholds(
        {"synthetic": {"matchBaseline": True, "underClassificationFinal": {"max": 0}}}
    )
    checked = check_run(changed, base, max_zero, False, accept)
    assert checked.failed and checked.accept is None
    assert "to accept" not in checked.summary() and "## Accepting the change" not in checked.markdown
    # no scored case: the results hold nothing a baseline could gate on
    unlabeled = make_report([make_row(f"u-{i}", gold=None) for i in range(3)])
    assert unlabeled.set.scored == 0
    assert check_run(unlabeled, None, MATCH, False, accept).accept is None
