"""Jobs: the evaluation of one case set."""

from __future__ import annotations

import dagster as dg

from graft_eval_pipeline.defs.assets import EVALUATION_GROUP

evaluate_case_set_job = dg.define_asset_job(
    "evaluate_case_set",
    selection=dg.AssetSelection.groups(EVALUATION_GROUP),
    description="Import labels, load the set, run the harness, score and report one case set.",
)
