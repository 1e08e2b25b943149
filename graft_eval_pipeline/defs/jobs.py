"""Jobs: the evaluation of one case set, and the export into a pilot set."""

from __future__ import annotations

import dagster as dg

from graft_eval_pipeline.defs.partitions import case_set_partitions

EVALUATION_GROUP = "evaluation"
EXPORT_GROUP = "export"

evaluate_case_set_job = dg.define_asset_job(
    "evaluate_case_set",
    selection=dg.AssetSelection.groups(EVALUATION_GROUP),
    partitions_def=case_set_partitions,
    description="Import labels, load the set, run the harness, score and report one case set.",
)
