"""`graft-eval history` (issue 15, "done when").

How the headline rates moved over a set's last runs, from the CLI: run id, mode, prompt version and
fingerprint prefix, engine fingerprint prefix, trials, k/n and value (under-classification with its
upper bound), the verdict; ids and numbers only.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.report.files import load_report
from graft_eval_pipeline.evalset.report.runs import run_dirs
from graft_eval_pipeline.evalset.sets.store import open_set, read_cases
from graft_eval_pipeline_tests.builders import copy_synthetic

pytestmark = pytest.mark.usefixtures("clean_env")

SUBSET = ["syn-027-writer-down", "syn-029-pure-rename", "syn-001-docs-typo"]
LEGACY = Path(__file__).resolve().parent.parent / "report" / "data" / "report-v1.json"


def three_runs(tmp_path: Path) -> tuple[Path, list[Path]]:
    """All cases, a subset (other rates, another case-set hash), all cases again in two trials."""
    synthetic = copy_synthetic(tmp_path, baseline=True)
    assert main(["run", "-q", "--set", str(synthetic)]) == 0
    assert main(["run", "-q", "--set", str(synthetic), "--cases", ",".join(SUBSET)]) == 0
    assert main(["run", "-q", "--set", str(synthetic), "--trials", "2"]) == 0
    runs = run_dirs(synthetic)
    assert len(runs) == 3
    return synthetic, runs


def cell(report_dir: Path, name: str) -> str:
    """What the table should show for one rate of one run, from that run's report.json."""
    rate = getattr(load_report(report_dir / "report.json").metrics, name)
    text = f"{rate.k}/{rate.n} {rate.value:.3f}"
    upper = getattr(rate, "upper95", None)
    return text + (f" ≤ {upper:.3f}" if upper is not None else "")


def test_history_lists_the_last_runs_oldest_first_with_counts_values_and_bounds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic, runs = three_runs(tmp_path)
    capsys.readouterr()
    assert main(["history", "--set", str(synthetic)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("set synthetic: the last 3 of 3 run(s), oldest first")
    assert lines[1].split()[:7] == ["run", "mode", "prompt", "engine", "trials", "under", "(final)"]
    rows = lines[2:5]
    assert [row.split()[0].rstrip("*") for row in rows] == [r.name for r in runs]
    for row, run, trials in zip(rows, runs, ["1", "1", "2"], strict=True):
        for name in ("under_classification_final", "over_classification_final", "exact_accuracy_final"):
            assert cell(run, name) in row
        prompt = load_report(run / "report.json").prompt
        assert prompt.engine_fingerprint is not None
        assert row.split()[1:6] == [
            "fake",
            prompt.prompt_version,
            prompt.prompt_fingerprint[:8],
            prompt.engine_fingerprint[:8],
            trials,
        ]
    assert "≤ 0.095" in rows[0]  # 0/30: the upper bound, not a bare zero
    assert cell(runs[0], "over_classification_final") != cell(runs[1], "over_classification_final")  # moved
    # the subset ran on other cases than the latest run: marked; full runs match the baseline
    assert rows[1].split()[0].endswith("*") and not rows[0].split()[0].endswith("*")
    assert rows[0].endswith("PASS") and rows[1].endswith("FAIL") and rows[2].endswith("PASS")
    assert "* ran on other cases or labels than the latest run" in out
    assert "fake: the model's answers are scripted" in out
    # ids and numbers only: no case id, title or path
    cases = read_cases(open_set(synthetic, None))
    assert "syn-" not in out
    assert not [c.id for c in cases if c.inputs.pr.title in out]


def test_history_last_and_json_hold_every_headline_rate_of_each_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic, runs = three_runs(tmp_path)
    capsys.readouterr()
    assert main(["history", "--set", str(synthetic), "--last", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["setId"], data["runsOnDisk"], data["unreadable"]) == ("synthetic", 3, 0)
    assert [r["runId"] for r in data["runs"]] == [r.name for r in runs[1:]]
    for shown, run in zip(data["runs"], runs[1:], strict=True):
        report = load_report(run / "report.json")
        assert (shown["llm"], shown["pass"], shown["caseSetHash"]) == (
            report.llm,
            report.passed,
            report.set.case_set_hash,
        )
        assert (shown["promptVersion"], shown["promptFingerprint"], shown["engineFingerprint"]) == (
            report.prompt.prompt_version,
            report.prompt.prompt_fingerprint,
            report.prompt.engine_fingerprint,
        )
        assert shown["trials"] == (report.trials.trials if report.trials is not None else 1)
        under = report.metrics.under_classification_final
        assert shown["rates"]["underClassificationFinal"] == {
            "k": under.k,
            "n": under.n,
            "value": under.value,
            "ci95": list(under.ci95) if under.ci95 else None,
            "upper95": under.upper95,
        }
        assert len(shown["rates"]) == 14 and shown["rates"]["exactAccuracyFinal"]["upper95"] is None
    assert "syn-" not in json.dumps(data)

    assert main(["history", "--set", str(synthetic), "--last", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("set synthetic: the last 1 of 3 run(s)") and runs[0].name not in out


def test_history_leaves_out_an_unreadable_report_and_reads_a_version_1_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    legacy = json.loads(LEGACY.read_text())
    (synthetic / "runs" / legacy["runId"]).mkdir(parents=True)
    shutil.copy(LEGACY, synthetic / "runs" / legacy["runId"] / "report.json")
    assert main(["run", "-q", "--set", str(synthetic)]) == 0
    assert main(["run", "-q", "--set", str(synthetic)]) == 0
    broken = run_dirs(synthetic)[1]
    (broken / "report.json").write_text('{"runId": "x", "metrics": ')
    capsys.readouterr()

    assert main(["history", "--set", str(synthetic)]) == 0
    out, err = capsys.readouterr()
    assert "the last 2 of 3 run(s)" in out and broken.name not in out
    assert f"warning: runs/{broken.name}/report.json: not valid JSON" in err
    assert "left out of the history" in err
    legacy_row = next(line for line in out.splitlines() if line.startswith(legacy["runId"]))
    # version 1 held bare values: the value, no k/n
    assert f"{legacy['metrics']['underClassificationFinal']:.3f}" in legacy_row and "/30" not in legacy_row


def test_history_of_a_set_without_runs_says_so_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    assert main(["history", "--set", str(synthetic)]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "set synthetic has no run yet" in err
    assert main(["history", "--set", str(synthetic), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == []
    assert main(["history", "--set", str(synthetic), "--last", "0"]) == 2
