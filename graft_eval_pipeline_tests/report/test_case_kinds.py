"""The one meaning of "changed" and failure kinds that match the errors against gold.

Issue 26 items 1 and 4 (scoring/changes.py, report/case_kinds.py), on hand-built rows.
"""

from __future__ import annotations

from graft_eval_pipeline.evalset.compare.compare import compare_reports
from graft_eval_pipeline.evalset.report.baseline import diff_reports
from graft_eval_pipeline.evalset.report.case_kinds import (
    CASE_KINDS,
    FAILURE_KINDS,
    KIND_MEANINGS,
    case_kinds,
    case_lines,
    cases_to_look_at,
    markdown_cases_section,
)
from graft_eval_pipeline.evalset.scoring import case_field_part, changed_decisions
from graft_eval_pipeline.evalset.scoring.changes import DECISION_FIELDS, USAGE_FIELDS
from graft_eval_pipeline.evalset.scoring.report_schema import OosCounts, UsageSummary
from graft_eval_pipeline_tests.report.test_report import make_report
from graft_eval_pipeline_tests.row_builders import make_row

MORE_USAGE = UsageSummary(
    input_tokens=2000, output_tokens=100, cache_read_tokens=0, cache_write_tokens=0, calls=2
)


def test_only_decision_fields_make_a_case_changed() -> None:
    row = make_row("c-1", gold="logic", floor="logic", model="logic")
    assert changed_decisions(row, row) == []
    usage_only = row.model_copy(update={"usage": MORE_USAGE, "cost_usd": 0.9, "verifier_cost_usd": 0.1})
    assert changed_decisions(row, usage_only) == []
    assert changed_decisions(row, row.model_copy(update={"tags": ["docs"], "cached": True})) == []
    moved = row.model_copy(
        update={"verifier_status": "disagree", "flag": "fp", "oos": OosCounts(tp=0, fp=1, fn=0)}
    )
    assert changed_decisions(row, moved) == ["verifierStatus", "flag", "oos"]
    assert changed_decisions(row, row.model_copy(update={"final": "sensitive"})) == ["final"]
    # every field is in exactly one part, the usage fields in usage
    assert {case_field_part(name) for name in DECISION_FIELDS} == {"decisions"}
    assert {case_field_part(f"{name}.x") for name in USAGE_FIELDS} == {"usage"}
    assert case_field_part("oos.fp") == "decisions" and case_field_part("usage.inputTokens") == "usage"
    assert case_field_part("tags") == case_field_part("gold.risk") == "context"


def test_usage_alone_is_no_changed_case_in_the_diff_the_kinds_and_compare() -> None:
    rows = [make_row(f"c-{i}", gold="logic", floor="logic", model="logic") for i in range(6)]
    base = make_report(rows)
    cur = make_report([r.model_copy(update={"usage": MORE_USAGE, "cost_usd": 0.004}) for r in rows])
    diff = diff_reports(base, cur)
    assert diff.changed_cases == [] and diff.usage_moved and not diff.equal
    assert [line for line in case_lines(cur, diff, "changed")] == []
    comparison = compare_reports(base, cur)
    assert comparison.changed == [] and comparison.usage_moved

    moved = [rows[0].model_copy(update={"final": "trivial", "model": "trivial"}), *rows[1:]]
    diff = diff_reports(base, make_report(moved))
    assert diff.changed_cases == ["c-0"] and not diff.usage_moved
    assert [line.id for line in case_lines(make_report(moved), diff, "changed")] == ["c-0"]
    assert [c.id for c in compare_reports(base, make_report(moved)).changed] == ["c-0"]


def test_failure_kinds_are_errors_against_gold_and_a_correct_flag_is_none() -> None:
    correct_flag = make_row("a-correct-flag", gold="logic", floor="logic", model="logic", should_flag=True)
    correct_flag = correct_flag.model_copy(update={"verifier_status": "disagree", "flag": "tp"})
    missed = make_row("b-missed-flag", gold="logic", floor="logic", model="logic", should_flag=True)
    missed = missed.model_copy(update={"flag": "fn"})  # gold says flag, the verifier agreed
    false_flag = make_row("c-false-flag", gold="logic", floor="logic", model="logic")
    false_flag = false_flag.model_copy(update={"verifier_status": "disagree", "flag": "fp"})
    oos_miss = make_row("d-oos-miss", gold="logic", floor="logic", model="logic")
    oos_miss = oos_miss.model_copy(update={"oos": OosCounts(tp=1, fp=0, fn=2)})
    oos_extra = make_row("e-oos-extra", gold="logic", floor="logic", model="logic")
    oos_extra = oos_extra.model_copy(update={"oos": OosCounts(tp=0, fp=1, fn=0)})
    verifier_error = make_row(
        "f-verifier-error", gold="logic", floor="logic", model="logic", should_flag=True
    )
    verifier_error = verifier_error.model_copy(update={"verifier_status": "error", "flag": "na"})
    under = make_row("g-under", gold="sensitive", floor="trivial", model="trivial")
    rows = [correct_flag, missed, false_flag, oos_miss, oos_extra, verifier_error, under]

    assert case_kinds(correct_flag) == [] and case_kinds(verifier_error) == []  # U-MET-5: na
    assert case_kinds(missed) == ["missed-flag"] and case_kinds(false_flag) == ["false-flag"]
    assert case_kinds(oos_miss) == ["out-of-scope-miss"] and case_kinds(oos_extra) == ["out-of-scope-extra"]
    report = make_report(rows)
    looks = cases_to_look_at(report)
    assert [line.id for line in looks] == [
        "g-under",  # severe under-classification first
        "b-missed-flag",
        "c-false-flag",
        "d-oos-miss",
        "e-oos-extra",
    ]
    for kind in FAILURE_KINDS[3:]:
        assert len(case_lines(report, None, kind)) == 1, kind
    md = "\n".join(markdown_cases_section(report, None))
    assert (
        "5 of 7 cases: 1 under-classified, 0 over-classified, 0 unavailable, 1 missed flag, 1 false flag"
        in md
    )
    assert "| b-missed-flag | missed-flag |" in md and "a-correct-flag" not in md
    assert "missed-flag: gold says flag, the verifier agreed with the card" in md
    assert set(KIND_MEANINGS) == set(CASE_KINDS)
