"""Compare: did a change help?

Two runs paired case by case (rates with paired intervals and exact tests, non-inferiority margins,
per-case blockers that must reproduce), rendered for the screen, markdown and report.html; and the
verifier calibrated against gold.

Below `report/` (which shows a comparison and a calibration in its files), above `scoring/`.
What other stages, `defs/` and `cli/` may use; everything else is internal to the stage.
"""

from graft_eval_pipeline.evalset.compare.calibration import (
    calibrate,
    calibration_markdown,
    render_calibration,
)
from graft_eval_pipeline.evalset.compare.compare import SAFETY_RATES, Comparison, compare_reports
from graft_eval_pipeline.evalset.compare.compare_render import (
    comparison_html,
    comparison_markdown,
    render_comparison,
    verdict_line,
    verdict_text,
)
from graft_eval_pipeline.evalset.compare.paired_stats import DEFAULT_RESAMPLES, DEFAULT_SEED, MIN_RESAMPLES

__all__ = [
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "MIN_RESAMPLES",
    "SAFETY_RATES",
    "Comparison",
    "calibrate",
    "calibration_markdown",
    "compare_reports",
    "comparison_html",
    "comparison_markdown",
    "render_calibration",
    "render_comparison",
    "verdict_line",
    "verdict_text",
]
