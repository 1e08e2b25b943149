"""The one-screen markdown brief of a run: the `report` metadata of the Dagster report asset.

Dagster shows markdown metadata in a dialog that focuses its Close button, at the bottom: a
longer text opens scrolled to its end. The brief fits one screen (verdicts, the main rates with
their counts, the worst cases), so it opens at its top; the full report is report.md and
report.html beside it. Ids, classes and counts only (E8).
"""

from __future__ import annotations

from graft_eval_pipeline.evalset.report.baseline import BaselineDiff
from graft_eval_pipeline.evalset.report.case_kinds import (
    FAILURE_KINDS,
    KIND_TITLES,
    cases_to_look_at,
    kind_counts,
)
from graft_eval_pipeline.evalset.report.headline import headline_metrics
from graft_eval_pipeline.evalset.report.render import baseline_line
from graft_eval_pipeline.evalset.report.thresholds import threshold_verdict
from graft_eval_pipeline.evalset.scoring import EvalReport

BRIEF_RATES = (
    "underClassificationFinal",
    "severeUnderClassificationFinal",
    "overClassificationFinal",
    "exactAccuracyFinal",
    "unavailableRate",
    "flagRecall",
)
BRIEF_CASES = 5


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def brief_markdown(report: EvalReport, diff: BaselineDiff | None) -> str:
    s = report.set
    failed = [t for t in report.thresholds if not t.passed]
    thresholds = (
        "none for this set kind"
        if not report.thresholds
        else "all pass"
        if not failed
        else ", ".join(f"{threshold_verdict(t)} {t.name}" for t in failed)
    )
    lines = [
        f"## Run {report.run_id}: set {s.set_id} ({s.kind}), {report.llm}",
        "",
        f"{s.cases} cases, {s.scored} scored. **Thresholds:** {thresholds}. "
        f"**Baseline:** {baseline_line(diff)}.",
        "",
        "| rate | value | cases |",
        "|---|---|---|",
    ]
    for h in headline_metrics(report.metrics):
        if h.name in BRIEF_RATES:
            count = f"{h.count[0]} of {h.count[1]}" if h.count is not None else ""
            lines.append(f"| {h.label} | {_rate(h.value)} | {count} |")
    looks = cases_to_look_at(report, diff)
    counts = kind_counts(looks)
    lines += [
        "",
        f"**Cases to look at: {len(looks)}** ("
        + ", ".join(f"{counts[k]} {KIND_TITLES[k]}" for k in FAILURE_KINDS)
        + ")",
    ]
    if looks:
        lines += ["", "| case | why | gold | final | status |", "|---|---|---|---|---|"]
        lines += [
            f"| {line.id} | {', '.join(line.kinds)} | {line.gold or '-'} | {line.final or '-'} "
            f"| {line.status} |"
            for line in looks[:BRIEF_CASES]
        ]
    more = f"{len(looks) - BRIEF_CASES} more cases, " if len(looks) > BRIEF_CASES else ""
    lines += ["", f"The whole report ({more}matrices, history): `report_html` and `report_md` below."]
    return "\n".join(lines) + "\n"
