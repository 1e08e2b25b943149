"""Report: build and publish report.json / .md / cases.parquet, the baseline diff, the thresholds
and the JSON Schemas.

What other stages, `defs/` and `cli.py` may use; everything else is internal to the stage.
"""

from graft_eval_pipeline.evalset.report.baseline import check_baseline_target, save_baseline
from graft_eval_pipeline.evalset.report.case_kinds import CASE_KINDS, KIND_TITLES, CaseKind, CaseLine
from graft_eval_pipeline.evalset.report.files import MARKDOWN_FILE, REPORT_FILE
from graft_eval_pipeline.evalset.report.json_schemas import render_schemas
from graft_eval_pipeline.evalset.report.publish import build_report, latest_report_summary, publish_run
from graft_eval_pipeline.evalset.report.render import SUMMARY_METRICS
from graft_eval_pipeline.evalset.report.runs import run_dirs
from graft_eval_pipeline.evalset.report.thresholds import load_thresholds
from graft_eval_pipeline.evalset.report.views import open_run

__all__ = [
    "CASE_KINDS",
    "KIND_TITLES",
    "MARKDOWN_FILE",
    "REPORT_FILE",
    "SUMMARY_METRICS",
    "CaseKind",
    "CaseLine",
    "build_report",
    "check_baseline_target",
    "latest_report_summary",
    "load_thresholds",
    "open_run",
    "publish_run",
    "render_schemas",
    "run_dirs",
    "save_baseline",
]
