"""A past run read back for a person, and two runs side by side.

Its report, diffed with the set's baseline, its cases and its report.html; and the compare page
of two runs.

What `graft-eval cases` lists and `graft-eval view` renders; ids, classes and rules only (E8).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from graft_eval_pipeline.card import CardResult
from graft_eval_pipeline.evalset.compare import Comparison, compare_reports
from graft_eval_pipeline.evalset.report.baseline import BaselineDiff, diff_reports
from graft_eval_pipeline.evalset.report.case_kinds import CaseKind, CaseLine, case_lines
from graft_eval_pipeline.evalset.report.compare_page import compare_page
from graft_eval_pipeline.evalset.report.files import HTML_FILE, REPORT_FILE, load_any_report, load_report
from graft_eval_pipeline.evalset.report.html import set_html
from graft_eval_pipeline.evalset.report.locate import compare_paths
from graft_eval_pipeline.evalset.report.publish import default_baseline_path, live_comparison
from graft_eval_pipeline.evalset.report.runs import find_run
from graft_eval_pipeline.evalset.report.thresholds import load_thresholds, margins_for
from graft_eval_pipeline.evalset.scoring import EvalReport
from graft_eval_pipeline.evalset.sets import (
    THRESHOLDS_FILE,
    CaseSet,
    EvalError,
    check_output_target,
    write_report_file,
)


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
        thresholds = load_thresholds(THRESHOLDS_FILE) if THRESHOLDS_FILE.is_file() else {}
        comparison = live_comparison(baseline, self.report, margins_for(self.report, thresholds))
        block = thresholds.get(self.report.set.kind)
        limits = block.limits if block is not None else {}
        html = set_html(self.cs, self.report, self.diff, results, comparison=comparison, limits=limits)
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


def compare_file_name(base_run_id: str) -> str:
    """`compare-<base run id>.html`, written beside the new run's report.html."""
    return f"compare-{base_run_id}.html"


def report_href(report_json: Path, page_dir: Path) -> str | None:
    """A relative link from a page in `page_dir` to the report.html beside `report_json`.

    Only when that is a run folder's report (a baseline file has no report.html).
    """
    if report_json.name != REPORT_FILE:
        return None
    target = report_json.resolve().parent / HTML_FILE
    return Path(os.path.relpath(target, page_dir.resolve())).as_posix()


def write_compare_page(
    base: EvalReport,
    new: EvalReport,
    comparison: Comparison,
    out: Path,
    *,
    base_json: Path | None = None,
    new_json: Path | None = None,
) -> Path:
    """Write the compare page at `out` (atomically), linking each run's report.html it can."""
    page = compare_page(
        base,
        new,
        comparison,
        base_href=report_href(base_json, out.parent) if base_json is not None else None,
        new_href=report_href(new_json, out.parent) if new_json is not None else None,
    )
    return write_report_file(out.parent, out.name, page)


@dataclass(frozen=True)
class CompareView:
    path: Path
    comparison: Comparison


def view_comparison(
    base_ref: str | None, new_ref: str | None, cs: CaseSet | None, out: Path | None
) -> CompareView:
    """`graft-eval view --base <run> --new <run>`: the two runs compared and written as one page.

    With the set's margins from thresholds.json; at `out`, or beside the new run's report.html.
    """
    base_json, new_json = compare_paths(base_ref, new_ref, cs)
    base, new = load_report(base_json), load_report(new_json)
    thresholds = load_thresholds(THRESHOLDS_FILE) if THRESHOLDS_FILE.is_file() else {}
    comparison = compare_reports(base, new, margins=margins_for(new, thresholds))
    if out is None:
        if new_json.name != REPORT_FILE:
            raise EvalError(
                f"--new {new_ref}: not a run folder's report.json, so there is no run folder to write the "
                "compare page into; say where with --out <file.html>"
            )
        out = new_json.parent / compare_file_name(base.run_id)
    else:
        check_output_target(out, "--out")
    path = write_compare_page(base, new, comparison, out, base_json=base_json, new_json=new_json)
    return CompareView(path, comparison)
