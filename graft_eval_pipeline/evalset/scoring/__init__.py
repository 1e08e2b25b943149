"""Scoring: the report schema, one row per case (priced per call) and the metrics over rows.

What other stages, `defs/` and `cli.py` may use; everything else is internal to the stage.
"""

from graft_eval_pipeline.evalset.scoring.intervals import (
    error_free_cases_needed,
    round_down,
    round_up,
    upper_bound,
)
from graft_eval_pipeline.evalset.scoring.metrics import (
    compute_metrics,
    metric_stats,
    metric_values,
    model_derived,
)
from graft_eval_pipeline.evalset.scoring.pricing import price_for, upper_bound_estimate
from graft_eval_pipeline.evalset.scoring.report_schema import (
    REPORT_RULES_NOT_IN_SCHEMA,
    REPORT_SCHEMA_VERSION,
    RUN_ID_PATTERN,
    CaseRow,
    Confusion,
    EvalReport,
    GitInfo,
    LabelAgreement,
    LabelQuality,
    Metrics,
    ModelPair,
    PairKappa,
    PopulationRate,
    PromptInfo,
    RateStat,
    RunInfo,
    SafetyRate,
    SetSummary,
    SkipReason,
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
    "RUN_ID_PATTERN",
    "CaseRow",
    "Confusion",
    "EvalReport",
    "GitInfo",
    "HarnessRun",
    "LabelAgreement",
    "LabelQuality",
    "Metrics",
    "ModelPair",
    "PairKappa",
    "PopulationRate",
    "PromptInfo",
    "RateStat",
    "RunInfo",
    "SafetyRate",
    "SetSummary",
    "SkipReason",
    "ThresholdResult",
    "build_row",
    "case_cost",
    "compute_metrics",
    "error_free_cases_needed",
    "git_info",
    "metric_stats",
    "metric_values",
    "model_derived",
    "price_for",
    "round_down",
    "round_up",
    "set_summary",
    "skipped_row",
    "upper_bound",
    "upper_bound_estimate",
]
