"""The whole evaluation in one call: harness, then metrics, then the report.

This is the one place that composes the stages (run → scoring → report), so the harness itself
needs nothing from the report. `graft-eval run` and the Dagster assets both end up here or in
the same three steps.
"""

from __future__ import annotations

from dataclasses import dataclass

from graft_eval_pipeline.card.result import CardResult
from graft_eval_pipeline.evalset.report import build_report
from graft_eval_pipeline.evalset.run import RunOptions, collector_policy, run_harness
from graft_eval_pipeline.evalset.scoring import EvalReport, compute_metrics


@dataclass(frozen=True)
class Evaluation:
    """The report, and the cards behind it (model prose: only the synthetic report.html shows them)."""

    report: EvalReport
    results: dict[str, CardResult]


def evaluate(options: RunOptions) -> Evaluation:
    """Harness, metrics and report in one call: what `graft-eval run` does before checking."""
    with collector_policy(options):  # a fake run keeps the collector paused through the report too
        harness = run_harness(options)
        return Evaluation(build_report(harness, compute_metrics(harness.rows)), harness.results)


def run_eval(options: RunOptions) -> EvalReport:
    """The report alone."""
    return evaluate(options).report
