"""Export: merged agent PRs from GitHub to sealed cases (candidates, stratified sample, stage-2
fetch, redaction).

What other stages, `defs/` and `cli.py` may use; everything else is internal to the stage.
"""

from graft_eval_pipeline.evalset.export.redact import RedactOptions
from graft_eval_pipeline.evalset.export.rescan import RescanResult, rescan_set
from graft_eval_pipeline.evalset.export.stages import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MIN_PER_STRATUM,
    DEFAULT_SAMPLE,
    DEFAULT_SEED,
    CandidateList,
    ExportOptions,
    ExportResult,
    ExportSample,
    check_export_allowed,
    check_repository,
    choose_sample,
    collect_candidates,
    export_sampled,
    github_client,
    merge_bound,
    run_export,
)

__all__ = [
    "DEFAULT_MAX_CANDIDATES",
    "DEFAULT_MIN_PER_STRATUM",
    "DEFAULT_SAMPLE",
    "DEFAULT_SEED",
    "CandidateList",
    "ExportOptions",
    "ExportResult",
    "ExportSample",
    "RedactOptions",
    "RescanResult",
    "check_export_allowed",
    "check_repository",
    "choose_sample",
    "collect_candidates",
    "export_sampled",
    "github_client",
    "merge_bound",
    "rescan_set",
    "run_export",
]
