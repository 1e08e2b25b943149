"""The Dagster code location, for `dagster dev` and `dagster asset materialize`."""

import gc
import os

import dagster as dg

from graft_eval_pipeline.defs.assets.comparison import eval_comparison
from graft_eval_pipeline.defs.assets.evaluation import eval_metrics, eval_report, harness_run, loaded_case_set
from graft_eval_pipeline.defs.assets.export import (
    case_files,
    export_candidates,
    export_sample,
    exported_cases,
    rescanned_cases,
)
from graft_eval_pipeline.defs.assets.labeling import label_import, labeler_agreement
from graft_eval_pipeline.defs.executor import executor_from_env
from graft_eval_pipeline.defs.io_manager import SealedIOManager
from graft_eval_pipeline.defs.jobs import evaluate_case_set_job
from graft_eval_pipeline.defs.resources import GitHubResource, case_sets_resource
from graft_eval_pipeline.defs.schedules import nightly_synthetic_schedule
from graft_eval_pipeline.defs.sensors import case_set_registry_sensor, prompt_change_sensor

case_sets = case_sets_resource()

defs = dg.Definitions(
    assets=[
        export_candidates,
        export_sample,
        exported_cases,
        case_files,
        rescanned_cases,
        label_import,
        labeler_agreement,
        loaded_case_set,
        harness_run,
        eval_metrics,
        eval_report,
        eval_comparison,
    ],
    jobs=[evaluate_case_set_job],
    # In-process unless run config or GRAFT_EVAL_EXECUTOR says otherwise (defs/executor.py).
    executor=executor_from_env(os.environ),
    schedules=[nightly_synthetic_schedule],
    sensors=[case_set_registry_sensor, prompt_change_sensor],
    resources={
        "case_sets": case_sets,
        "github": GitHubResource(),
        "io_manager": SealedIOManager(sets=case_sets),
    },
)

# Everything made so far (Dagster's modules and ours, the definitions) lives as long as the
# process: out of the collector's sight, no later full collection walks it again (about 0.6 s of
# CPU of a 5,000-case materialization: the collections while a run's values are held, and at exit).
gc.freeze()
