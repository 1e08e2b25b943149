"""`graft-eval run`'s progress on stderr (issue 15 §4).

A bar on a terminal, summary lines otherwise, nothing with --quiet; ids and classes only.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.cli import run as cli_run
from graft_eval_pipeline.evalset.run import options as run_options
from graft_eval_pipeline.evalset.sets.paths import SYNTHETIC_DIR
from graft_eval_pipeline_tests.live_fakes import GOAL_MARK, FakeLive, live_set

pytestmark = pytest.mark.usefixtures("clean_env", "no_network")


def fake_terminal(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """Make the run believe stderr is a terminal: the bar is drawn on the returned stream."""
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=160, color_system=None)
    monkeypatch.setattr(cli_run, "TERMINAL_CONSOLE", lambda: console)
    return screen


def run_synthetic(tmp_path: Path, *extra: str) -> int:
    return main(["run", "--set", str(SYNTHETIC_DIR), "--out", str(tmp_path / "out"), *extra])


def progress_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith(("progress: ", "done: ", "syn-"))]


def test_not_on_a_terminal_the_run_prints_summary_lines_and_the_failed_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [0]

    def slow_clock() -> int:  # each reading 100 ms later: a run of a few seconds
        clock[0] += 100
        return clock[0]

    monkeypatch.setattr(run_options, "monotonic_ms", slow_clock)
    assert run_synthetic(tmp_path) == 0
    lines = progress_lines(capsys.readouterr().err)
    summaries = [line for line in lines if line.startswith("progress: ")]
    # none in the first second, then one per tenth of the run
    assert 1 <= len(summaries) <= 9 and summaries[0].startswith("progress: 12 of 30 cases (40 %)")
    assert lines[-1].startswith("done: 30 of 30 cases (100 %), 2 unavailable")
    assert sorted(line.split()[0] for line in lines if line.startswith("syn-")) == [
        "syn-016-too-large",
        "syn-027-writer-down",
    ]


def test_quiet_prints_no_progress_but_the_summary_still_goes_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    screen = fake_terminal(monkeypatch)
    assert run_synthetic(tmp_path, "--quiet") == 0
    out, err = capsys.readouterr()
    assert err == "" and screen.getvalue() == ""
    assert "thresholds: PASS" in out and (tmp_path / "out" / "report.json").is_file()
    assert main(["ci", "-q", "--out", str(tmp_path / "ci")]) == 0
    assert capsys.readouterr().err == ""


def test_on_a_terminal_the_run_draws_a_bar_with_count_and_eta_and_no_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    screen = fake_terminal(monkeypatch)
    assert run_synthetic(tmp_path) == 0
    drawn = screen.getvalue()
    assert "30/30" in drawn and "ETA" in drawn and "cases/s" in drawn
    assert "syn-016-too-large floor sensitive final sensitive unavailable (too_large)" in drawn
    assert "syn-001-docs-typo" not in drawn
    assert progress_lines(capsys.readouterr().err) == []  # the bar, not the lines


def test_a_quiet_live_run_still_prints_the_estimate_and_never_case_content(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
    client = FakeLive()
    monkeypatch.setattr(cli_run, "LLM_FACTORY", lambda _env: client)
    cs = live_set(tmp_path, 3)
    assert main(["run", "--set", str(cs.dir), "--live", "--yes", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert err.startswith("estimate: 3 case(s) to call, 0 cached")
    assert progress_lines(err) == [] and len(err.splitlines()) == 1
    assert GOAL_MARK not in out + err and len(client.requests) > 0
