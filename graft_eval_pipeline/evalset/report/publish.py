"""Evaluation reports (spec 6.6, E22, E23): build one, and publish a run (diff, check, write).

Reports hold ids, classes, rule ids, counts, booleans, tokens and cost only (E8), so they can be
printed, committed as a baseline (synthetic) and shown as Dagster metadata. The parts live
beside this module: `baseline` (diff, save), `thresholds` (6.5), `render` (report.md and the
summary), `files` (report.json, report.md, cases.parquet on disk) and `runs` (which run is the
latest).
"""

from __future__ import annotations

import importlib
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from graft_eval_pipeline.card import CardResult
from graft_eval_pipeline.evalset.compare import Comparison, compare_reports
from graft_eval_pipeline.evalset.report.baseline import BaselineDiff, accept_command, diff_reports
from graft_eval_pipeline.evalset.report.case_detail import CaseDetail
from graft_eval_pipeline.evalset.report.files import (
    REPORT_FILE,
    load_any_report,
    load_report,
    write_run_outputs,
)
from graft_eval_pipeline.evalset.report.history import RunHistory, earlier_history
from graft_eval_pipeline.evalset.report.html import set_html
from graft_eval_pipeline.evalset.report.legacy import ReportV1
from graft_eval_pipeline.evalset.report.render import baseline_summary, render_markdown, summary_text
from graft_eval_pipeline.evalset.report.runs import latest_run
from graft_eval_pipeline.evalset.report.thresholds import (
    ThresholdBlock,
    check_failed,
    check_thresholds,
    margins_for,
    with_thresholds,
)
from graft_eval_pipeline.evalset.scoring import (
    REPORT_INPUTS,
    REPORT_SCHEMA_VERSION,
    EvalReport,
    HarnessRun,
    LabelAgreement,
    Metrics,
    total_cost,
    trials_summary,
)
from graft_eval_pipeline.evalset.sets import (
    BASELINE_FILE,
    RUNS_DIR,
    CaseSet,
    EvalError,
    SetMeta,
    check_output_target,
)


def new_run_id(now: datetime, suffix: str | None = None) -> str:
    """`YYYYMMDDTHHMMSSZ-xxxx`: sortable by time, unique enough for two runs in one second."""
    return now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + (suffix or secrets.token_hex(2))


def build_report(
    harness: HarnessRun,
    metrics: Metrics,
    run_id: str | None = None,
    label_agreement: LabelAgreement | None = None,
    inputs: dict[str, str] | None = None,
) -> EvalReport:
    """The report before thresholds are checked (they need the baseline diff).

    `label_agreement` comes from the labeling stage (the caller composes the two); None when it
    was not computed. `inputs`: the run that produced each of REPORT_INPUTS (Dagster names
    them); by default all come from this report's own run, as in `graft-eval run`.
    """
    run_id = run_id or new_run_id(harness.created_at)
    return EvalReport(
        schema_version=REPORT_SCHEMA_VERSION,
        inputs=inputs or dict.fromkeys(REPORT_INPUTS, run_id),
        run_id=run_id,
        created_at=harness.created_at.astimezone(UTC).replace(microsecond=0),
        set=harness.set,
        prompt=harness.prompt,
        models=harness.models,
        llm=harness.llm,
        git=harness.git,
        run=harness.run,
        metrics=metrics,
        label_agreement=label_agreement,
        cases=sorted(harness.rows, key=lambda r: r.id),
        thresholds=[],
        passed=True,
        trials=(
            trials_summary(
                [*harness.rows, *harness.trial_rows],
                harness.trials,
                total_cost([*harness.rows, *harness.trial_rows]),
            )
            if harness.trials > 1
            else None
        ),
    )


def default_baseline_path(set_dir: Path, meta: SetMeta) -> Path:
    """Pilot sets keep their baseline inside the set; the synthetic one is committed beside it."""
    if meta.kind == "pilot":
        return Path(set_dir) / BASELINE_FILE
    return Path(set_dir).parent / "baselines" / f"{meta.set_id}.json"


def default_out_dir(set_dir: Path, report: EvalReport) -> Path:
    return Path(set_dir) / RUNS_DIR / report.run_id


@dataclass(frozen=True)
class CheckedRun:
    """A report with its thresholds checked against an optional baseline, ready to write."""

    report: EvalReport
    diff: BaselineDiff | None
    markdown: str
    comparison: Comparison | None = None  # live runs: the paired comparison with the baseline
    accept: str | None = None  # the command that makes these results the baseline

    @property
    def failed(self) -> bool:
        return check_failed(self.report.thresholds)

    @property
    def baseline_failed(self) -> bool:
        return any(t.name.startswith("matchBaseline") and not t.passed for t in self.report.thresholds)

    def summary(self) -> str:
        return summary_text(self.report, self.diff, self.report.thresholds, self.accept, self.comparison)


def live_comparison(
    baseline: EvalReport | ReportV1 | None, report: EvalReport, margins: dict[str, float] | None = None
) -> Comparison | None:
    """A live run case by case against its baseline, with the set kind's non-inferiority `margins`.

    Its answers vary, so equality says little. None for a fake run, a version-1 baseline (its rows
    are not CaseRows) or no case in common (the gate then falls back to equality, which fails).
    """
    if not isinstance(baseline, EvalReport) or report.llm != "live":
        return None
    try:
        return compare_reports(baseline, report, margins=margins)
    except EvalError:
        return None


BASELINE_GATES = ("matchBaseline", "regressionVsBaseline")


def accepting_helps(report: EvalReport, diff: BaselineDiff | None) -> bool:
    """Whether saving these results as the baseline could resolve anything.

    They differ from the baseline (or there is none), some case was scored, and no limit of
    thresholds.json fails outside a provisional block (a failing `max 0` fails against any baseline).
    """
    if report.set.scored == 0 or (diff is not None and diff.equal):
        return False
    return not any(
        not t.passed and not t.provisional and not t.name.startswith(BASELINE_GATES)
        for t in report.thresholds
    )


def check_run(
    report: EvalReport,
    baseline: EvalReport | ReportV1 | None,
    thresholds: dict[str, ThresholdBlock],
    strict: bool,
    accept_if_changed: str | None = None,
) -> CheckedRun:
    """Diff against the baseline, check the thresholds, record what changed, render report.md.

    What changed goes into report.json's `baseline` (changed cases, usage apart). Used by the CLI
    and the main job.

    A live run is also compared with the baseline case by case: its answers vary from run to run, so
    its baseline gate is the comparison's verdict rather than equality. `accept_if_changed`, the
    command that would make these results the baseline, is shown where accepting can help
    (`accepting_helps`).
    """
    diff = diff_reports(baseline, report) if baseline is not None else None
    comparison = live_comparison(baseline, report, margins_for(report, thresholds))
    checked = with_thresholds(report, check_thresholds(report, thresholds, diff, strict, comparison))
    checked = checked.model_copy(update={"baseline": baseline_summary(checked, diff)})
    accept = accept_if_changed if accepting_helps(checked, diff) else None
    return CheckedRun(checked, diff, render_markdown(checked, diff, accept, comparison), comparison, accept)


@dataclass(frozen=True)
class PublishedRun:
    checked: CheckedRun
    out_dir: Path
    baseline: Path  # the baseline compared with (it exists when `checked.diff` is not None)
    warnings: list[str] = field(default_factory=list)  # past reports the history left out, named


@dataclass(frozen=True)
class PriorRuns:
    """What a run's report reads from disk that the run itself does not change.

    The baseline it is diffed with (and a live run gated on) and the history of the runs before it.
    `graft-eval run` reads them before its first case, while it holds the set's writing lock (no
    other run of the set lands meanwhile), so its last case is followed only by the work that
    depends on the rows: metrics, diff, thresholds, rendering and the files. `libraries`, in a
    live run, imports on a thread what only its report needs (numpy, pyarrow: about 0.3 s) while
    the cases wait on the API.
    """

    baseline_path: Path
    baseline: EvalReport | ReportV1 | None
    earlier: RunHistory
    libraries: threading.Thread | None = field(default=None, compare=False)

    def ready(self) -> None:
        """Wait for the report's libraries (imported by then, unless the run took under 0.3 s)."""
        if self.libraries is not None:
            self.libraries.join()

    @property
    def gate(self) -> EvalReport | None:
        """The baseline a live run is gated on: a current report (a version-1 one is compared by value)."""
        return self.baseline if isinstance(self.baseline, EvalReport) else None


# What a live run's report imports (lazily: the first case need not wait): numpy for the paired
# comparison, pyarrow for cases.parquet.
REPORT_LIBRARIES = ("numpy", "pyarrow.json", "pyarrow.parquet")


def _import_report_libraries() -> None:
    for name in REPORT_LIBRARIES:
        importlib.import_module(name)


def read_prior(
    cs: CaseSet, baseline: Path | None = None, *, before: str | None = None, warm: bool = False
) -> PriorRuns:
    """The baseline (`baseline`, else the set's own) and the history of the runs on disk.

    `before`: only the runs before that run id (a report published again, as a retried Dagster
    step does, is not its own history); None: every run on disk, as before a run's first case.

    `warm` (a live run) also starts importing the report's libraries on a thread (not a daemon:
    an interpreter never exits halfway through an import). A fake run does not: its cases keep
    the interpreter busy, so an import beside them would only take turns with them.
    """
    path = baseline or default_baseline_path(cs.dir, cs.meta)
    found = load_any_report(path) if path.is_file() else None
    earlier = earlier_history(cs, before)
    libraries = None
    if warm:
        libraries = threading.Thread(target=_import_report_libraries, name="report-libraries")
        libraries.start()
    return PriorRuns(path, found, earlier, libraries)


def publish_run(
    cs: CaseSet,
    report: EvalReport,
    *,
    thresholds: dict[str, ThresholdBlock],
    strict: bool,
    baseline: Path | None = None,
    out: Path | None = None,
    results: Mapping[str, CardResult] | None = None,
    details: Mapping[str, CaseDetail] | None = None,
    prior: PriorRuns | None = None,
) -> PublishedRun:
    """Diff against the baseline (default: the set's own), check, write the run's four files.

    The one path from a report to disk, shared by `graft-eval run` and the Dagster report asset.
    `results` (the run's cards), or `details` (each case's title and card, kept as the run went),
    only serve the synthetic set's report.html. `prior`: the baseline and history as read before
    the run (`read_prior`), else they are read now.
    """
    if out is not None:
        check_output_target(out, "--out")
    prior = prior or read_prior(cs, baseline, before=report.run_id)
    prior.ready()
    accept = accept_command(cs.dir, prior.baseline_path, live=report.llm == "live")
    checked = check_run(report, prior.baseline, thresholds, strict, accept)
    out_dir = out or default_out_dir(cs.dir, checked.report)
    block = thresholds.get(report.set.kind)
    limits = block.limits if block is not None else {}
    html = set_html(
        cs, checked.report, checked.diff, results, details, checked.comparison, limits, prior.earlier
    )
    write_run_outputs(out_dir, checked.report, checked.markdown, html.html)
    return PublishedRun(checked, out_dir, prior.baseline_path, html.warnings)


def latest_report_summary(cs: CaseSet) -> str:
    """The summary of the set's latest run (runs.py), diffed with the set's baseline."""
    path = latest_run(cs) / REPORT_FILE
    report = load_report(path)
    baseline_path = default_baseline_path(cs.dir, cs.meta)
    diff = diff_reports(load_any_report(baseline_path), report) if baseline_path.is_file() else None
    accept = (
        accept_command(cs.dir, baseline_path, report.llm == "live") if accepting_helps(report, diff) else None
    )
    return summary_text(report, diff, report.thresholds, accept) + f"report: {path}\n"
