"""Every number with its evidence (issue 13).

Honest denominators, gates on what is demonstrated, label quality, scripted numbers marked, old
reports still read as baselines.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from graft_eval_pipeline.defs.checks import thresholds_check
from graft_eval_pipeline.defs.metadata import metric_table
from graft_eval_pipeline.evalset.report.baseline import LEGACY_WARNING, diff_reports
from graft_eval_pipeline.evalset.report.files import load_any_report, load_report
from graft_eval_pipeline.evalset.report.legacy import ReportV1, values_only
from graft_eval_pipeline.evalset.report.publish import build_report
from graft_eval_pipeline.evalset.report.render import render_markdown, summary_text
from graft_eval_pipeline.evalset.report.thresholds import (
    check_failed,
    check_limit,
    check_thresholds,
    dagster_check_passed,
    load_thresholds,
    parse_thresholds,
    threshold_verdict,
    with_thresholds,
)
from graft_eval_pipeline.evalset.scoring.metrics import compute_metrics
from graft_eval_pipeline.evalset.scoring.rates import rate_stat
from graft_eval_pipeline.evalset.scoring.report_schema import (
    CaseRow,
    EvalReport,
    GitInfo,
    GoldSummary,
    LabelAgreement,
    ModelPair,
    PairKappa,
    PromptInfo,
    RunInfo,
)
from graft_eval_pipeline.evalset.scoring.rows import HarnessRun, gold_summary, set_summary
from graft_eval_pipeline.evalset.sets.case_schema import SetMeta
from graft_eval_pipeline.evalset.sets.errors import EvalError
from graft_eval_pipeline.evalset.sets.paths import SYNTHETIC_BASELINE, THRESHOLDS_FILE
from graft_eval_pipeline_tests.builders import make_case, make_label, make_pilot_case
from graft_eval_pipeline_tests.row_builders import make_row

NOW = datetime(2026, 10, 15, 10, 0, 0, tzinfo=UTC)
V1_REPORT = Path(__file__).parent / "data" / "report-v1.json"


def meta(kind: str) -> SetMeta:
    if kind == "synthetic":
        return SetMeta(
            schema_version=1,
            set_id="synthetic",
            kind="synthetic",
            encrypted=False,
            key_id=None,
            consent_ref=None,
            created_at=NOW,
        )
    return SetMeta(
        schema_version=1,
        set_id="pilot-acme",
        kind="pilot",
        encrypted=True,
        key_id="3f9a12bc",
        consent_ref="Acme agreement",
        created_at=NOW,
    )


def report_of(rows: list[CaseRow], kind: str = "pilot", llm: str = "fake", **over: Any) -> EvalReport:
    cases = (
        [make_pilot_case(pr_number=400 + i) for i in range(len(rows))]
        if kind == "pilot"
        else [make_case(f"syn-9{i:02d}-x") for i in range(len(rows))]
    )
    harness = HarnessRun(
        set=set_summary(meta(kind), cases, rows),
        prompt=PromptInfo(prompt_version="intent-v1", prompt_fingerprint="f" * 64),
        models=ModelPair(fast="claude-haiku-5-5", strong="claude-sonnet-5-5"),
        llm=llm,
        run=RunInfo(complete=True, skipped_budget=0, cached_results=0, duration_ms=5),
        created_at=NOW,
        git=GitInfo(commit=None, dirty=None),
        rows=rows,
    )
    return build_report(harness, compute_metrics(rows), run_id="20261015T100000Z-3f9a", **over)


def error_free(n: int, gold: str = "logic") -> list[CaseRow]:
    return [make_row(f"c{i:04d}", gold=gold, floor=gold) for i in range(n)]


# --- honest denominators ------------------------------------------------------------------------


def test_severe_among_sensitive_gold_and_final_split_by_card_and_unavailable() -> None:
    unavailable: dict[str, Any] = {
        "status": "unavailable",
        "failure_reason": "llm_unavailable",
        "model": None,
        "verifier_status": None,
        "oos": None,
        "flag": "na",
    }
    rows = [
        make_row("a", gold="sensitive", floor="trivial", model="trivial"),  # severe (and under)
        make_row("b", gold="logic", floor="trivial", model="trivial"),  # under, not severe
        *(make_row(f"t{i}", gold="trivial") for i in range(4)),
        make_row("g", gold="sensitive", floor="trivial", final="logic", **unavailable),  # raised by rule
        make_row("h", gold="logic", floor="trivial", final="logic", **unavailable),
    ]
    m = compute_metrics(rows)
    k_n = {
        name: (getattr(m, name).k, getattr(m, name).n)
        for name in (
            "severe_under_classification_final",
            "severe_under_classification_sensitive_final",
            "under_classification_final",
            "under_classification_final_with_card",
            "under_classification_final_unavailable",
        )
    }
    assert k_n == {
        "severe_under_classification_final": (1, 8),  # diluted by the six non-sensitive cases
        "severe_under_classification_sensitive_final": (1, 2),
        "under_classification_final": (3, 8),
        "under_classification_final_with_card": (2, 6),
        "under_classification_final_unavailable": (1, 2),
    }
    none_sensitive = compute_metrics(rows[1:6]).severe_under_classification_sensitive_final
    assert (none_sensitive.n, none_sensitive.value, none_sensitive.upper95) == (0, None, None)
    md = render_markdown(report_of(rows), None)
    assert "raised to at least logic by rule" in md
    assert "| severeUnderClassificationSensitiveFinal | 1/2 | 0.5 |" in md


def test_per_tag_rows_show_k_of_n_and_mark_small_ones() -> None:
    rows = [make_row(f"d{i}", tags=["docs"], gold="logic", floor="logic") for i in range(5)]
    rows += [make_row("c1", tags=["ci"], gold="logic", floor="trivial", model="trivial")]
    by_tag = compute_metrics(rows).under_classification_by_tag
    assert (by_tag["docs"].n, by_tag["docs"].too_small) == (5, False)
    assert (by_tag["ci"].final.k, by_tag["ci"].final.n, by_tag["ci"].too_small) == (1, 1, True)
    md = render_markdown(report_of(rows), None)
    ci_line = next(line for line in md.splitlines() if line.startswith("| ci |"))
    assert "1/1 1.000" in ci_line and ci_line.endswith("| too small to read (n < 5) |")
    docs_line = next(line for line in md.splitlines() if line.startswith("| docs |"))
    assert "0/5 0.000 [0.000–0.522] ≤ 0.451" in docs_line and docs_line.endswith("|  |")


# --- label quality ------------------------------------------------------------------------------


def test_gold_summary_records_label_sets_adjudication_and_confidence() -> None:
    double = make_case(
        "syn-901-a",
        labels=[make_label("alice", risk="logic"), make_label("bob", risk="sensitive")],
        adjudicated=make_label("carol", risk="sensitive", confidence="low"),
    )
    gold = gold_summary(double)
    assert gold is not None and (gold.label_sets, gold.adjudicated, gold.confidence) == (2, True, "low")
    assert gold_summary(make_case("syn-902-b", labels=[])) is None


def test_label_quality_shares_and_the_double_labeled_sensitivity_line() -> None:
    def row(case_id: str, sets: int, final: str, **gold: Any) -> CaseRow:
        summary = GoldSummary(
            risk="sensitive", should_flag=False, out_of_scope_count=0, label_sets=sets, **gold
        )
        return make_row(case_id, floor=final, model=final).model_copy(update={"gold": summary})

    rows = [
        row("a", 2, "trivial", adjudicated=True),
        row("b", 2, "sensitive", confidence="low"),
        row("c", 1, "sensitive"),
        row("d", 1, "logic"),
        make_row("e", gold=None),
    ]
    quality = compute_metrics(rows).label_quality
    assert quality.gold == 4
    assert [(s.k, s.n) for s in (quality.double_labeled, quality.adjudicated, quality.low_confidence)] == [
        (2, 4),
        (1, 4),
        (1, 4),
    ]
    sensitivity = quality.under_classification_final_double_labeled
    assert (sensitivity.k, sensitivity.n, sensitivity.value) == (1, 2, 0.5)
    report = report_of(rows)
    md = render_markdown(report, None)
    assert "double-labeled 2/4 0.500" in md and "(sensitivity): 1/2 0.500" in md
    assert "risk kappa: not computed for this report" in md


def test_report_shows_kappa_with_its_interval_or_why_there_is_none() -> None:
    rows = error_free(3)
    agreement = LabelAgreement(
        target=0.6,
        pairs=[
            PairKappa(labelers=("alice", "bob"), n=40, kappa=0.72, ci95=(0.55, 0.89), status="ok"),
            PairKappa(labelers=("alice", "carol"), n=6, kappa=None, ci95=None, status="undefined"),
        ],
        skipped_pairs=1,
    )
    md = render_markdown(report_of(rows, label_agreement=agreement), None)
    assert "risk kappa alice / bob: kappa 0.720 [0.550–0.890], n 40" in md
    assert "alice / carol: kappa undefined (both used one class only), n 6" in md
    none = LabelAgreement(target=0.6, pairs=[], skipped_pairs=0)
    summary = summary_text(report_of(rows, label_agreement=none), None, [])
    assert "risk kappa: not measured, no labeler pair" in summary


# --- gates on what is demonstrated --------------------------------------------------------------


def test_empty_denominators_are_insufficient_evidence_never_pass() -> None:
    block = parse_thresholds(
        {
            "synthetic": {
                "underClassificationFinal": {"max": 0},
                "severeUnderClassificationSensitiveFinal": {"max": 0},
            }
        }
    )
    report = report_of([make_row("a", gold=None)], kind="synthetic")  # no gold: nothing scored
    results = check_thresholds(report, block, None, strict=False)
    assert all(r.insufficient and not r.passed and not r.na for r in results)
    assert {threshold_verdict(r) for r in results} == {"INSUFFICIENT EVIDENCE"}
    assert with_thresholds(report, results).passed is False
    # not fatal for --check without --strict, fatal with it, and always fatal for Dagster
    assert not check_failed(results) and not dagster_check_passed(results)
    assert check_failed(check_thresholds(report, block, None, strict=True))
    dagster_thresholds = thresholds_check(results, "pilot-demo")
    assert dagster_thresholds.passed is False
    assert dagster_thresholds.metadata["insufficient_evidence"].value == [
        "underClassificationFinal",
        "severeUnderClassificationSensitiveFinal",
    ]


def test_upper95_gate_passes_only_with_enough_error_free_cases() -> None:
    block = parse_thresholds({"pilot": {"underClassificationFinal": {"max": 0.02, "on": "upper95"}}})
    (short,) = check_thresholds(report_of(error_free(148)), block, None, strict=True)
    assert (short.k, short.n, short.on, short.cases_needed) == (0, 148, "upper95", 149)
    assert short.value is not None and short.value > 0.02 and not short.passed and not short.insufficient
    (enough,) = check_thresholds(report_of(error_free(149)), block, None, strict=True)
    assert enough.value is not None and enough.value <= 0.02 and enough.passed
    # the same data on the point value: 0.0 passes even with 30 cases, which is why pilot gates on upper95
    by_value = parse_thresholds({"pilot": {"underClassificationFinal": {"max": 0.02}}})
    (point,) = check_thresholds(report_of(error_free(30)), by_value, None, strict=True)
    assert point.passed and point.value == 0.0


def test_min_n_turns_a_small_sample_into_insufficient_evidence() -> None:
    block = parse_thresholds(
        {"pilot": {"exactAccuracyFinal": {"min": 0.75, "minN": 100}, "provisional": True}}
    )
    (few,) = check_thresholds(report_of(error_free(99)), block, None, strict=False)
    # a min limit on a rate gates on its one-sided lower bound, shown rounded down
    assert few.insufficient and few.on == "lower95" and not few.passed and few.provisional
    assert few.value == math.floor(0.05 ** (1 / 99) * 1e4) / 1e4
    assert few.limit == "min 0.75 on lower95, n >= 100" and few.cases_needed == 11
    assert not dagster_check_passed([few])  # provisional or not, Dagster does not pass it
    (many,) = check_thresholds(report_of(error_free(100)), block, None, strict=False)
    assert many.passed and not many.insufficient


def test_committed_pilot_block_gates_under_classification_on_upper95() -> None:
    pilot = load_thresholds(THRESHOLDS_FILE)["pilot"]
    uc = pilot.limits["underClassificationFinal"]
    assert (uc.kind, uc.value, uc.on) == ("max", 0.02, "upper95") and uc.min_n is not None
    assert pilot.limits["severeUnderClassificationSensitiveFinal"].min_n is not None


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"exactAccuracyFinal": {"min": 0.7, "on": "upper95"}}, "needs a 'max' limit"),
        ({"flagRecall": {"max": 0.7, "on": "upper95"}}, "needs a 'max' limit on an under-classification"),
        ({"underClassificationFinal": {"max": 0.02, "on": "lower95"}}, "'lower95' needs a 'min' limit"),
        ({"costUsd": {"min": 0.1, "on": "lower95"}}, "'lower95' needs a 'min' limit on a rate"),
        ({"underClassificationFinal": {"max": 0.02, "on": "upper"}}, "'on' must be"),
        ({"costUsd": {"max": 1, "minN": 10}}, "minN applies to rates only"),
        ({"underClassificationFinal": {"max": 0.02, "minN": -1}}, "minN must be a whole number"),
        ({"underClassificationFinal": {"max": 0.02, "atLeast": 3}}, "bad entry"),
    ],
)
def test_bad_gate_options_are_configuration_errors(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(EvalError, match=message):
        parse_thresholds({"pilot": entry})


# --- scripted numbers and the one-screen summary ---------------------------------------------------


def test_synthetic_summary_shows_the_intervals_on_one_screen_and_marks_scripted_numbers() -> None:
    baseline = load_report(SYNTHETIC_BASELINE)
    text = summary_text(baseline, diff_reports(baseline, baseline), baseline.thresholds)
    lines = text.splitlines()
    assert len(lines) <= 40
    uc = next(line for line in lines if line.strip().startswith("underClassificationFinal "))
    assert "0/30  0.000 [0.000–0.116]  ≤ 0.095" in uc and uc.endswith("scripted")
    floor = next(line for line in lines if line.strip().startswith("underClassificationFloor "))
    assert "6/30" in floor and "scripted" not in floor  # the floor is real code, not a script
    assert any("tokens" in line and line.endswith("scripted") for line in lines)
    assert any(line.strip().startswith("costUsd") and line.endswith("scripted") for line in lines)
    assert "population: not a sample" in text


def test_live_reports_are_not_marked_scripted() -> None:
    rows = error_free(3)
    for llm, expected in (("fake", True), ("live", False)):
        report = report_of(rows, llm=llm)
        md = render_markdown(report, None)
        assert (
            "| underClassificationFinal | 0/3 | 0.0 | [0.000–0.708] | 0.6316 | scripted |" in md
        ) is expected
        assert ("model-derived rates, tokens and costs are scripted" in md) is expected
        table = {r.data["metric"]: r.data for r in metric_table(report.metrics, llm).value.records}
        assert table["underClassificationFinal"]["basis"] == ("scripted" if expected else "measured")
        assert table["underClassificationFloor"]["basis"] == "measured"
        assert (table["underClassificationFinal"]["k"], table["underClassificationFinal"]["n"]) == (0, 3)


# --- schemaVersion 1 reports --------------------------------------------------------------------


def as_v1(report: EvalReport) -> dict[str, Any]:
    """The report as a version-1 writer would have put it: bare rate values, none of the new parts."""
    v1 = json.loads(V1_REPORT.read_text())
    data: dict[str, Any] = values_only(report.to_json_dict())
    data["schemaVersion"] = 1
    data.pop("labelAgreement")
    data.pop("inputs", None)  # a version-1 writer recorded no inputs
    data["metrics"] = {k: v for k, v in data["metrics"].items() if k in v1["metrics"]}
    for tag in data["metrics"]["underClassificationByTag"].values():
        tag.pop("tooSmall")
    for row in data["cases"]:
        row.pop("stratum")
        if row["gold"] is not None:
            row["gold"] = {k: row["gold"][k] for k in ("risk", "shouldFlag", "outOfScopeCount")}
    data["thresholds"] = []
    return data


def test_a_real_version_1_report_still_loads_as_a_baseline() -> None:
    old = load_any_report(V1_REPORT)
    assert isinstance(old, ReportV1) and old.metrics["underClassificationFinal"] == 0.0
    with pytest.raises(EvalError, match="schemaVersion 1 report"):
        load_report(V1_REPORT)


def test_version_1_baseline_is_compared_by_value(tmp_path: Path) -> None:
    rows = [
        make_row("a", gold="logic", floor="logic"),
        make_row("b", gold="logic", floor="trivial", model="trivial"),
    ]
    current = report_of(rows)
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(as_v1(current)))
    baseline = load_any_report(path)
    assert isinstance(baseline, ReportV1)
    diff = diff_reports(baseline, current)
    assert diff.equal and diff.warnings == [LEGACY_WARNING]
    assert diff.baseline_metrics["underClassificationFinal"] == 0.5
    # a value that moved shows up, in the version-1 shape
    moved = as_v1(current)
    moved["metrics"]["exactAccuracyFinal"] = 1.0
    moved["cases"][1]["final"] = "logic"
    path.write_text(json.dumps(moved))
    diff = diff_reports(load_any_report(path), current)
    assert [(c.field, c.baseline, c.current) for c in diff.changes] == [
        ("metrics.exactAccuracyFinal", 1.0, 0.5)
    ]
    assert [(c.where, c.field) for c in diff.case_changes] == [("b", "final")]
    # regression checks read the version-1 values
    block = parse_thresholds({"pilot": {"regressionVsBaseline": {"exactAccuracyFinal": 0.1}}})
    (regression,) = check_thresholds(current, block, diff, strict=False)
    assert (regression.value, regression.passed) == (0.5, False)


def wrong(n: int, start: int = 0) -> list[CaseRow]:
    """`n` logic-gold cases the pipeline called trivial: under-classified and inaccurate."""
    return [make_row(f"w{start + i:04d}", gold="logic", floor="trivial", model="trivial") for i in range(n)]


def severe(n: int) -> list[CaseRow]:
    return [make_row(f"s{i:04d}", gold="sensitive", floor="trivial", model="trivial") for i in range(n)]


def test_a_max_limit_breached_by_the_cases_seen_fails_however_few_they_are() -> None:
    """1 severe miss in 7 sensitive cases: no number of further cases makes `max 0` pass."""
    block = parse_thresholds({"pilot": {"severeUnderClassificationSensitiveFinal": {"max": 0, "minN": 20}}})
    rows = [*severe(1), *[make_row(f"c{i}", gold="sensitive", floor="sensitive") for i in range(6)]]
    (one,) = check_thresholds(report_of(rows), block, None, strict=False)
    assert (one.k, one.n) == (1, 7) and not one.insufficient and not one.passed and not one.provisional
    assert threshold_verdict(one) == "FAIL" and check_failed([one])
    clean = [make_row(f"c{i}", gold="sensitive", floor="sensitive") for i in range(7)]
    (none,) = check_thresholds(report_of(clean), block, None, strict=False)
    assert none.insufficient and threshold_verdict(none) == "INSUFFICIENT EVIDENCE"
    # max 0.02 over at least 100 cases allows 2 misses: 2 in 7 may still pass later, 3 cannot
    loose = parse_thresholds({"pilot": {"underClassificationFinal": {"max": 0.02, "minN": 100}}})
    (two,) = check_thresholds(report_of([*wrong(2), *error_free(5)]), loose, None, strict=False)
    (three,) = check_thresholds(report_of([*wrong(3), *error_free(4)]), loose, None, strict=False)
    assert two.insufficient and not three.insufficient and threshold_verdict(three) == "FAIL"


def test_a_min_limit_gates_on_the_lower_bound_and_fails_once_the_misses_break_it() -> None:
    block = parse_thresholds({"pilot": {"exactAccuracyFinal": {"min": 0.75, "minN": 100}}})
    (point_passes,) = check_thresholds(report_of([*error_free(80), *wrong(20)]), block, None, strict=True)
    # 80/100 = 0.80 is above 0.75, but the data show only that accuracy is above 0.7227
    from scipy.stats import beta

    assert point_passes.value == math.floor(float(beta.ppf(0.05, 80, 21)) * 1e4) / 1e4 == 0.7227
    assert not point_passes.passed and not point_passes.insufficient
    assert point_passes.value < 0.75 <= 80 / 100
    (shown,) = check_thresholds(report_of([*error_free(90), *wrong(10)]), block, None, strict=True)
    assert shown.passed and shown.value is not None and shown.value >= 0.75
    (broken,) = check_thresholds(report_of([*error_free(10), *wrong(26)]), block, None, strict=False)
    assert not broken.insufficient and threshold_verdict(broken) == "FAIL"  # 26 misses > 25 allowed
    (open_,) = check_thresholds(report_of([*error_free(10), *wrong(25)]), block, None, strict=False)
    assert open_.insufficient
    by_value = parse_thresholds({"pilot": {"exactAccuracyFinal": {"min": 0.75, "on": "value"}}})
    (point,) = check_thresholds(report_of([*error_free(80), *wrong(20)]), by_value, None, strict=True)
    assert point.passed and point.value == 0.8 and point.limit == "min 0.75"


def test_the_lower_bound_gate_passes_a_rate_at_its_limit_at_most_5_percent_of_the_time() -> None:
    """The decision rule's error rate, summed exactly over every count.

    At a true accuracy of exactly 0.75 (or 0.6) the `min` gate passes in at most 5% of samples, the
    point-value gate in about half of them.
    """
    from scipy.stats import binom

    for limit in (0.75, 0.6):
        on_bound = parse_thresholds({"pilot": {"exactAccuracyFinal": {"min": limit}}})["pilot"]
        on_value = parse_thresholds({"pilot": {"exactAccuracyFinal": {"min": limit, "on": "value"}}})["pilot"]
        for n in (5, 20, 100, 300):
            bound = value = 0.0
            for k in range(n + 1):
                weight = float(binom.pmf(k, n, limit))
                stat = rate_stat(k, n)
                bound += (
                    weight * check_limit("a", on_bound.limits["exactAccuracyFinal"], stat, False, True).passed
                )
                value += (
                    weight * check_limit("a", on_value.limits["exactAccuracyFinal"], stat, False, True).passed
                )
            assert bound <= 0.05, (limit, n, bound)
            assert value > 0.4, (limit, n, value)


def test_the_threshold_table_says_which_number_it_gates() -> None:
    block = parse_thresholds(
        {
            "pilot": {
                "underClassificationFinal": {"max": 0.02, "on": "upper95"},
                "exactAccuracyFinal": {"min": 0.75},
                "unavailableRate": {"max": 0.05},
            }
        }
    )
    report = report_of(error_free(30))
    checked = with_thresholds(report, check_thresholds(report, block, None, strict=True))
    markdown = render_markdown(checked, None)
    assert "| threshold | value (gated) | limit | evidence | result |" in markdown
    # 0/30: upper bound 1 - 0.05^(1/30) = 0.09503 shown 0.0951; 30/30: lower 0.90497 shown 0.9049
    assert "| underClassificationFinal | 0.0951 (95% upper bound) | max 0.02 on upper95 |" in markdown
    assert "| exactAccuracyFinal | 0.9049 (95% lower bound) | min 0.75 on lower95 |" in markdown
    assert "| unavailableRate | 0.0 (point value) | max 0.05 |" in markdown
