"""Report: report files, the baseline diff, the thresholds and the JSON Schemas.

Build and publish report.json / .md / cases.parquet, and everything the report is checked against.

What other stages, `defs/` and `cli/` may use; everything else is internal to the stage.
"""

from graft_eval_pipeline.evalset.report.baseline import check_baseline_target, save_baseline
from graft_eval_pipeline.evalset.report.brief import brief_markdown
from graft_eval_pipeline.evalset.report.case_detail import CaseDetail, case_detail, case_facts, ended_detail
from graft_eval_pipeline.evalset.report.case_kinds import (
    CASE_KINDS,
    KIND_MEANINGS,
    KIND_TITLES,
    CaseKind,
    CaseLine,
)
from graft_eval_pipeline.evalset.report.files import (
    HTML_FILE,
    MARKDOWN_FILE,
    PARQUET_FILE,
    REPORT_FILE,
    load_report,
)
from graft_eval_pipeline.evalset.report.headline import plotted_metadata, rate_evidence
from graft_eval_pipeline.evalset.report.history_table import DEFAULT_LAST, read_history
from graft_eval_pipeline.evalset.report.json_schemas import render_schemas
from graft_eval_pipeline.evalset.report.locate import chosen_report, compare_inputs
from graft_eval_pipeline.evalset.report.publish import (
    PublishedRun,
    build_report,
    default_baseline_path,
    default_out_dir,
    latest_report_summary,
    new_run_id,
    publish_run,
    read_prior,
)
from graft_eval_pipeline.evalset.report.render import SUMMARY_METRICS, baseline_check_details
from graft_eval_pipeline.evalset.report.runs import no_run_yet, run_dirs
from graft_eval_pipeline.evalset.report.thresholds import (
    ThresholdBlock,
    dagster_check_passed,
    load_thresholds,
    margins_for,
    threshold_verdict,
)
from graft_eval_pipeline.evalset.report.trials_render import trials_metadata
from graft_eval_pipeline.evalset.report.views import (
    compare_file_name,
    open_run,
    view_comparison,
    write_compare_page,
)

__all__ = [
    "CASE_KINDS",
    "DEFAULT_LAST",
    "HTML_FILE",
    "KIND_MEANINGS",
    "KIND_TITLES",
    "MARKDOWN_FILE",
    "PARQUET_FILE",
    "REPORT_FILE",
    "SUMMARY_METRICS",
    "CaseDetail",
    "CaseKind",
    "CaseLine",
    "PublishedRun",
    "ThresholdBlock",
    "baseline_check_details",
    "brief_markdown",
    "build_report",
    "case_detail",
    "case_facts",
    "check_baseline_target",
    "chosen_report",
    "compare_file_name",
    "compare_inputs",
    "dagster_check_passed",
    "default_baseline_path",
    "default_out_dir",
    "ended_detail",
    "latest_report_summary",
    "load_report",
    "load_thresholds",
    "margins_for",
    "new_run_id",
    "no_run_yet",
    "open_run",
    "plotted_metadata",
    "publish_run",
    "rate_evidence",
    "read_history",
    "read_prior",
    "render_schemas",
    "run_dirs",
    "save_baseline",
    "threshold_verdict",
    "trials_metadata",
    "view_comparison",
    "write_compare_page",
]
