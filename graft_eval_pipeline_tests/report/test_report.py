"""Report building, baseline diff, thresholds, markdown and outputs (U-RPT-1 … U-RPT-6)."""

from __future__ import annotations

import json
import os
import re
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from graft_eval_pipeline.card.llm import Usage
from graft_eval_pipeline.card.result import (
    CallRecord,
    Card,
    CardResult,
    OutOfScopeEdit,
    RiskSummary,
    VerifierResult,
)
from graft_eval_pipeline.evalset.report.baseline import BaselineDiff, diff_reports, save_baseline
from graft_eval_pipeline.evalset.report.files import REPORT_FILE, dump_report, load_report, write_run_outputs
from graft_eval_pipeline.evalset.report.publish import build_report, default_baseline_path, new_run_id
from graft_eval_pipeline.evalset.report.render import render_markdown, summary_text
from graft_eval_pipeline.evalset.report.thresholds import (
    check_failed,
    check_thresholds,
    load_thresholds,
    parse_thresholds,
    threshold_verdict,
    with_thresholds,
)
from graft_eval_pipeline.evalset.scoring.metrics import compute_metrics
from graft_eval_pipeline.evalset.scoring.report_schema import (
    RUN_ID_PATTERN,
    CaseRow,
    EvalReport,
    GitInfo,
    ModelPair,
    PromptInfo,
    RunInfo,
)
from graft_eval_pipeline.evalset.scoring.rows import HarnessRun, build_row, git_info, set_summary
from graft_eval_pipeline.evalset.sets.case_schema import EvalCase, SetMeta
from graft_eval_pipeline.evalset.sets.errors import EvalError
from graft_eval_pipeline.evalset.sets.paths import REPO_ROOT, SCHEMA_DIR, SYNTHETIC_BASELINE, THRESHOLDS_FILE
from graft_eval_pipeline_tests.builders import (
    NOW,
    make_case,
    make_file,
    make_inputs,
    make_label,
    make_pilot_case,
    make_pilot_set,
)
from graft_eval_pipeline_tests.row_builders import gold_risk, make_row

SYNTHETIC_META = SetMeta(
    schema_version=1,
    set_id="synthetic",
    kind="synthetic",
    encrypted=False,
    key_id=None,
    consent_ref=None,
    created_at=NOW,
)
PILOT_META = SetMeta(
    schema_version=1,
    set_id="pilot-acme",
    kind="pilot",
    encrypted=True,
    key_id="3f9a12bc",
    consent_ref="Acme agreement",
    created_at=NOW,
)
THRESHOLDS = load_thresholds(THRESHOLDS_FILE)


def make_report(
    rows: list[CaseRow],
    cases: list[EvalCase] | None = None,
    meta: SetMeta = SYNTHETIC_META,
    **over: Any,
) -> EvalReport:
    cases = cases if cases is not None else [make_case(f"syn-9{i:02d}-x") for i in range(len(rows))]
    run_id = over.pop("run_id", "20261015T100000Z-3f9a")
    fields = {
        "set": set_summary(meta, cases, rows),
        "prompt": PromptInfo(prompt_version="intent-v1", prompt_fingerprint="f" * 64),
        "models": ModelPair(fast="claude-haiku-5-5", strong="claude-sonnet-5-5"),
        "llm": "fake",
        "run": RunInfo(complete=True, skipped_budget=0, cached_results=0, duration_ms=812),
        "created_at": NOW,
        "git": GitInfo(commit="a" * 40, dirty=False),
        "rows": rows,
    }
    fields.update(over)
    return build_report(HarnessRun(**fields), compute_metrics(rows), run_id=run_id)


def three_rows() -> list[CaseRow]:
    return [
        make_row("syn-901-a", gold="trivial"),
        make_row("syn-902-b", gold="logic", floor="logic"),
        make_row("syn-903-c", gold="sensitive", floor="sensitive", tags=["ci"]),
    ]


def test_report_json_is_what_json_dumps_indented_would_write_up_to_small_float_spelling() -> None:
    """dump_report uses pydantic's serializer for speed.

    The layout, key order and values are those of `json.dumps(indent=2, ensure_ascii=False)`, tiny
    costs included.
    """
    rows = [make_row("syn-901-a", gold="trivial", cost_usd=3e-05), *three_rows()[1:]]
    report = make_report(rows)
    text = dump_report(report)
    reference = json.dumps(report.to_json_dict(), indent=2, ensure_ascii=False) + "\n"
    assert json.loads(text) == json.loads(reference)
    assert [line.split(":")[0] for line in text.splitlines()] == [
        line.split(":")[0] for line in reference.splitlines()
    ]
    assert '"costUsd": 0.00003' in text and '"costUsd": 3e-05' in reference


def test_new_run_id_and_report_json_round_trip(tmp_path: Path) -> None:
    run_id = new_run_id(NOW)
    assert re.fullmatch(RUN_ID_PATTERN, run_id) and run_id.startswith("20261015T100000Z-")
    report = make_report(three_rows())
    assert [r.id for r in report.cases] == ["syn-901-a", "syn-902-b", "syn-903-c"]
    data = json.loads(dump_report(report))
    assert data["createdAt"] == "2026-10-15T10:00:00Z"
    assert data["pass"] is True and data["set"]["caseSetHash"] == report.set.case_set_hash
    assert data["cases"][0]["gold"] == {
        "risk": "trivial",
        "shouldFlag": False,
        "outOfScopeCount": 0,
        "labelSets": 1,
        "adjudicated": False,
        "confidence": "high",
    }
    (tmp_path / "r.json").write_text(dump_report(report))
    assert load_report(tmp_path / "r.json") == report
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(EvalError, match="not a valid eval report"):
        load_report(tmp_path / "bad.json")


def test_git_info_outside_a_checkout_is_none(tmp_path: Path) -> None:
    assert git_info(tmp_path) == GitInfo(commit=None, dirty=None)
    inside = git_info(REPO_ROOT)
    assert inside.commit is not None and re.fullmatch(r"[0-9a-f]{40}", inside.commit)


def test_default_baseline_paths(tmp_path: Path) -> None:
    assert default_baseline_path(tmp_path / "eval" / "synthetic", SYNTHETIC_META) == (
        tmp_path / "eval" / "baselines" / "synthetic.json"
    )
    assert (
        default_baseline_path(tmp_path / "pilot-acme", PILOT_META)
        == tmp_path / "pilot-acme" / "baseline.json"
    )


def test_U_RPT_1_run_specific_fields_do_not_count_as_differences() -> None:
    base = make_report(three_rows())
    current = make_report(
        three_rows(),
        run_id="20261016T090000Z-0001",
        created_at=datetime(2026, 10, 16, 9, tzinfo=UTC),
        git=GitInfo(commit=None, dirty=None),
        run=RunInfo(complete=True, skipped_budget=0, cached_results=7, duration_ms=99_999),
    )
    diff = diff_reports(base, current)
    assert diff.comparable and diff.equal
    assert diff.changes == [] and diff.case_changes == [] and diff.warnings == []


def test_U_RPT_2_one_changed_final_is_listed_and_fails_match_baseline() -> None:
    base = make_report(three_rows())
    rows = three_rows()
    rows[2] = make_row("syn-903-c", gold="sensitive", floor="logic", model="logic", tags=["ci"])
    current = make_report(rows)
    diff = diff_reports(base, current)
    assert diff.comparable and not diff.equal
    assert {(c.where, c.field, c.baseline, c.current) for c in diff.case_changes} == {
        ("syn-903-c", "floor", "sensitive", "logic"),
        ("syn-903-c", "model", "trivial", "logic"),
        ("syn-903-c", "final", "sensitive", "logic"),
    }
    assert any(c.field == "metrics.underClassificationFinal.value" for c in diff.changes)
    results = check_thresholds(current, THRESHOLDS, diff, strict=False)
    match = next(t for t in results if t.name == "matchBaseline")
    assert not match.passed and check_failed(results)
    uc = next(t for t in results if t.name == "underClassificationFinal")
    assert (uc.value, uc.passed) == (0.3333, False)


def test_U_RPT_3_not_comparable_and_fingerprint_warning() -> None:
    base = make_report(three_rows())
    other_cases = make_report(
        three_rows(), cases=[make_case("syn-900-x", labels=[make_label(risk="logic")]), *base_cases()]
    )
    diff = diff_reports(base, other_cases)
    assert not diff.comparable and not diff.equal
    assert diff.not_comparable == ["caseSetHash differs (other cases or gold labels)"]

    other_models = make_report(
        three_rows(), models=ModelPair(fast="claude-haiku-5-5", strong="claude-opus-5")
    )
    diff = diff_reports(base, other_models)
    assert not diff.comparable and "models differ" in diff.not_comparable[0]

    same_version = make_report(
        three_rows(), prompt=PromptInfo(prompt_version="intent-v1", prompt_fingerprint="e" * 64)
    )
    diff = diff_reports(base, same_version)
    assert diff.comparable and len(diff.warnings) == 1 and "PROMPT_VERSION" in diff.warnings[0]
    bumped = make_report(
        three_rows(), prompt=PromptInfo(prompt_version="intent-v2", prompt_fingerprint="e" * 64)
    )
    assert diff_reports(base, bumped).warnings == []


def base_cases() -> list[EvalCase]:
    return [make_case(f"syn-9{i:02d}-x") for i in range(1, 3)]


def pilot_report(rows: list[CaseRow]) -> EvalReport:
    cases = [make_pilot_case(pr_number=400 + i) for i in range(len(rows))]
    return make_report(rows, cases=cases, meta=PILOT_META)


def test_U_RPT_4_thresholds_max_min_null_regression_and_provisional() -> None:
    rows = [
        make_row("a", gold="logic", floor="logic"),
        make_row("b", gold="logic", floor="logic"),
        make_row("c", gold="logic", floor="trivial", model="trivial"),  # under-classified
        make_row("d", gold="sensitive", floor="sensitive"),
    ]
    report = pilot_report(rows)
    results = {t.name: t for t in check_thresholds(report, THRESHOLDS, None, strict=False)}
    # the pilot block gates under-classification on its upper bound, with at least 100 cases: 4 are
    # insufficient evidence (never a pass), whatever the value
    uc = results["underClassificationFinal"]
    assert (uc.value, uc.on, uc.k, uc.n, uc.passed, uc.insufficient) == (0.7514, "upper95", 1, 4, False, True)
    assert uc.limit == "max 0.02 on upper95, n >= 100" and uc.cases_needed == 149
    assert threshold_verdict(uc) == "INSUFFICIENT EVIDENCE"
    accuracy = results["exactAccuracyFinal"]
    # a min limit gates on the one-sided 95% lower bound: 3 of 4 shows only 0.2486
    assert (accuracy.value, accuracy.on, accuracy.passed, accuracy.insufficient) == (
        0.2486,
        "lower95",
        False,
        True,
    )
    assert accuracy.limit == "min 0.75 on lower95, n >= 100"
    # without minN a value gate reads as before: 3 of 4 ... outOfScopeRecall has none (no gold paths)
    # nobody should be flagged: flag recall has an empty denominator -> insufficient evidence
    flag = results["flagRecall"]
    assert flag.value is None and not flag.passed and flag.insufficient and not flag.na
    assert threshold_verdict(flag) == "INSUFFICIENT EVIDENCE"
    # no baseline: regression checks are n/a
    assert results["regressionVsBaseline.underClassificationFinal"].na
    # provisional pilot block: failures are reported but not fatal without --strict
    assert threshold_verdict(results["unavailableRate"]) == "PASS"
    assert not check_failed(results.values())
    strict = check_thresholds(report, THRESHOLDS, None, strict=True)
    assert check_failed(strict)
    assert threshold_verdict(next(t for t in strict if t.name == "underClassificationFinal")) == (
        "INSUFFICIENT EVIDENCE"
    )
    # on the point value, without a minimum, 1 of 4 under-classified fails (provisional, then strict)
    by_value = parse_thresholds({"pilot": {"underClassificationFinal": {"max": 0.02}, "provisional": True}})
    (loose,) = check_thresholds(report, by_value, None, strict=False)
    assert (loose.value, loose.passed, loose.insufficient) == (0.25, False, False)
    assert threshold_verdict(loose) == "FAIL (provisional)"
    (tight,) = check_thresholds(report, by_value, None, strict=True)
    assert threshold_verdict(tight) == "FAIL" and check_failed([tight])

    # regression: baseline had UC 0 and accuracy 1.0; now UC 0.25 and accuracy 0.75
    baseline = pilot_report([make_row(r.id, gold=gold_risk(r), floor=gold_risk(r)) for r in rows])
    results = {t.name: t for t in check_thresholds(report, THRESHOLDS, diff_reports(baseline, report), False)}
    uc = results["regressionVsBaseline.underClassificationFinal"]
    assert (uc.value, uc.passed, uc.limit) == (0.25, False, "worsening <= 0 vs baseline")
    acc = results["regressionVsBaseline.exactAccuracyFinal"]
    assert (acc.value, acc.passed) == (0.25, False)
    tolerant = parse_thresholds({"pilot": {"regressionVsBaseline": {"exactAccuracyFinal": 0.3}}})
    (only,) = check_thresholds(report, tolerant, diff_reports(baseline, report), strict=False)
    assert only.passed and only.value == 0.25

    # synthetic block: no baseline means matchBaseline fails (CI must compare against one)
    synthetic = make_report(three_rows())
    results = {t.name: t for t in check_thresholds(synthetic, THRESHOLDS, None, strict=False)}
    assert not results["matchBaseline"].passed and check_failed(results.values())
    same = diff_reports(synthetic, synthetic)
    assert not check_failed(check_thresholds(synthetic, THRESHOLDS, same, strict=False))
    assert with_thresholds(synthetic, list(results.values())).passed is False


def test_thresholds_file_errors_are_configuration_errors() -> None:
    with pytest.raises(EvalError, match="bad entry 'noSuchMetric'"):
        parse_thresholds({"pilot": {"noSuchMetric": {"max": 1}}})
    with pytest.raises(EvalError, match="flagRecall: bad entry"):
        parse_thresholds({"pilot": {"flagRecall": {"atMost": 1}}})
    with pytest.raises(EvalError, match="unknown set kind"):
        parse_thresholds({"nightly": {}})


SECRET_TITLE = "Rework the zebra-quartz ledger"
SECRET_BODY = "Moves the marmalade-cipher into the vault module."
SECRET_GOAL = "Rewire the periwinkle-harbor reconciliation."
PATHS = ["src/periwinkle/harbor.ts", "services/quartz-ledger/marmalade.ts"]


def content_cases() -> tuple[list[EvalCase], list[CaseRow]]:
    files = [make_file(p) for p in PATHS]
    cases, rows = [], []
    for i, pr_number in enumerate((412, 413)):
        inputs = make_inputs(files, pr={"number": pr_number, "title": SECRET_TITLE, "body": SECRET_BODY})
        label = make_label(risk="logic", out_of_scope=[PATHS[1]], goal=SECRET_GOAL, should_flag=bool(i))
        case = make_pilot_case(pr_number=pr_number, inputs=inputs, labels=[label])
        result = CardResult(
            status="ok",
            failure_reason=None,
            card=Card(
                goal=SECRET_GOAL,
                behavior_changes=[SECRET_BODY],
                out_of_scope_edits=[OutOfScopeEdit(path=PATHS[1], reason=SECRET_TITLE)],
                risk_reason=SECRET_BODY,
            ),
            risk=RiskSummary(
                floor="trivial", writer="logic", first_pass="logic", verifier="trivial", final="logic"
            ),
            floor_rules=[],
            raised_by=["writer"],
            instructions_in_data=False,
            verifier=VerifierResult(status="agree", unexplained=[PATHS[0]], claims=[], missing=[SECRET_GOAL]),
            usage=Usage(input_tokens=2000, output_tokens=200),
            calls=[
                CallRecord(
                    purpose="writer",
                    model="claude-sonnet-5-5",
                    usage=Usage(input_tokens=2000, output_tokens=200),
                )
            ],
            input_hash="0" * 64,
        )
        cases.append(case)
        rows.append(build_row(case, result, cached=False, label_key=None))
    return cases, rows


def test_U_RPT_5_markdown_has_metric_table_and_changed_ids_but_no_content() -> None:
    cases, rows = content_cases()
    current = make_report(rows, cases=cases, meta=PILOT_META)
    changed = rows[1].model_copy(update={"final": "sensitive"})
    baseline = make_report([rows[0], changed], cases=cases, meta=PILOT_META)
    diff = diff_reports(baseline, current)
    current = with_thresholds(current, check_thresholds(current, THRESHOLDS, diff, strict=False))
    md = render_markdown(current, diff)
    assert "| metric | k/n | value | 95% CI | upper95 | basis | baseline | Δ |" in md
    assert "| underClassificationFinal | 0/2 | 0.0 | [0.000–0.842] | 0.7764 | scripted | 0.0 | 0 |" in md
    assert "| exactAccuracyFinal | 2/2 | 1.0 | [0.342–1.000] |  | scripted | 0.5 | +0.5 |" in md
    assert f"- {cases[1].id}: final sensitive → logic" in md
    assert "### final (n = 2)" in md and "| logic | 0 | 2 | 0 | 2/2 1.000 [0.342–1.000] |" in md
    assert "## Under-classification by tag" in md and "## Thresholds" in md
    # the second case should be flagged and the verifier agreed: a provisional pilot failure
    assert (
        "| flagRecall | 0.0 (95% lower bound) | min 0.6 on lower95 | "
        "0/1; 6 error-free cases would demonstrate it | FAIL (provisional) |" in md
    )
    for text in [*PATHS, SECRET_TITLE, SECRET_BODY, SECRET_GOAL, "periwinkle", "marmalade"]:
        assert text not in md
    summary = summary_text(current, diff, current.thresholds)
    assert (
        f"{cases[1].id}: final sensitive → logic" in summary and "thresholds: FAIL (provisional)" in summary
    )
    assert not any(text in summary for text in [*PATHS, SECRET_TITLE, SECRET_BODY, SECRET_GOAL])


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_U_RPT_6_pilot_report_json_holds_no_case_content() -> None:
    cases, rows = content_cases()
    assert rows[0].oos is not None and rows[0].oos.model_dump() == {"tp": 1, "fp": 1, "fn": 0}
    report = make_report(rows, cases=cases, meta=PILOT_META)
    content = [*PATHS, SECRET_TITLE, SECRET_BODY, SECRET_GOAL]
    for case in cases:
        content += [f.path for f in case.inputs.files] + [case.inputs.pr.title, case.inputs.pr.body]
    strings = _strings(json.loads(dump_report(report)))
    assert strings
    leaks = [s for s in strings for c in content if c in s or (s and s in c and len(s) > 12)]
    assert leaks == []


def test_write_run_outputs_writes_json_markdown_and_parquet(tmp_path: Path) -> None:
    report = make_report(three_rows())
    out = tmp_path / "runs" / report.run_id
    paths = write_run_outputs(out, report, render_markdown(report, None))
    assert sorted(p.name for p in paths.values()) == ["cases.parquet", "report.json", "report.md"]
    assert load_report(out / REPORT_FILE) == report
    assert "No baseline." in (out / "report.md").read_text()
    import pandas as pd  # imported here: only this test reads the frame back

    frame = pd.read_parquet(out / "cases.parquet")
    assert list(frame["id"]) == ["syn-901-a", "syn-902-b", "syn-903-c"]
    assert list(frame["gold_risk"]) == ["trivial", "logic", "sensitive"]
    assert list(frame.iloc[2]["tags"]) == ["ci"]
    assert int(frame["input_tokens"].sum()) == 3000
    for path in paths.values():
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_summary_text_lists_failures_and_hidden_changes() -> None:
    rows = three_rows()
    base = make_report(rows)
    current = make_report([make_row(r.id, gold=gold_risk(r), floor="trivial", model="trivial") for r in rows])
    diff = diff_reports(base, current)
    results = check_thresholds(current, THRESHOLDS, diff, strict=False)
    text = summary_text(current, diff, results)
    assert "thresholds: FAIL" in text and "FAIL: matchBaseline = false (decisions equal to baseline)" in text
    assert "syn-903-c: final sensitive → trivial" in text
    assert "… and" in text and len(text.splitlines()) <= 40
    assert isinstance(diff, BaselineDiff)


def test_save_baseline_refuses_a_pilot_baseline_inside_a_git_tree(tmp_path: Path) -> None:
    from graft_eval_pipeline.evalset.sets.errors import EvalLocationError

    cases, rows = content_cases()
    report = make_report(rows, cases=cases, meta=PILOT_META)
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    with pytest.raises(EvalLocationError, match="inside a git working tree"):
        save_baseline(tmp_path / "repo" / "baselines" / "pilot.json", report)
    assert not (tmp_path / "repo" / "baselines").exists()
    save_baseline(tmp_path / "outside" / "baseline.json", report)
    assert load_report(tmp_path / "outside" / "baseline.json") == report
    synthetic = make_report(three_rows())
    save_baseline(tmp_path / "repo" / "baselines" / "synthetic.json", synthetic)
    assert load_report(tmp_path / "repo" / "baselines" / "synthetic.json") == synthetic


def test_saving_an_unchanged_result_leaves_the_baseline_file_as_it_is(tmp_path: Path) -> None:
    """Re-saving after a change that moves no result keeps `git diff` empty.

    Any result change rewrites the file.
    """
    rows = three_rows()
    path = tmp_path / "baselines" / "synthetic.json"
    assert save_baseline(path, make_report(rows)) is True
    before = path.read_bytes()
    rerun = make_report(rows).model_copy(update={"run_id": "20991231T000000Z-ffff"})
    assert save_baseline(path, rerun) is False
    assert path.read_bytes() == before
    changed = make_report([make_row(r.id, gold=gold_risk(r), floor="trivial", model="trivial") for r in rows])
    assert save_baseline(path, changed) is True
    assert load_report(path) == changed


def test_reports_validate_against_the_committed_report_schema() -> None:
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(json.loads((SCHEMA_DIR / "eval-report.v2.schema.json").read_text()))
    validator.validate(json.loads((SYNTHETIC_BASELINE).read_text()))
    cases, rows = content_cases()
    validator.validate(json.loads(dump_report(make_report(rows, cases=cases, meta=PILOT_META))))


def test_run_folders_of_a_pilot_set_are_0700_whatever_the_umask(tmp_path: Path) -> None:
    """E5: `runs/` and `runs/<id>/` (and a new baseline folder) are private, not umask 0755."""
    from graft_eval_pipeline.evalset.report.publish import publish_run

    cs = make_pilot_set(tmp_path / "pilot-acme")
    cases, rows = content_cases()
    report = make_report(rows, cases=cases, meta=PILOT_META)
    old_umask = os.umask(0o022)
    try:
        published = publish_run(cs, report, thresholds=THRESHOLDS, strict=False)
        save_baseline(tmp_path / "elsewhere" / "deep" / "baseline.json", report)
    finally:
        os.umask(old_umask)
    runs = cs.dir / "runs"
    assert published.out_dir == runs / report.run_id
    for folder in (runs, runs / report.run_id, tmp_path / "elsewhere", tmp_path / "elsewhere" / "deep"):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700, folder
    for path in [*published.out_dir.iterdir(), tmp_path / "elsewhere" / "deep" / "baseline.json"]:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path


def test_every_scalar_metric_has_a_declared_direction() -> None:
    from graft_eval_pipeline.evalset.report.thresholds import METRIC_DIRECTIONS, scalar_metric_names

    assert set(METRIC_DIRECTIONS) == scalar_metric_names()
    computed = compute_metrics([]).to_json_dict()
    assert scalar_metric_names() == {
        k for k, v in computed.items() if not isinstance(v, dict) or {"k", "n", "value"} <= v.keys()
    }
    assert {METRIC_DIRECTIONS[m] for m in ("costUsd", "costUsdThisRun", "costPerCaseUsd")} == {"lower"}


def test_regression_on_cost_fails_when_cost_rises() -> None:
    rows = [make_row("a", gold="logic", floor="logic"), make_row("b", gold="trivial")]
    baseline = pilot_report(rows)
    current = pilot_report([r.model_copy(update={"cost_usd": 0.01}) for r in rows])
    assert current.metrics.cost_usd is not None and baseline.metrics.cost_usd is not None
    assert current.metrics.cost_usd > baseline.metrics.cost_usd
    block = parse_thresholds(
        {"pilot": {"regressionVsBaseline": {"costUsd": 0.001, "costPerCaseUsd": 0, "exactAccuracyFinal": 0}}}
    )
    results = {t.name: t for t in check_thresholds(current, block, diff_reports(baseline, current), False)}
    cost = results["regressionVsBaseline.costUsd"]
    assert (cost.value, cost.passed) == (0.014, False)
    assert not results["regressionVsBaseline.costPerCaseUsd"].passed
    assert results["regressionVsBaseline.exactAccuracyFinal"].passed
    # cheaper is better: the same limits pass the other way round
    back = check_thresholds(baseline, block, diff_reports(current, baseline), False)
    assert all(t.passed for t in back)


@pytest.mark.parametrize("metric", ["runCases", "scored", "injectionCases"])
def test_regression_on_a_metric_without_direction_is_a_configuration_error(
    metric: str, tmp_path: Path
) -> None:
    with pytest.raises(EvalError, match=f"'{metric}' has no better direction"):
        parse_thresholds({"pilot": {"regressionVsBaseline": {metric: 0}}})
    path = tmp_path / "thresholds.json"
    path.write_text(json.dumps({"synthetic": {"regressionVsBaseline": {metric: 1}}}))
    with pytest.raises(EvalError, match="no better direction"):
        load_thresholds(path)
    # a plain limit on it stays allowed
    assert parse_thresholds({"pilot": {metric: {"min": 1}}})["pilot"].limits[metric].kind == "min"


PARQUET_COLUMNS_V1 = [
    "id", "tags", "gold_risk", "gold_should_flag", "gold_out_of_scope_count", "gold_label_sets",
    "gold_adjudicated", "gold_confidence", "floor", "model",
    "final", "status", "failure_reason", "verifier_status", "raised_by", "floor_rules",
    "instructions_in_data", "oos_tp", "oos_fp", "oos_fn", "flag", "input_tokens", "output_tokens",
    "cache_read_tokens", "cache_write_tokens", "calls", "cost_usd", "cached", "skipped",
    "stratum_frame", "stratum_key", "stratum_population", "stratum_sampled", "repository", "writer",
    "verifier", "verifier_cost_usd", "instructions_in_data_from",
]  # fmt: skip


def test_parquet_columns_follow_case_row_fields() -> None:
    import pyarrow as pa

    from graft_eval_pipeline.evalset.report.files import flat_row, parquet_columns, parquet_schema
    from graft_eval_pipeline.evalset.scoring.report_schema import GoldSummary

    assert [c.name for c in parquet_columns()] == PARQUET_COLUMNS_V1
    schema = parquet_schema()
    assert schema.field("tags").type == pa.list_(pa.string())
    assert schema.field("gold_should_flag").type == pa.bool_()
    assert schema.field("oos_tp").type == pa.int64() and schema.field("cost_usd").type == pa.float64()
    row = make_row("a", gold=None, oos=None)
    record = flat_row(row)
    assert list(record) == PARQUET_COLUMNS_V1
    assert record["gold_risk"] is None and record["oos_fp"] is None and record["input_tokens"] == 1000

    # a new row field gets its column (or a loud error), never silently nothing
    class WiderRow(CaseRow):
        retries: int | None
        second_gold: GoldSummary | None

    names = [c.name for c in parquet_columns(WiderRow)]
    assert names[-7:] == [
        "retries",
        "second_gold_risk",
        "second_gold_should_flag",
        "second_gold_out_of_scope_count",
        "second_gold_label_sets",
        "second_gold_adjudicated",
        "second_gold_confidence",
    ]

    class OddRow(CaseRow):
        extra: dict[str, int]

    with pytest.raises(TypeError, match=r"OddRow\.extra"):
        parquet_columns(OddRow)


def test_reading_reports_does_not_import_pyarrow() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import graft_eval_pipeline.evalset.report.publish, graft_eval_pipeline.evalset.run.harness\n"
        "import graft_eval_pipeline.cli\n"
        "assert 'pyarrow' not in sys.modules, 'pyarrow imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO_ROOT)


def test_pandas_reads_cases_parquet_in_the_process_that_wrote_it() -> None:
    """A regression: pyarrow, once imported with numpy hidden, crashed pandas' read (SIGSEGV)."""
    import subprocess
    import sys

    code = (
        "import io, sys\n"
        "from graft_eval_pipeline.evalset.report.files import cases_parquet\n"
        "from graft_eval_pipeline_tests.row_builders import make_row\n"
        "data = cases_parquet([make_row(f'syn-{i:03d}', tags=['ü', 'x']) for i in range(40)])\n"
        "assert 'pandas' not in sys.modules, 'writing imported pandas'\n"
        "import pandas as pd\n"
        "frame = pd.read_parquet(io.BytesIO(data))\n"
        "assert list(frame['id']) == [f'syn-{i:03d}' for i in range(40)], list(frame['id'])\n"
        "assert list(frame.iloc[39]['tags']) == ['ü', 'x']\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])


def test_read_prior_imports_the_report_libraries_while_a_live_run_waits() -> None:
    """`read_prior(warm=True)` imports them on a thread, `ready` has them loaded; a fake run's not."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from graft_eval_pipeline.evalset.report import read_prior\n"
        "from graft_eval_pipeline.evalset.report.publish import REPORT_LIBRARIES\n"
        "from graft_eval_pipeline.evalset.sets.store import open_set\n"
        "from graft_eval_pipeline.evalset.sets.paths import SYNTHETIC_DIR\n"
        "assert 'numpy' not in sys.modules and 'pyarrow.parquet' not in sys.modules, 'imported early'\n"
        "cold = read_prior(open_set(SYNTHETIC_DIR, None))\n"
        "cold.ready()\n"
        "assert cold.libraries is None and 'numpy' not in sys.modules, 'a fake run warms nothing'\n"
        "prior = read_prior(open_set(SYNTHETIC_DIR, None), warm=True)\n"
        "prior.ready()\n"
        "assert all(m in sys.modules for m in REPORT_LIBRARIES), 'not imported'\n"
        "assert prior.baseline is not None and prior.gate is not None\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO_ROOT)
