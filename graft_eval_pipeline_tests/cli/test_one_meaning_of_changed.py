"""One meaning of "changed" (issue 26 item 1).

After a wording-only prompt edit no class moves and the token counts do, and every surface says "no
changed cases, usage moved": report.json, report.md, report.html, `cases --only changed`, `summary` and
`compare`. (The Dagster checks say it too: defs/test_comparison_asset.py.) One decision moved instead is a
changed case on each.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.report.files import load_report
from graft_eval_pipeline_tests.builders import copy_synthetic
from graft_eval_pipeline_tests.prompt_edit import edit_writer_prompt

pytestmark = pytest.mark.usefixtures("clean_env")


def run_dir(synthetic: Path) -> Path:
    (found,) = (synthetic / "runs").iterdir()
    return found


def surfaces(synthetic: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """What each surface says of the latest run against the set's baseline."""
    capsys.readouterr()
    assert main(["cases", "--set", str(synthetic), "--only", "changed", "--json"]) == 0
    cases = capsys.readouterr().out
    assert main(["summary", "--set", str(synthetic)]) == 0
    summary = capsys.readouterr().out
    assert main(["compare", "--set", str(synthetic)]) == 0  # no regression, no blocker
    compare = capsys.readouterr().out
    folder = run_dir(synthetic)
    return {
        "cases": cases,
        "summary": summary,
        "compare": compare,
        "md": (folder / "report.md").read_text(),
        "html": (folder / "report.html").read_text(),
    }


def test_a_wording_only_prompt_edit_gives_no_changed_cases_and_usage_moved_on_every_surface(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    edit_writer_prompt(monkeypatch)
    assert main(["run", "--set", str(synthetic), "-q"]) == 0

    report = load_report(run_dir(synthetic) / "report.json")
    assert report.baseline is not None
    assert report.baseline.changed_cases == [] and report.baseline.usage_moved
    assert report.baseline.usage_cases == 28
    assert {m.name for m in report.baseline.usage} >= {"input tokens", "cost USD"}
    assert report.baseline.verdict.startswith("no changed cases; usage moved (28 case(s)")

    said = surfaces(synthetic, capsys)
    assert json.loads(said["cases"])["cases"] == []
    assert "baseline: no changed cases; usage moved (28 case(s), 3 report field(s))" in said["summary"]
    assert "changed cases: none; usage moved" in said["compare"]
    md = said["md"]
    assert "- Baseline: no changed cases; usage moved (28 case(s)" in md
    assert md.split("## Changed cases\n\n")[1].startswith("None.")
    assert "## Usage moved\n\nNot a changed case: usage: input tokens 128809 → " in md
    assert "| changed" not in md and ", changed |" not in md  # no case tagged changed in the table
    html = said["html"]
    badge = re.search(r'<span class="badge (\w+)" id="baseline-verdict">([^<]*)</span>', html)
    assert badge is not None and badge.group(1) == "warn"
    assert badge.group(2).startswith("baseline: no changed cases; usage moved (28 case(s)")
    assert not re.search(r'data-kinds="[^"]*\bchanged\b', html)
    assert "changed since the baseline (0)" in html


def test_one_moved_class_is_one_changed_case_on_every_surface(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    baseline = synthetic.parent / "baselines" / "synthetic.json"
    data = json.loads(baseline.read_text())
    row = next(r for r in data["cases"] if r["id"] == "syn-004-ci-workflow")
    row["final"] = "logic"
    row["usage"]["inputTokens"] += 1  # usage moves too, in the same case
    baseline.write_text(json.dumps(data))
    assert main(["run", "--set", str(synthetic), "-q"]) == 0  # without --check a failed match exits 0
    report = load_report(run_dir(synthetic) / "report.json")
    assert report.baseline is not None and report.baseline.changed_cases == ["syn-004-ci-workflow"]

    said = surfaces(synthetic, capsys)
    assert [c["id"] for c in json.loads(said["cases"])["cases"]] == ["syn-004-ci-workflow"]
    assert "baseline: decisions differ (1 changed case(s), " in said["summary"]
    assert "  syn-004-ci-workflow: final logic → sensitive" in said["summary"]
    assert "changed cases: 1; usage moved" in said["compare"]
    assert "  syn-004-ci-workflow: final logic → sensitive" in said["compare"]
    assert "- syn-004-ci-workflow: final logic → sensitive" in said["md"]
    html = said["html"]
    assert 'id="baseline-verdict">baseline: decisions differ (1 changed case(s)' in html
    assert len(re.findall(r'data-kinds="[^"]*\bchanged\b', html)) == 1
