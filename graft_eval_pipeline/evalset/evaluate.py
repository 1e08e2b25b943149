"""The whole evaluation in one call: harness, then metrics, then the report.

This is the one place that composes the stages (run → scoring → report), so the harness itself
needs nothing from the report. `graft-eval run` and the Dagster assets both end up here or in
the same three steps.
"""

from __future__ import annotations

from graft_eval_pipeline.evalset.report import build_report
from graft_eval_pipeline.evalset.run import RunOptions, collector_policy, run_harness
from graft_eval_pipeline.evalset.scoring import EvalReport, compute_metrics


def run_eval(options: RunOptions) -> EvalReport:
    """Harness, metrics and report in one call: what `graft-eval run` does before checking."""
    with collector_policy(options):  # a fake run keeps the collector paused through the report too
        harness = run_harness(options)
        return build_report(harness, compute_metrics(harness.rows))
