"""`graft-eval ci` after a prompt edit: decisions judged, usage shown, the accepting command printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.sets.paths import REPO_ROOT, SYNTHETIC_BASELINE
from graft_eval_pipeline_tests.builders import copy_synthetic
from graft_eval_pipeline_tests.prompt_edit import edit_writer_prompt

pytestmark = pytest.mark.usefixtures("clean_env")
ACCEPT = "graft-eval run --set eval/synthetic --save-baseline eval/baselines/synthetic.json"


def test_a_one_phrase_prompt_edit_passes_ci_and_shows_the_usage_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO_ROOT)
    before = SYNTHETIC_BASELINE.read_bytes()
    fingerprint = edit_writer_prompt(monkeypatch)
    assert main(["ci", "--out", str(tmp_path / "ci")]) == 0
    out = capsys.readouterr().out
    assert (
        "baseline: no changed cases; usage moved (28 case(s), 3 report field(s)); context differs: prompt"
        in out
    )
    assert "  usage: input tokens 128809 → " in out and "not blocking unless thresholds.json says so" in out
    assert (
        "  prompt.promptFingerprint: 3653418f8a0dc15ba84f56ba18a78ee7881b20031c262aa9952eca3f9e4be987 → "
        f"{fingerprint}" in out
    )
    assert f"to accept these results as the baseline: {ACCEPT}" in out
    assert "thresholds: PASS" in out
    assert SYNTHETIC_BASELINE.read_bytes() == before


def test_changed_decisions_fail_ci_with_the_accepting_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO_ROOT)
    data = json.loads(SYNTHETIC_BASELINE.read_text())
    next(r for r in data["cases"] if r["id"] == "syn-004-ci-workflow")["final"] = "logic"
    (tmp_path / "b.json").write_text(json.dumps(data))
    assert main(["ci", "--baseline", str(tmp_path / "b.json"), "--out", str(tmp_path / "ci")]) == 1
    captured = capsys.readouterr()
    assert "baseline: decisions differ (1 changed case(s), " in captured.out
    assert "  syn-004-ci-workflow: final logic → sensitive" in captured.out
    accept = f"graft-eval run --set eval/synthetic --save-baseline {tmp_path / 'b.json'}"
    assert (
        "error: a threshold or the baseline match failed (see above); "
        f"if the change is intended, accept it: {accept}" in captured.err
    )


def test_the_accepting_command_makes_the_baseline_match_and_a_rerun_leaves_it_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    baseline = synthetic.parent / "baselines" / "synthetic.json"
    monkeypatch.chdir(synthetic.parent.parent)
    edit_writer_prompt(monkeypatch)
    assert main(["run", "--set", "eval/synthetic", "--baseline", str(baseline), "--check"]) == 0
    out = capsys.readouterr().out
    accept = "graft-eval run --set eval/synthetic --save-baseline eval/baselines/synthetic.json"
    assert f"to accept these results as the baseline: {accept}" in out
    assert main(accept.split()[1:]) == 0
    assert "baseline saved: eval/baselines/synthetic.json" in capsys.readouterr().out
    saved = baseline.read_bytes()
    assert main(["run", "--set", "eval/synthetic", "--baseline", str(baseline), "--check"]) == 0
    out = capsys.readouterr().out
    assert "baseline: matches" in out and "to accept" not in out
    assert main(accept.split()[1:]) == 0
    assert "baseline unchanged" in capsys.readouterr().out and baseline.read_bytes() == saved
