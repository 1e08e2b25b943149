"""The three views of a run's progress (issue 15 §4).

A line per case, summary lines every N cases with the failed or skipped cases, and the terminal bar
(rich on a fake terminal stream); none of them shows case content.
"""

from __future__ import annotations

import io
from collections.abc import Callable

from rich.console import Console

from graft_eval_pipeline.card import Models
from graft_eval_pipeline.evalset.evaluate import run_eval
from graft_eval_pipeline.evalset.run.harness import fake_result
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
        now_ms=ticking(100),  # a run of a few seconds
    )
    run_eval(opts)
    assert len(lines) == 3  # one message a summary: the failed cases ride with the next one
    # Each message starts with its summary; the failed cases since the last one come below it.
    summaries = [message.split("\n")[0] for message in lines]
    assert [s.split(" cases")[0] for s in summaries[:2]] == ["progress: 10 of 30", "progress: 20 of 30"]
    assert summaries[2].startswith("done: 30 of 30 cases (100 %), 2 unavailable, 0 skipped, 0 cached; ")
    assert all("cases/s" in s and "s left" in s for s in summaries[:2])  # rate and ETA
    per_case = [line for message in lines for line in message.split("\n")[1:]]
    assert {line.split()[0] for line in per_case} == UNAVAILABLE and len(per_case) == 2
    assert all(" unavailable (" in line for line in per_case)
    shown = "\n".join(lines)
    assert not [text for text in case_texts() if text in shown]


def test_summary_mode_lists_skipped_cases_up_to_the_limit_then_counts_them() -> None:
    lines: list[str] = []
    opts = run_options(
        open_set(SYNTHETIC_DIR, None),
        progress=lines.append,
        progress_every=ProgressEvery(cases=100, max_failures=2),
        now_ms=ticking(500),
    )
    progress = CaseProgress(opts, 4)
    for n in range(4):
        progress.case(f"syn-90{n}-x", None, floor="logic", skipped="budget")
    progress.finish()
    assert lines == [
        "done: 4 of 4 cases (100 %), 0 unavailable, 4 skipped, 0 cached; 2 cases/s\n"
        "syn-900-x floor logic skipped (budget)\n"
        "syn-901-x floor logic skipped (budget) (further unavailable, skipped or under-classified cases "
        "are only counted)",
    ]


def test_a_step_under_a_second_logs_no_progress_and_no_eta_under_a_second() -> None:
    """Issue 26 item 5: a 0.2 s step logged ten "about 0 s left" events."""
    lines: list[str] = []
    opts = run_options(
        open_set(SYNTHETIC_DIR, None),
        progress=lines.append,
        progress_every=ProgressEvery(),
        now_ms=ticking(2),
    )
    run_eval(opts)
    shown = [line for message in lines for line in message.split("\n")]
    assert len(lines) == 1  # the failed cases, in one message at the end
    assert not [line for line in shown if line.startswith(("progress: ", "done: "))]
    assert {line.split()[0] for line in shown} == UNAVAILABLE  # the failed cases still show
    slow: list[str] = []
    progress = CaseProgress(
        run_options(
            open_set(SYNTHETIC_DIR, None),
            progress=slow.append,
            progress_every=ProgressEvery(),
            now_ms=ticking(300),
        ),
        20,
    )
    for n in range(20):
        progress.case(f"syn-9{n:02d}-x", None, floor="logic", skipped="budget")
    summaries = [message.split("\n")[0] for message in slow]
    assert 1 <= len(summaries) <= 9 and all("s left" in line for line in summaries[:-1])
    assert "about 0 s left" not in "\n".join(slow)


def test_under_classified_cases_are_noted_as_they_happen_with_ids_and_classes_only() -> None:
    screen = io.StringIO()
    bar = TerminalBar(Console(file=screen, force_terminal=True, width=160, color_system=None))
    lines: list[str] = []
    progress = CaseProgress(
        run_options(open_set(SYNTHETIC_DIR, None), progress=lines.append, progress_bar=bar), 2
    )
    fake = fake_result(read_cases(open_set(SYNTHETIC_DIR, None))[0], Models(), 1000)  # syn-001: final trivial
    progress.case("syn-001-docs-typo", fake, gold="logic")
    progress.case("syn-002-x", fake, gold="trivial")  # correct: not noted
    bar.finish()
    drawn = screen.getvalue()
    assert "syn-001-docs-typo floor trivial final trivial ok under-classified (gold logic)" in drawn
    assert "syn-002-x" not in drawn and "1 under-classified, 0 unavailable" in drawn
    assert lines == []


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
