"""The project's own evaluation job from `graft_eval_pipeline.definitions`, for `dagster.reconstructable`.

Each step subprocess imports this module afresh, so it finds eval/ and the pilot sets where the
test's environment says (GRAFT_EVAL_REPO, GRAFT_EVAL_DIR).
"""

from __future__ import annotations

import dagster as dg

from graft_eval_pipeline.definitions import defs
from graft_eval_pipeline.defs.jobs import evaluate_case_set_job


def evaluation_job() -> dg.JobDefinition:
    return defs.resolve_job_def(evaluate_case_set_job.name)
