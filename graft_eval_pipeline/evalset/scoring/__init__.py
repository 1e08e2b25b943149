"""Scoring: the report schema, one row per case (priced per call) and the metrics over rows.

What other stages, `defs/` and `cli.py` may use; everything else is internal to the stage.
"""

from graft_eval_pipeline.evalset.scoring.metrics import compute_metrics
from graft_eval_pipeline.evalset.scoring.pricing import price_for, upper_bound_estimate
from graft_eval_pipeline.evalset.scoring.report_schema import (
    REPORT_RULES_NOT_IN_SCHEMA,
    REPORT_SCHEMA_VERSION,
    BatchInfo,
    CaseRow,
    ConcurrencyPoint,
    Confusion,
    EvalReport,
    GitInfo,
    LimiterInfo,
    Metrics,
    ModelPair,
    PromptInfo,
    RunInfo,
    ThresholdResult,
)
from graft_eval_pipeline.evalset.scoring.rows import (
    HarnessRun,
    build_row,
    case_cost,
    git_info,
    set_summary,
    skipped_row,
)

__all__ = [
    "REPORT_RULES_NOT_IN_SCHEMA",
    "REPORT_SCHEMA_VERSION",
    "BatchInfo",
    "CaseRow",
    "ConcurrencyPoint",
    "Confusion",
    "EvalReport",
    "GitInfo",
    "HarnessRun",
    "LimiterInfo",
    "Metrics",
    "ModelPair",
    "PromptInfo",
    "RunInfo",
    "ThresholdResult",
    "build_row",
    "case_cost",
    "compute_metrics",
    "git_info",
    "price_for",
    "set_summary",
    "skipped_row",
    "upper_bound_estimate",
]
