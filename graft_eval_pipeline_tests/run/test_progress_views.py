"""The three views of a run's progress (issue 15 §4).

A line per case, summary lines every N cases with the failed or skipped cases, and the terminal bar
(rich on a fake terminal stream); none of them shows case content.
"""

from __future__ import annotations

import io
from collections.abc import Callable

from rich.console import Console

from graft_eval_pipeline.evalset.evaluate import run_eval
from graft_eval_pipeline.evalset.run.options import ProgressEvery
from graft_eval_pipeline.evalset.run.progress import CaseProgress
from graft_eval_pipeline.evalset.run.progress_bar import TerminalBar
from graft_eval_pipeline.evalset.sets.paths import SYNTHETIC_DIR
from graft_eval_pipeline.evalset.sets.store import open_set, read_cases
from graft_eval_pipeline_tests.builders import run_options

UNAVAILABLE = {"syn-016-too-large", "syn-027-writer-down"}  # the synthetic set's two unavailable cards


def ticking(step_ms: int) -> Callable[[], int]:
    """A clock that moves `step_ms` on every reading (a run that takes time)."""
    t = [0]

    def now_ms() -> int:
        t[0] += step_ms
        return t[0]

    return now_ms


def case_texts() -> list[str]:
    """Every title and path of the synthetic set: none may reach a progress view."""
    cases = read_cases(open_set(SYNTHETIC_DIR, None))
    return [c.inputs.pr.title for c in cases] + [f.path for c in cases for f in c.inputs.files]


def test_summary_mode_prints_a_line_per_n_cases_and_the_failed_ones_only() -> None:
    lines: list[str] = []
    opts = run_options(
        open_set(SYNTHETIC_DIR, None),
        progress=lines.append,
        progress_every=ProgressEvery(cases=10, seconds=3600),
        now_ms=ticking(1),
    )
    run_eval(opts)
    summaries = [line for line in lines if line.startswith("progress: ")]
    assert [s.split(" cases")[0] for s in summaries] == ["progress: 10 of 30", "progress: 20 of 30"]
    assert lines[-1].startswith("done: 30 of 30 cases (100 %), 2 unavailable, 0 skipped, 0 cached; ")
    assert all("cases/s" in s and "s left" in s for s in summaries)  # rate and ETA
    per_case = [line for line in lines if line.startswith("syn-")]
    assert {line.split()[0] for line in per_case} == UNAVAILABLE and len(per_case) == 2
    assert all(" unavailable (" in line for line in per_case)
    assert len(lines) == 5
    shown = "\n".join(lines)
    assert not [text for text in case_texts() if text in shown]


def test_summary_mode_lists_skipped_cases_up_to_the_limit_then_counts_them() -> None:
    lines: list[str] = []
    opts = run_options(
        open_set(SYNTHETIC_DIR, None),
        progress=lines.append,
        progress_every=ProgressEvery(cases=100, max_failures=2),
    )
    progress = CaseProgress(opts, 4)
    for n in range(4):
        progress.case(f"syn-90{n}-x", None, floor="logic", skipped="budget")
    progress.finish()
    assert lines == [
        "syn-900-x floor logic skipped (budget)",
        "syn-901-x floor logic skipped (budget) (further failed or skipped cases are only counted)",
        "done: 4 of 4 cases (100 %), 0 unavailable, 4 skipped, 0 cached; 4000 cases/s",
    ]


def test_the_bar_shows_count_rate_and_eta_on_a_terminal_and_no_case_content() -> None:
    screen = io.StringIO()
    bar = TerminalBar(Console(file=screen, force_terminal=True, width=160, color_system=None))
    lines: list[str] = []
    opts = run_options(open_set(SYNTHETIC_DIR, None), progress=lines.append, progress_bar=bar)
    run_eval(opts)
    bar.finish()  # again, as the CLI does after every run: harmless

    drawn = screen.getvalue()
    assert lines == []  # the bar replaces the lines
    assert "30/30" in drawn and "100%" in drawn
    assert "cases/s" in drawn and "ETA" in drawn and "0:00:00" in drawn
    assert "2 unavailable, 0 skipped, 0 cached" in drawn
    for case_id in UNAVAILABLE:  # the failed cases are printed above the bar, ids and classes only
        assert f"{case_id} floor sensitive" in drawn or f"{case_id} floor trivial" in drawn
    assert "syn-001-docs-typo" not in drawn  # no line per case
    assert not [text for text in case_texts() if text in drawn]
    assert "\x1b[?25l" in drawn and drawn.rstrip().endswith("\x1b[?25h")  # the cursor comes back


def test_a_bar_that_was_never_started_prints_notes_plainly_and_finishes_quietly() -> None:
    screen = io.StringIO()
    bar = TerminalBar(Console(file=screen, force_terminal=True, width=80, color_system=None))
    bar.advance(3, "ignored")
    bar.note("syn-001-a floor logic skipped (budget)")
    bar.finish()
    assert screen.getvalue() == "syn-001-a floor logic skipped (budget)\n"
