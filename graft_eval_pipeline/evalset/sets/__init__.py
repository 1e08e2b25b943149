"""Case sets: the case format, sealing, the store on disk, environment, errors, paths, the
terminal-safe view and the seeded sampling helpers every other stage builds on.

What other stages, `defs/` and `cli/` may use; everything else is internal to the stage.
"""

from typing import TYPE_CHECKING

from graft_eval_pipeline.evalset.sets.case_schema import (
    CASE_ID_PATTERN,
    CASE_RULES_NOT_IN_SCHEMA,
    CASE_SCHEMA_VERSION,
    DOUBLE_LABEL_TAG,
    EXPORT_TOOL,
    HANDLE_PATTERN,
    MAX_KEY_CHANGES,
    SYNTHETIC_SET_ID,
    CaseStratum,
    CaseTally,
    Confidence,
    EvalCase,
    FloorConfig,
    LabelAnswers,
    LabelSet,
    PilotSource,
    Redaction,
    SetMeta,
    describe_validation_error,
    gold,
    label_counts,
    needs_adjudication,
)
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.env import DEFAULT_EVAL_DIR, EvalEnv
from graft_eval_pipeline.evalset.sets.errors import CheckFailed, EvalAbort, EvalError, EvalLocationError
from graft_eval_pipeline.evalset.sets.paths import (
    ASSETS_DIR,
    BASELINE_FILE,
    BATCHES_FILE,
    CACHE_DIR,
    CARD_RESULTS_FILE,
    EXPORTS_DIR,
    IMPORTED_DIR,
    INBOX_DIR,
    LIVE_RERUN_FILE,
    PURGE_LOG,
    RUNS_DIR,
    SCHEMA_DIR,
    SYNTHETIC_BASELINE,
    SYNTHETIC_DIR,
    THRESHOLDS_FILE,
)
from graft_eval_pipeline.evalset.sets.records import RecordWriter, read_records
from graft_eval_pipeline.evalset.sets.sample import (
    PathStratum,
    SizeStratum,
    allocate,
    draw_sample,
    mulberry32,
    path_stratum,
    seeded_shuffle,
    size_stratum,
    stratum_key,
)
from graft_eval_pipeline.evalset.sets.store import (
    CaseSet,
    assert_private_location,
    atomic_write,
    check_output_target,
    create_set,
    discover_set_ids,
    iter_cases,
    list_case_ids,
    open_set,
    purge_set,
    read_case,
    read_cases,
    read_private,
    resolve_set_dir,
    write_case,
    write_private,
    write_report_file,
)
from graft_eval_pipeline.evalset.sets.terminal import render_case, to_terminal_safe
from graft_eval_pipeline.evalset.sets.untrusted import (
    LONE_SURROGATE_RULE,
    UntrustedInputError,
    decode_utf8,
    load_json,
    lone_surrogate_at,
)
from graft_eval_pipeline.evalset.sets.utf8 import Utf8Offsets
from graft_eval_pipeline.lazy import lazy_exports

if TYPE_CHECKING:
    from graft_eval_pipeline.evalset.sets.secrets import (
        SECRET_KINDS,
        kept_spans,
        secret_kinds,
        secret_kinds_in,
        secret_spans,
    )

# The secret rules compile a catalogue of regexes (~30 ms): loaded on first use
# (graft_eval_pipeline/lazy.py), so a run that never redacts or checks a prompt skips them.
__getattr__ = lazy_exports(
    __name__,
    {
        name: "secrets"
        for name in ("SECRET_KINDS", "kept_spans", "secret_kinds", "secret_kinds_in", "secret_spans")
    },
)

__all__ = [
    "ASSETS_DIR",
    "BASELINE_FILE",
    "BATCHES_FILE",
    "CACHE_DIR",
    "CARD_RESULTS_FILE",
    "CASE_ID_PATTERN",
    "CASE_RULES_NOT_IN_SCHEMA",
    "CASE_SCHEMA_VERSION",
    "DEFAULT_EVAL_DIR",
    "DOUBLE_LABEL_TAG",
    "EXPORTS_DIR",
    "EXPORT_TOOL",
    "HANDLE_PATTERN",
    "IMPORTED_DIR",
    "INBOX_DIR",
    "LIVE_RERUN_FILE",
    "LONE_SURROGATE_RULE",
    "MAX_KEY_CHANGES",
    "PURGE_LOG",
    "RUNS_DIR",
    "SCHEMA_DIR",
    "SECRET_KINDS",
    "SYNTHETIC_BASELINE",
    "SYNTHETIC_DIR",
    "SYNTHETIC_SET_ID",
    "THRESHOLDS_FILE",
    "CaseSet",
    "CaseStratum",
    "CaseTally",
    "CheckFailed",
    "Confidence",
    "EvalAbort",
    "EvalCase",
    "EvalEnv",
    "EvalError",
    "EvalLocationError",
    "FloorConfig",
    "LabelAnswers",
    "LabelSet",
    "PathStratum",
    "PilotSource",
    "RecordWriter",
    "Redaction",
    "SetMeta",
    "SizeStratum",
    "UntrustedInputError",
    "Utf8Offsets",
    "allocate",
    "assert_private_location",
    "atomic_write",
    "check_output_target",
    "create_set",
    "decode_utf8",
    "describe_validation_error",
    "discover_set_ids",
    "draw_sample",
    "generate_key",
    "gold",
    "iter_cases",
    "kept_spans",
    "label_counts",
    "list_case_ids",
    "load_json",
    "lone_surrogate_at",
    "mulberry32",
    "needs_adjudication",
    "open_set",
    "parse_key",
    "path_stratum",
    "purge_set",
    "read_case",
    "read_cases",
    "read_private",
    "read_records",
    "render_case",
    "resolve_set_dir",
    "secret_kinds",
    "secret_kinds_in",
    "secret_spans",
    "seeded_shuffle",
    "size_stratum",
    "stratum_key",
    "to_terminal_safe",
    "write_case",
    "write_private",
    "write_report_file",
]
