"""Report: build and publish report.json / .md / cases.parquet, the baseline diff, the thresholds
and the JSON Schemas.

What other stages, `defs/` and `cli.py` may use; everything else is internal to the stage.
"""

from graft_eval_pipeline.evalset.report.baseline import BaselineDiff, check_baseline_target, save_baseline
from graft_eval_pipeline.evalset.report.brief import brief_markdown
from graft_eval_pipeline.evalset.report.case_kinds import CASE_KINDS, KIND_TITLES, CaseKind, CaseLine
from graft_eval_pipeline.evalset.report.files import HTML_FILE, MARKDOWN_FILE, PARQUET_FILE, REPORT_FILE
from graft_eval_pipeline.evalset.report.headline import headline_metadata
from graft_eval_pipeline.evalset.report.history_table import DEFAULT_LAST, read_history
from graft_eval_pipeline.evalset.report.json_schemas import render_schemas
from graft_eval_pipeline.evalset.report.publish import (
    PublishedRun,
    build_report,
    latest_report_summary,
    publish_run,
)
from graft_eval_pipeline.evalset.report.render import SUMMARY_METRICS, render_change
from graft_eval_pipeline.evalset.report.runs import run_dirs
from graft_eval_pipeline.evalset.report.thresholds import (
    dagster_check_passed,
    load_thresholds,
    threshold_verdict,
)
from graft_eval_pipeline.evalset.report.views import open_run

__all__ = [
    "CASE_KINDS",
    "DEFAULT_LAST",
    "HTML_FILE",
    "KIND_TITLES",
    "MARKDOWN_FILE",
    "PARQUET_FILE",
    "REPORT_FILE",
    "SUMMARY_METRICS",
    "BaselineDiff",
    "CaseKind",
    "CaseLine",
    "PublishedRun",
    "brief_markdown",
    "build_report",
    "check_baseline_target",
    "dagster_check_passed",
    "headline_metadata",
    "latest_report_summary",
    "load_thresholds",
    "open_run",
    "publish_run",
    "read_history",
    "render_change",
    "render_schemas",
    "run_dirs",
    "save_baseline",
    "threshold_verdict",
]
