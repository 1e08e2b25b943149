"""Jobs: the evaluation of one case set, and the export into a pilot set."""

from __future__ import annotations

import dagster as dg

EVALUATION_GROUP = "evaluation"
EXPORT_GROUP = "export"

evaluate_case_set_job = dg.define_asset_job(
    "evaluate_case_set",
    selection=dg.AssetSelection.groups(EVALUATION_GROUP),
    description="Import labels, load the set, run the harness, score and report one case set.",
)
