"""A past run read back for a person.

Its report, diffed with the set's baseline, its cases and its report.html.

What `graft-eval cases` lists and `graft-eval view` renders; ids, classes and rules only (E8).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from graft_eval_pipeline.card import CardResult
from graft_eval_pipeline.evalset.report.baseline import BaselineDiff, diff_reports
from graft_eval_pipeline.evalset.report.case_kinds import CaseKind, CaseLine, case_lines
from graft_eval_pipeline.evalset.report.files import HTML_FILE, REPORT_FILE, load_any_report, load_report
from graft_eval_pipeline.evalset.report.html import set_html
from graft_eval_pipeline.evalset.report.publish import default_baseline_path, live_comparison
from graft_eval_pipeline.evalset.report.runs import find_run
from graft_eval_pipeline.evalset.report.thresholds import load_thresholds, margins_for
from graft_eval_pipeline.evalset.scoring import EvalReport
from graft_eval_pipeline.evalset.sets import THRESHOLDS_FILE, CaseSet, EvalError, write_report_file


@dataclass(frozen=True)
class RunView:
    cs: CaseSet
    run_dir: Path
    report: EvalReport
    diff: BaselineDiff | None
    baseline: Path  # where the set's baseline is (or would be)

    @property
    def html_path(self) -> Path:
        return self.run_dir / HTML_FILE

    def write_html(self, results: Mapping[str, CardResult] | None = None) -> tuple[Path, list[str]]:
        """(Re)write the run's report.html.

        Its history up to this run, today's baseline verdict (and a live run's comparison with that
        baseline); with a warning for each past report the history left out.
        """
        baseline = load_any_report(self.baseline) if self.baseline.is_file() else None
        margins = (
            margins_for(self.report, load_thresholds(THRESHOLDS_FILE)) if THRESHOLDS_FILE.is_file() else {}
        )
        comparison = live_comparison(baseline, self.report, margins)
        html = set_html(self.cs, self.report, self.diff, results, comparison=comparison)
        return write_report_file(self.run_dir, HTML_FILE, html.html), html.warnings

    def cases(self, only: CaseKind | None = None) -> list[CaseLine]:
        """Every case of the run, or one kind; `changed` needs a baseline to compare with."""
        if only == "changed" and self.diff is None:
            raise EvalError(
                f"--only changed: set {self.report.set.set_id} has no baseline at {self.baseline}; "
                "save one with `graft-eval run --set <set> --save-baseline <path>`"
            )
        return case_lines(self.report, self.diff, only)


def open_run(cs: CaseSet, run_id: str | None = None) -> RunView:
    """Run `run_id` (default: the latest) of the set, diffed with the set's own baseline."""
    run_dir = find_run(cs, run_id)
    report = load_report(run_dir / REPORT_FILE)
    baseline = default_baseline_path(cs.dir, cs.meta)
    diff = diff_reports(load_report(baseline), report) if baseline.is_file() else None
    return RunView(cs, run_dir, report, diff, baseline)
