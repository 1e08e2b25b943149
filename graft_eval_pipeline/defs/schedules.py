"""Schedules: the synthetic set is re-evaluated every night, whatever changed."""

from __future__ import annotations

import dagster as dg

from graft_eval_pipeline.defs.jobs import evaluate_case_set_job
from graft_eval_pipeline.evalset.sets import SYNTHETIC_SET_ID


@dg.schedule(
    job=evaluate_case_set_job,
    cron_schedule="0 3 * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,  # docs/dagster.md promises a nightly run
    description="Every night at 03:00 UTC: the evaluation of the synthetic set in fake mode (no cost), "
    "to catch drift in dependencies or the environment.",
)
def nightly_synthetic_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    """Fake mode only: costs nothing and catches drift in dependencies or the environment."""
    return dg.RunRequest(run_key=context.scheduled_execution_time.isoformat(), partition_key=SYNTHETIC_SET_ID)
