"""The evaluation job with each step in its own process (`multiprocess_executor`, as the k8s and
celery executors run steps), for `dagster.reconstructable`: a subprocess imports this module and
calls `evaluation_job()` again, so the set folders come from the environment the test sets."""

from __future__ import annotations

import os

import dagster as dg

from graft_eval_pipeline.definitions import defs
from graft_eval_pipeline.defs.io_manager import SealedIOManager
from graft_eval_pipeline.defs.jobs import evaluate_case_set_job
from graft_eval_pipeline.defs.resources import CaseSetsResource, GitHubResource

EVAL_DIR_VAR = "GRAFT_TEST_EVAL_DIR"
SYNTHETIC_DIR_VAR = "GRAFT_TEST_SYNTHETIC_DIR"


def evaluation_job() -> dg.JobDefinition:
    sets = CaseSetsResource(eval_dir=os.environ[EVAL_DIR_VAR], synthetic_dir=os.environ[SYNTHETIC_DIR_VAR])
    return dg.Definitions(
        assets=list(defs.assets or []),
        jobs=[evaluate_case_set_job],
        executor=dg.multiprocess_executor.configured({"max_concurrent": 2}),
        resources={"case_sets": sets, "github": GitHubResource(), "io_manager": SealedIOManager(sets=sets)},
    ).resolve_job_def(evaluate_case_set_job.name)
