"""Export: merged agent PRs from GitHub to sealed cases (candidates, stratified sample, stage-2
fetch, redaction).

What other stages, `defs/` and `cli/` may use; everything else is internal to the stage.
"""

from typing import TYPE_CHECKING

from graft_eval_pipeline.evalset.export.defaults import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MIN_PER_STRATUM,
    DEFAULT_SAMPLE,
    DEFAULT_SAMPLE_SEED,
)
from graft_eval_pipeline.lazy import lazy_exports

if TYPE_CHECKING:
    from graft_eval_pipeline.evalset.export.redact import RedactOptions
    from graft_eval_pipeline.evalset.export.rescan import RescanResult, rescan_set
    from graft_eval_pipeline.evalset.export.stages import (
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

# Loaded on first use (graft_eval_pipeline/lazy.py): the CLI imports this package at start for
# the defaults above, and a command that never exports must not pay for the GitHub client and
# httpx (~0.1 s).
__getattr__ = lazy_exports(
    __name__,
    {
        "RedactOptions": "redact",
        "RescanResult": "rescan",
        "rescan_set": "rescan",
        "CandidateList": "stages",
        "ExportOptions": "stages",
        "ExportResult": "stages",
        "ExportSample": "stages",
        "check_export_allowed": "stages",
        "check_repository": "stages",
        "choose_sample": "stages",
        "collect_candidates": "stages",
        "export_sampled": "stages",
        "github_client": "stages",
        "merge_bound": "stages",
        "run_export": "stages",
    },
)

__all__ = [
    "DEFAULT_MAX_CANDIDATES",
    "DEFAULT_MIN_PER_STRATUM",
    "DEFAULT_SAMPLE",
    "DEFAULT_SAMPLE_SEED",
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
