"""Baselines (spec 6.6, E22, E23): compare a report with a baseline report, and save one.

Comparison ignores what differs between two runs of the same code; everything else must be
equal for matchBaseline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graft_eval_pipeline.evalset.report.files import dump_report, load_report
from graft_eval_pipeline.evalset.scoring import CaseRow, EvalReport
from graft_eval_pipeline.evalset.sets import (
    EvalError,
    EvalLocationError,
    assert_private_location,
    atomic_write,
    check_output_target,
    write_report_file,
)

# Baseline comparison ignores what differs between two runs of the same code (6.6); thresholds
# and pass are derived from the baseline itself, so comparing them would be circular. How a live
# run paced its calls (limiter, batches) is timing, not a result.
IGNORED_PATHS = (
    "runId",
    "createdAt",
    "git",
    "run.durationMs",
    "run.cachedResults",
    "run.limiter",
    "run.batch",
    "thresholds",
    "pass",
)
PUBLIC_DIR_MODE = 0o755
PUBLIC_FILE_MODE = 0o644


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts to dotted paths; lists and scalars are leaves."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, inner in value.items():
            out.update(flatten(inner, f"{prefix}.{key}" if prefix else key))
        return out
    return {prefix: value}


def _ignored(path: str) -> bool:
    return any(path == p or path.startswith(p + ".") for p in IGNORED_PATHS)


@dataclass(frozen=True)
class Change:
    """One differing field: `where` is a dotted path, or a case id for per-case changes."""

    where: str
    field: str
    baseline: Any
    current: Any


@dataclass(frozen=True)
class BaselineDiff:
    comparable: bool
    not_comparable: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    case_changes: list[Change] = field(default_factory=list)
    baseline_metrics: dict[str, Any] = field(default_factory=dict)

    @property
    def equal(self) -> bool:
        return self.comparable and not self.changes and not self.case_changes


def _diff_dicts(where: str, base: dict[str, Any], cur: dict[str, Any]) -> list[Change]:
    return [
        Change(where, key, base.get(key), cur.get(key))
        for key in sorted(set(base) | set(cur))
        if base.get(key) != cur.get(key) or (key in base) != (key in cur)
    ]


def _case_changes(base: list[CaseRow], cur: list[CaseRow]) -> list[Change]:
    base_by_id = {r.id: flatten(r.to_json_dict()) for r in base}
    cur_by_id = {r.id: flatten(r.to_json_dict()) for r in cur}
    changes: list[Change] = []
    for case_id in sorted(set(base_by_id) | set(cur_by_id)):
        if case_id not in cur_by_id:
            changes.append(Change(case_id, "case", "present", "absent"))
        elif case_id not in base_by_id:
            changes.append(Change(case_id, "case", "absent", "present"))
        else:
            changes.extend(_diff_dicts(case_id, base_by_id[case_id], cur_by_id[case_id]))
    return changes


def diff_reports(baseline: EvalReport, current: EvalReport) -> BaselineDiff:
    """E22/E23: everything but the run-specific fields must be equal for matchBaseline."""
    not_comparable = []
    if baseline.set.case_set_hash != current.set.case_set_hash:
        not_comparable.append("caseSetHash differs (other cases or gold labels)")
    if baseline.models != current.models:
        not_comparable.append(
            f"models differ ({baseline.models.fast}/{baseline.models.strong} vs "
            f"{current.models.fast}/{current.models.strong})"
        )
    warnings = []
    if (
        baseline.prompt.prompt_fingerprint != current.prompt.prompt_fingerprint
        and baseline.prompt.prompt_version == current.prompt.prompt_version
    ):
        warnings.append(
            f"prompt fingerprint changed but PROMPT_VERSION is still {current.prompt.prompt_version}: "
            "bump the version when prompts or output schemas change"
        )
    base_dump = baseline.model_dump(by_alias=True, mode="json", exclude={"cases"})
    cur_dump = current.model_dump(by_alias=True, mode="json", exclude={"cases"})
    base_flat = {k: v for k, v in flatten(base_dump).items() if not _ignored(k)}
    cur_flat = {k: v for k, v in flatten(cur_dump).items() if not _ignored(k)}
    return BaselineDiff(
        comparable=not not_comparable,
        not_comparable=not_comparable,
        warnings=warnings,
        changes=_diff_dicts("report", base_flat, cur_flat),
        case_changes=_case_changes(baseline.cases, current.cases),
        baseline_metrics=flatten(baseline.metrics.to_json_dict()),
    )


def check_baseline_target(path: Path, kind: str) -> None:
    """E5 for `--save-baseline`: checked before a run too, so a paid live run is not wasted.

    No baseline goes into a set's store-only parts (a sealed case would become a report)."""
    check_output_target(path, "--save-baseline")
    if kind != "pilot":
        return
    try:
        assert_private_location(Path(path).parent)
    except EvalLocationError:
        raise EvalLocationError(
            f"refusing to save a pilot baseline to {path}: it is inside a git working tree; "
            "use the set's own baseline.json"
        ) from None


def holds_same_result(path: Path, report: EvalReport) -> bool:
    """True when `path` is a report whose comparison with `report` finds no difference (only the
    run id, time, commit and duration may differ)."""
    if not Path(path).is_file():
        return False
    try:
        diff = diff_reports(load_report(path), report)
    except EvalError:
        return False
    return diff.equal and not diff.warnings


def save_baseline(path: Path, report: EvalReport) -> bool:
    """Write a report as a baseline; False when the file already holds the same result.

    An unchanged result leaves the file as it is, so re-saving after a change that does not move
    any result leaves `git diff` empty. A pilot baseline never goes into a git working tree (E5)
    and is private like the set (0700 folders, parents included, through the store; 0600 file).
    The synthetic one is committed.
    """
    path = Path(path)
    check_baseline_target(path, report.set.kind)
    if holds_same_result(path, report):
        return False
    if report.set.kind == "pilot":
        write_report_file(path.parent, path.name, dump_report(report))
        return True
    path.parent.mkdir(mode=PUBLIC_DIR_MODE, parents=True, exist_ok=True)
    atomic_write(path, dump_report(report), PUBLIC_FILE_MODE)
    return True
