"""Report: build and publish report.json / .md / cases.parquet, the baseline diff, the thresholds,
the paired comparison of two runs, the verifier calibration and the JSON Schemas.

What other stages, `defs/` and `cli.py` may use; everything else is internal to the stage.
"""

from graft_eval_pipeline.evalset.report.baseline import check_baseline_target, save_baseline
from graft_eval_pipeline.evalset.report.calibration import calibrate, calibration_markdown, render_calibration
from graft_eval_pipeline.evalset.report.compare import Comparison, compare_reports
from graft_eval_pipeline.evalset.report.compare_render import comparison_markdown, render_comparison
from graft_eval_pipeline.evalset.report.files import MARKDOWN_FILE, REPORT_FILE, load_report
from graft_eval_pipeline.evalset.report.json_schemas import render_schemas
from graft_eval_pipeline.evalset.report.locate import chosen_report, compare_inputs
from graft_eval_pipeline.evalset.report.paired_stats import DEFAULT_RESAMPLES, DEFAULT_SEED, MIN_RESAMPLES
from graft_eval_pipeline.evalset.report.publish import (
    build_report,
    default_baseline_path,
    latest_report_summary,
    new_run_id,
    publish_run,
)
from graft_eval_pipeline.evalset.report.render import SUMMARY_METRICS, baseline_check_details
from graft_eval_pipeline.evalset.report.thresholds import load_thresholds

__all__ = [
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "MARKDOWN_FILE",
    "MIN_RESAMPLES",
    "REPORT_FILE",
    "SUMMARY_METRICS",
    "Comparison",
    "baseline_check_details",
    "build_report",
    "calibrate",
    "calibration_markdown",
    "check_baseline_target",
    "chosen_report",
    "compare_inputs",
    "compare_reports",
    "comparison_markdown",
    "default_baseline_path",
    "latest_report_summary",
    "load_report",
    "load_thresholds",
    "new_run_id",
    "publish_run",
    "render_calibration",
    "render_comparison",
    "render_schemas",
    "save_baseline",
]
