"""Report: build and publish report.json / .md / cases.parquet, the baseline diff, the thresholds,
the paired comparison of two runs and the JSON Schemas.

What other stages, `defs/` and `cli.py` may use; everything else is internal to the stage.
"""

from graft_eval_pipeline.evalset.report.baseline import check_baseline_target, save_baseline
from graft_eval_pipeline.evalset.report.compare import compare_reports
from graft_eval_pipeline.evalset.report.compare_render import render_comparison
from graft_eval_pipeline.evalset.report.files import MARKDOWN_FILE, REPORT_FILE
from graft_eval_pipeline.evalset.report.json_schemas import render_schemas
from graft_eval_pipeline.evalset.report.locate import compare_inputs
from graft_eval_pipeline.evalset.report.publish import build_report, latest_report_summary, publish_run
from graft_eval_pipeline.evalset.report.render import SUMMARY_METRICS
from graft_eval_pipeline.evalset.report.thresholds import load_thresholds

__all__ = [
    "MARKDOWN_FILE",
    "REPORT_FILE",
    "SUMMARY_METRICS",
    "build_report",
    "check_baseline_target",
    "compare_inputs",
    "compare_reports",
    "latest_report_summary",
    "load_thresholds",
    "publish_run",
    "render_comparison",
    "render_schemas",
    "save_baseline",
]
