"""`graft-eval run` and `ci` (U-CLI-3, U-CLI-8) and the run flags."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.report.files import load_report
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.paths import SYNTHETIC_BASELINE, SYNTHETIC_DIR
from graft_eval_pipeline.evalset.sets.store import write_case
from graft_eval_pipeline_tests.builders import make_label, make_pilot_case, make_pilot_set

SYNTHETIC = SYNTHETIC_DIR
BASELINE = SYNTHETIC_BASELINE


pytestmark = pytest.mark.usefixtures("clean_env")


def test_U_CLI_3_check_passes_on_the_synthetic_set_and_fails_on_a_modified_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--set", str(SYNTHETIC), "--check", "--out", str(tmp_path / "ok")]) == 0
    out = capsys.readouterr()
    assert "baseline: matches" in out.out and "thresholds: PASS" in out.out
    # not a terminal: the two unavailable cases, not a line per case (summaries: test_run_progress.py)
    assert len([line for line in out.err.splitlines() if line.startswith("syn-")]) == 2
    assert sorted(p.name for p in (tmp_path / "ok").iterdir()) == [
        "cases.parquet",
        "report.html",
        "report.json",
        "report.md",
    ]

    data = json.loads(BASELINE.read_text())
    row = next(r for r in data["cases"] if r["id"] == "syn-004-ci-workflow")
    row["final"] = "logic"
    modified = tmp_path / "modified.json"
    modified.write_text(json.dumps(data))
    code = main(
        ["run", "--set", str(SYNTHETIC), "--baseline", str(modified), "--check", "--out", str(tmp_path / "x")]
    )
    assert code == 1
    out = capsys.readouterr()
    assert "syn-004-ci-workflow: final logic → sensitive" in out.out
    assert "FAIL: matchBaseline" in out.out and "error: a threshold or the baseline match failed" in out.err
    assert "syn-004-ci-workflow: final logic → sensitive" in (tmp_path / "x" / "report.md").read_text()

    # without --check the same run reports the failure but exits 0
    assert (
        main(["run", "--set", str(SYNTHETIC), "--baseline", str(modified), "--out", str(tmp_path / "y")]) == 0
    )


def test_ci_is_run_with_the_committed_baseline_and_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ci", "--out", str(tmp_path / "ci")]) == 0
    assert "baseline: matches" in capsys.readouterr().out
    assert load_report(tmp_path / "ci" / "report.json").set.cases == 30


def test_U_CLI_8_unknown_command_or_flag_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no-such-command"]) == 2
    assert "Usage:" in capsys.readouterr().err
    assert main(["run", "--set", str(SYNTHETIC), "--no-such-flag"]) == 2
    assert "Usage:" in capsys.readouterr().err
    assert main(["run"]) == 2  # --set is required
    assert "Usage:" in capsys.readouterr().err


def test_run_filters_cases_and_rejects_unknown_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "run",
            "--set",
            str(SYNTHETIC),
            "--cases",
            "syn-001-docs-typo,syn-004-ci-workflow",
            "--out",
            str(tmp_path / "a"),
        ]
    )
    assert code == 0
    report = load_report(tmp_path / "a" / "report.json")
    assert [r.id for r in report.cases] == ["syn-001-docs-typo", "syn-004-ci-workflow"]
    assert "not comparable" in capsys.readouterr().out  # another case set than the baseline

    assert main(["run", "--set", str(SYNTHETIC), "--tag", "injection", "--out", str(tmp_path / "b")]) == 0
    tagged = load_report(tmp_path / "b" / "report.json")
    assert tagged.cases and all("injection" in r.tags for r in tagged.cases)

    assert (
        main(["run", "--set", str(SYNTHETIC), "--cases", "syn-999-missing", "--out", str(tmp_path / "c")])
        == 2
    )
    assert "syn-999-missing" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


def _pilot_set(tmp_path: Path, key_b64: str) -> Path:
    set_dir = tmp_path / "evalroot" / "pilot-acme"
    cs = make_pilot_set(set_dir, key=parse_key(key_b64))
    write_case(cs, make_pilot_case(pr_number=412, labels=[make_label(risk="trivial")]))
    write_case(cs, make_pilot_case(pr_number=413, labels=[make_label(risk="logic")]))
    return set_dir


def test_pilot_run_uses_the_set_baseline_and_refuses_a_baseline_inside_git(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    key = generate_key()
    monkeypatch.setenv("GRAFT_EVAL_KEY", key)
    set_dir = _pilot_set(tmp_path, key)
    assert main(["run", "--set", str(set_dir), "--save-baseline", str(set_dir / "baseline.json")]) == 0
    out = capsys.readouterr().out
    assert "baseline: no baseline" in out
    run_dirs = list((set_dir / "runs").iterdir())
    assert len(run_dirs) == 1 and (run_dirs[0] / "report.md").is_file()

    # the second run finds <set>/baseline.json by default; two scored cases are too few to show
    # anything about under-classification (insufficient evidence, never a pass): exit 0 with
    # --check, 1 with --strict
    assert main(["run", "--set", str(set_dir), "--check"]) == 0
    out = capsys.readouterr().out
    assert "baseline: matches" in out and "INSUFFICIENT EVIDENCE: underClassificationFinal" in out
    assert main(["run", "--set", str(set_dir), "--check", "--strict"]) == 1

    (tmp_path / "repo" / ".git").mkdir(parents=True)
    inside = tmp_path / "repo" / "pilot-baseline.json"
    runs_before = len(list((set_dir / "runs").iterdir()))
    assert main(["run", "--set", str(set_dir), "--save-baseline", str(inside)]) == 2
    assert "inside a git working tree" in capsys.readouterr().err
    assert not inside.exists()
    assert len(list((set_dir / "runs").iterdir())) == runs_before  # refused before running anything

    monkeypatch.delenv("GRAFT_EVAL_KEY")
    assert main(["run", "--set", str(set_dir)]) == 2
    assert "GRAFT_EVAL_KEY is not set" in capsys.readouterr().err


def test_a_fake_run_writes_its_report_files_with_the_collector_paused_and_restores_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every automatic full collection would walk all rows a large run holds (issue 16)."""
    import gc

    from graft_eval_pipeline.cli import run as cli_run
    from graft_eval_pipeline.evalset.report import publish_run as real

    seen: list[bool] = []

    def publish(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(cli_run, "publish_run", publish)
    assert gc.isenabled()
    assert main(["run", "-q", "--set", str(SYNTHETIC), "--out", str(tmp_path / "out")]) == 0
    assert seen == [False] and gc.isenabled()


def test_the_baseline_and_history_are_read_once_before_the_first_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the last case only the work on its rows is left (issue 27).

    The report's inputs from disk are read before the harness starts, once; a damaged baseline
    stops the run before any case.
    """
    from graft_eval_pipeline.evalset import evaluate
    from graft_eval_pipeline.evalset.report import publish

    key = generate_key()
    monkeypatch.setenv("GRAFT_EVAL_KEY", key)
    set_dir = _pilot_set(tmp_path, key)
    assert main(["run", "--set", str(set_dir), "--save-baseline", str(set_dir / "baseline.json")]) == 0
    capsys.readouterr()

    events: list[str] = []

    def spied(real: Any, name: str) -> Any:
        def spy(*args: Any, **kwargs: Any) -> Any:
            events.append(name)
            return real(*args, **kwargs)

        return spy

    for module, name in (
        (publish, "load_any_report"),
        (publish, "earlier_history"),
        (evaluate, "run_harness"),
    ):
        monkeypatch.setattr(module, name, spied(getattr(module, name), name))
    assert main(["run", "--set", str(set_dir)]) == 0
    out = capsys.readouterr().out
    assert "baseline: matches" in out
    assert events == ["load_any_report", "earlier_history", "run_harness"]
    assert len(list((set_dir / "runs").iterdir())) == 2
    # this run's page (two runs of one second need not sort in order): the earlier run, then this
    report = Path(re.search(r"^report: (.+)$", out, re.M).group(1))  # type: ignore[union-attr]
    assert "The last 2 run(s) of set" in (report.parent / "report.html").read_text()

    events.clear()
    (set_dir / "baseline.json").write_bytes(b"\xff{not json")
    assert main(["run", "--set", str(set_dir)]) == 2
    err = capsys.readouterr().err
    assert "baseline.json" in err and len(err.strip().splitlines()) == 1
    assert events == ["load_any_report"]  # refused before the harness ran a case
    assert len(list((set_dir / "runs").iterdir())) == 2
