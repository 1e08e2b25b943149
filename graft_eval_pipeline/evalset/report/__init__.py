"""Report: build and publish report.json / .md / cases.parquet, the baseline diff, the thresholds
and the JSON Schemas.

What other stages, `defs/` and `cli.py` may use; everything else is internal to the stage.
"""

from graft_eval_pipeline.evalset.report.baseline import check_baseline_target, save_baseline
from graft_eval_pipeline.evalset.report.files import MARKDOWN_FILE, REPORT_FILE
from graft_eval_pipeline.evalset.report.json_schemas import render_schemas
from graft_eval_pipeline.evalset.report.publish import build_report, latest_report_summary, publish_run
from graft_eval_pipeline.evalset.report.render import SUMMARY_METRICS
from graft_eval_pipeline.evalset.report.thresholds import dagster_check_passed, load_thresholds

__all__ = [
    "MARKDOWN_FILE",
    "REPORT_FILE",
    "SUMMARY_METRICS",
    "build_report",
    "check_baseline_target",
    "dagster_check_passed",
    "latest_report_summary",
    "load_thresholds",
    "publish_run",
    "render_schemas",
    "save_baseline",
]
