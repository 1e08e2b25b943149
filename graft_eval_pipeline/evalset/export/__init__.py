"""Export: merged agent PRs from GitHub to sealed cases (candidates, stratified sample, stage-2
fetch, redaction).

What other stages, `defs/` and `cli.py` may use; everything else is internal to the stage.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from graft_eval_pipeline.evalset.export.defaults import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MIN_PER_STRATUM,
    DEFAULT_SAMPLE,
    DEFAULT_SEED,
)

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

# Loaded on first use (PEP 562): the CLI imports this package at start for the defaults above,
# and a command that never exports must not pay for the GitHub client and httpx (~0.1 s).
_LAZY = {"RedactOptions": "redact", "RescanResult": "rescan", "rescan_set": "rescan"}


def __getattr__(name: str) -> Any:
    if name not in __all__ or name.startswith("DEFAULT_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_LAZY.get(name, 'stages')}"), name)
    globals()[name] = value
    return value


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
