"""eval_comparison and the split baseline checks on the synthetic partition (issue 14)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from graft_eval_pipeline.evalset.report.files import load_report
from graft_eval_pipeline.evalset.sets.store import open_set, read_case, write_case
from graft_eval_pipeline_tests.builders import copy_synthetic
from graft_eval_pipeline_tests.conftest import InstanceWith
from graft_eval_pipeline_tests.defs.test_definitions import (
    check_results,
    materialize_synthetic,
)
from graft_eval_pipeline_tests.prompt_edit import edit_writer_prompt

# Each test materializes the whole evaluation group, a second or more each: the comparison rules
# themselves are tested in compare/, the asset wiring in test_definitions.py (default lane).
pytestmark = pytest.mark.slow


def check_metadata(result: dg.ExecuteInProcessResult, name: str) -> dict[str, Any]:
    evaluation = next(e for e in result.get_asset_check_evaluations() if e.check_name == name)
    return {k: v.value for k, v in evaluation.metadata.items()}


def comparison_metadata(result: dg.ExecuteInProcessResult) -> dict[str, Any]:
    (materialization,) = result.asset_materializations_for_node("eval_comparison")
    return {k: v.value for k, v in materialization.metadata.items()}


def test_a_prompt_edit_leaves_decisions_green_and_shows_the_usage_change(
    tmp_path: Path, instance_with: InstanceWith, monkeypatch: pytest.MonkeyPatch
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    edit_writer_prompt(monkeypatch)
    result = materialize_synthetic(synthetic, tmp_path, instance_with("synthetic"))
    assert result.success  # usage differs: a warning, not a failure
    checks = check_results(result)
    assert checks["baseline_match"] is True and checks["thresholds"] is True
    assert checks["baseline_usage"] is False and checks["no_regression"] is True
    usage = check_metadata(result, "baseline_usage")
    assert usage["required"] is False and usage["compared"] is True
    assert usage["usage"].startswith("usage: input tokens 128809 → ") and "(in 28 case(s))" in usage["usage"]
    assert (
        "graft-eval run --set " in usage["accept_command"] and "--save-baseline " in usage["accept_command"]
    )
    match = check_metadata(result, "baseline_match")
    assert match["decisions_equal"] is True and match["changed_case_ids"] == []
    # one meaning of changed (issue 26 item 1): no changed cases, usage moved, on every check
    assert match["verdict"].startswith("no changed cases; usage moved (28 case(s)")
    evaluations = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert evaluations["baseline_match"].description == f"set synthetic: baseline {match['verdict']}"
    warning = evaluations["baseline_usage"]
    assert warning.severity == dg.AssetCheckSeverity.WARN and warning.description is not None
    assert warning.description.startswith(
        "set synthetic: usage moved (a warning; usage alone never makes a changed case): usage: input tokens"
    )
    comparison = comparison_metadata(result)
    assert comparison["rates_verdict"] == "no clear difference" and comparison["against"] == "baseline"
    assert comparison["verdict"] == "passed: no clear difference, no blocker"
    assert comparison["changed_cases"] == [] and comparison["blockers"] == []
    assert comparison["usage_moved"] is True
    assert "Changed cases: none; usage moved" in comparison["comparison"]
    # the change each rate could detect, as numbers, and beside every "no clear difference"
    detectable = comparison["detectable"]
    records = {r.data["rate"]: r.data for r in comparison["rates"].records}
    assert set(detectable) == set(records) and len(records) == 8
    assert detectable["flagRecall"] is None  # 2 cases with a flag: no change is detectable
    assert records["flagRecall"]["verdict"].endswith("(too few shared cases to detect any change)")
    for name, record in records.items():
        if name == "flagRecall":
            continue
        assert isinstance(detectable[name], float) and record["detectable"] == detectable[name]
        assert record["verdict"] == f"no clear difference (could detect changes of ≥ {detectable[name]:.4f})"
        assert f"could detect changes of ≥ {detectable[name]:.4f}" in comparison["comparison"]
    assert "scripted (fake) answers cannot reflect a prompt change" in comparison["comparison"]
    # the compare page beside the run's report.html: no case moved, the usage of 28 did
    page = Path(comparison["compare_html"])
    assert page.name == f"compare-{comparison['base_run_id']}.html"
    assert page.parent.name == comparison["new_run_id"] and (page.parent / "report.html").is_file()
    html = page.read_text()
    for group in ("newly-under", "fixed", "other-changes", "flaky"):
        assert f'id="{group}" data-count="0"' in html
    assert 'id="usage-only" data-count="28"' in html


def test_usage_blocks_where_thresholds_json_says_so(
    tmp_path: Path, instance_with: InstanceWith, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graft_eval_pipeline.defs.assets import evaluation
    from graft_eval_pipeline.evalset.sets.paths import THRESHOLDS_FILE

    thresholds = json.loads(THRESHOLDS_FILE.read_text())
    thresholds["synthetic"]["matchBaselineUsage"] = True
    thresholds["synthetic"]["nonInferiority"] = {"underClassificationFinal": 0.2}
    (tmp_path / "thresholds.json").write_text(json.dumps(thresholds))
    monkeypatch.setattr(evaluation, "THRESHOLDS_FILE", tmp_path / "thresholds.json")
    synthetic = copy_synthetic(tmp_path, baseline=True)
    edit_writer_prompt(monkeypatch)
    result = materialize_synthetic(synthetic, tmp_path, instance_with("synthetic"))
    assert not result.success
    assert check_results(result)["baseline_usage"] is False
    assert check_metadata(result, "baseline_usage")["required"] is True
    assert check_results(result)["baseline_match"] is True
    # the margins come from the same file: the edit moved no class, so within the margin
    (margin,) = comparison_metadata(result)["non_inferiority"]
    assert (margin["name"], margin["margin"], margin["verdict"]) == (
        "underClassificationFinal",
        0.2,
        "not worse (within margin)",
    )
    assert (
        "underClassificationFinal: not worse (within margin) (margin 0.2000)"
        in comparison_metadata(result)["comparison"]
    )


def test_changed_decisions_fail_the_match_and_the_comparison_still_explains_them(
    tmp_path: Path, instance_with: InstanceWith
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    baseline = synthetic.parent / "baselines" / "synthetic.json"
    data = json.loads(baseline.read_text())
    row = next(r for r in data["cases"] if r["id"] == "syn-004-ci-workflow")
    row["final"] = "logic"
    baseline.write_text(json.dumps(data, indent=2) + "\n")

    result = materialize_synthetic(synthetic, tmp_path, instance_with("synthetic"))
    assert not result.success
    checks = check_results(result)
    assert checks["baseline_match"] is False and checks["no_regression"] is True
    match = check_metadata(result, "baseline_match")
    assert match["changed_case_ids"] == ["syn-004-ci-workflow"] and match["changed_cases"] == 1
    assert match["changed_fields"] == ["syn-004-ci-workflow: final logic → sensitive"]
    assert "graft-eval run --set " in match["accept_command"]
    comparison = comparison_metadata(result)
    assert (
        comparison["changed_cases"] == ["syn-004-ci-workflow"]
        and comparison["rates_verdict"] == "no clear difference"
    )
    (report_path,) = (synthetic / "runs").glob("*/report.json")
    assert comparison["new_run_id"] == load_report(report_path).run_id  # one run id for both
    assert "## Accepting the change" in (report_path.parent / "report.md").read_text()


def test_without_a_baseline_the_comparison_uses_the_previous_report(
    tmp_path: Path, instance_with: InstanceWith
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    (synthetic.parent / "baselines" / "synthetic.json").unlink()
    instance = instance_with("synthetic")
    first = materialize_synthetic(synthetic, tmp_path, instance)
    assert comparison_metadata(first)["compared"] is False
    assert check_results(first)["no_regression"] is True
    second = materialize_synthetic(synthetic, tmp_path, instance)
    comparison = comparison_metadata(second)
    assert comparison["compared"] is True and comparison["against"] == "previous report"
    first_run_id = first.asset_materializations_for_node("eval_report")[0].metadata["run_id"].value
    assert comparison["base_run_id"] == first_run_id != comparison["new_run_id"]
    assert comparison["rates_verdict"] == "no clear difference"
    assert "| underClassificationFinal | lower | 0.0000 (0/30) | 0.0000 (0/30) |" in comparison["comparison"]


def test_a_pilot_partition_report_html_has_panel_facts_and_no_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance_with: InstanceWith
) -> None:
    """eval_report reads the pilot's sealed card results back for the panels' facts only."""
    from graft_eval_pipeline.defs.resources import CaseSetsResource
    from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
    from graft_eval_pipeline.evalset.sets.store import write_case
    from graft_eval_pipeline_tests.builders import (
        make_file,
        make_inputs,
        make_label,
        make_pilot_case,
        make_pilot_set,
    )
    from graft_eval_pipeline_tests.defs.test_definitions import EVALUATION, EXPORT, resources
    from graft_eval_pipeline_tests.report.test_html_report import SECRET_PATH, SECRET_TITLE, case_data

    key = generate_key()
    monkeypatch.setenv("GRAFT_EVAL_KEY", key)
    cs = make_pilot_set(tmp_path / "pilots" / "pilot-acme", key=parse_key(key))
    inputs = make_inputs(
        [make_file(SECRET_PATH, patch="@@ -1 +1 @@\n-old ledger line\n+new ledger line")],
        pr={"title": SECRET_TITLE, "body": "Rotates the ledger key.", "number": 413},
    )
    write_case(cs, make_pilot_case(pr_number=413, inputs=inputs, labels=[make_label(risk="logic")]))
    sets = CaseSetsResource(
        eval_dir=str(tmp_path / "pilots"),
        synthetic_dir=str(tmp_path / "none"),
        eval_key=dg.EnvVar("GRAFT_EVAL_KEY"),
    )
    result = dg.materialize(
        [*EVALUATION, *EXPORT],
        selection=EVALUATION,
        partition_key="pilot-acme",
        instance=instance_with("pilot-acme"),
        resources=resources(sets),
        raise_on_error=False,
    )
    (report,) = result.asset_materializations_for_node("eval_report")
    html = Path(str(report.metadata["report_html"].value)).read_text()
    data = case_data(html)
    col = {name: i for i, name in enumerate(data["cols"])}
    (row,) = data["rows"]
    assert row[col["facts"]] is not None and data["content"] == {}
    assert "ledger" not in html and "signing" not in html and SECRET_TITLE not in html


def test_no_regression_failing_on_a_blocker_says_so(tmp_path: Path, instance_with: InstanceWith) -> None:
    """Issue 26 item 5: a blocker failed the check with no description and "no clear difference"."""
    synthetic = copy_synthetic(tmp_path, baseline=True)
    cs = open_set(synthetic, None)
    case = read_case(cs, "syn-001-docs-typo")  # the fake model keeps it trivial: newly under sensitive gold
    write_case(
        cs, case.model_copy(update={"labels": [case.labels[0].model_copy(update={"risk": "sensitive"})]})
    )
    result = materialize_synthetic(synthetic, tmp_path, instance_with("synthetic"))
    evaluation = next(e for e in result.get_asset_check_evaluations() if e.check_name == "no_regression")
    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.ERROR
    assert evaluation.description == "failed: 1 blocker(s) (syn-001-docs-typo), whatever the rates say"
    comparison = comparison_metadata(result)
    assert comparison["verdict"] == evaluation.description
    assert comparison["rates_verdict"] == "no clear difference"  # one case: the rates cannot tell
    assert [b["id"] for b in comparison["blockers"]] == ["syn-001-docs-typo"]
