"""Baselines (spec 6.6, E22, E23): compare a report with a baseline report, and save one.

Comparison ignores what differs between two runs of the same code. What is left falls in three
parts: `decisions` (per case the fields of scoring/changes.py, and the metrics over them), which
must be equal for matchBaseline and make a case "changed"; `usage` (tokens, calls, cost), which a
prompt edit moves without changing a decision, reported as "usage moved" and blocking only where
eval/thresholds.json says so; and `context` (prompt, models, mode, set, a case's tags), shown as
it is.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from graft_eval_pipeline.evalset.report.files import dump_report, load_any_report
from graft_eval_pipeline.evalset.report.legacy import ReportV1, values_only
from graft_eval_pipeline.evalset.scoring import ChangePart, EvalReport, case_field_part
from graft_eval_pipeline.evalset.sets import (
    EvalError,
    EvalLocationError,
    assert_private_location,
    atomic_write,
    check_output_target,
    write_report_file,
)

# Baseline comparison ignores what differs between two runs of the same code (6.6); thresholds
# and pass are derived from the baseline itself, so comparing them would be circular.
# Whether a result came from the cache is the run's, not the result's: the cached count, each
# row's flag and the money this run spent (the results' cost is compared) are left out too.
# How a live run paced its calls (limiter, batches) is timing, not a result; which runs made
# the inputs (`inputs`) is the run's too. The engine's code hash is the code's identity, like
# the commit: its effect on the results is what is compared.
IGNORED_PATHS = (
    "runId",
    "inputs",
    "createdAt",
    "git",
    "prompt.engineFingerprint",
    "run.durationMs",
    "run.cachedResults",
    "run.limiter",
    "run.batch",
    "metrics.costUsdThisRun",
    "thresholds",
    "pass",
    "baseline",
)
IGNORED_CASE_FIELDS = ("cached", "repository")
# Usage: report paths that count tokens, calls and money (a case's fields: scoring/changes.py).
USAGE_REPORT_PATHS = ("metrics.usage", "metrics.costUsd", "metrics.costPerCaseUsd")
DECISION_REPORT_PATHS = ("metrics",)
# Blocks compared as one summary line each (trial count, flaky cases; confirmed cases), never
# field by field: `--trials 3` against a one-trial baseline is one line, not a dump of rows.
SUMMARISED_BLOCKS = ("trials", "confirmation")
Part = ChangePart
PUBLIC_DIR_MODE = 0o755
PUBLIC_FILE_MODE = 0o644


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts to dotted paths; lists and scalars are leaves."""
    out: dict[str, Any] = {}

    def into(value: Any, prefix: str) -> None:
        if not isinstance(value, dict):
            out[prefix] = value
            return
        for key, inner in value.items():
            into(inner, f"{prefix}.{key}" if prefix else key)

    into(value, prefix)
    return out


@lru_cache(maxsize=4096)  # every case repeats the same few dozen field paths
def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p + ".") for p in prefixes)


def _ignored(path: str) -> bool:
    return _under(path, IGNORED_PATHS) or _under(path, SUMMARISED_BLOCKS)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def block_summaries(report: EvalReport | ReportV1) -> dict[str, str]:
    """The summarised blocks of a report as one short value each (ids and counts only)."""
    trials = getattr(report, "trials", None)
    confirmation = getattr(report, "confirmation", None)
    return {
        "trials": (
            f"{_plural(trials.trials, 'trial')}, {_plural(len(trials.flaky_cases), 'flaky case')}"
            if trials is not None
            else "1 trial"
        ),
        "confirmation": (
            f"{_plural(len(confirmation.cases), 'case')} confirmed over "
            f"{_plural(confirmation.trials, 'trial')}"
            if confirmation is not None
            else "none"
        ),
    }


def report_path_part(path: str) -> Part:
    if _under(path, USAGE_REPORT_PATHS):
        return "usage"
    return "decisions" if _under(path, DECISION_REPORT_PATHS) else "context"


@dataclass(frozen=True)
class Change:
    """One differing field: `where` is a dotted path, or a case id for per-case changes."""

    where: str
    field: str
    baseline: Any
    current: Any
    part: Part = "decisions"


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

    def part(self, part: Part) -> list[Change]:
        """The case changes, then the report changes, of one part."""
        return [c for c in (*self.case_changes, *self.changes) if c.part == part]

    @property
    def decisions_equal(self) -> bool:
        """What matchBaseline asks for: no decision of any case and no metric over them moved."""
        return self.comparable and not self.part("decisions")

    @property
    def usage_equal(self) -> bool:
        return self.comparable and not self.part("usage")

    def changed_case_ids(self, part: Part) -> list[str]:
        return sorted({c.where for c in self.case_changes if c.part == part})

    @property
    def changed_cases(self) -> list[str]:
        """The cases that changed.

        A decision field moved (scoring/changes.py). Every surface that says "changed" reads this;
        usage alone never makes a case changed.
        """
        return self.changed_case_ids("decisions") if self.comparable else []

    @property
    def usage_moved(self) -> bool:
        """Tokens, calls or cost differ from the baseline (reported apart from changed cases)."""
        return self.comparable and bool(self.part("usage"))


def _diff_dicts(
    where: str, base: dict[str, Any], cur: dict[str, Any], part: Callable[[str], Part]
) -> list[Change]:
    return [
        Change(where, key, base.get(key), cur.get(key), part(key))
        for key in sorted(set(base) | set(cur))
        if base.get(key) != cur.get(key) or (key in base) != (key in cur)
    ]


def _only_keys_of(base: dict[str, Any], cur: dict[str, Any]) -> dict[str, Any]:
    """A version-1 baseline holds fewer fields: compare only those (a missing one still shows)."""
    return {k: v for k, v in cur.items() if k in base}


def _case_fields(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in flatten(row).items() if not _under(k, IGNORED_CASE_FIELDS)}


def _case_changes(base: list[dict[str, Any]], cur: list[dict[str, Any]], legacy: bool) -> list[Change]:
    base_by_id = {r["id"]: _case_fields(r) for r in base}
    cur_by_id = {r["id"]: _case_fields(r) for r in cur}
    changes: list[Change] = []
    for case_id in sorted(set(base_by_id) | set(cur_by_id)):
        if case_id not in cur_by_id:
            changes.append(Change(case_id, "case", "present", "absent"))
        elif case_id not in base_by_id:
            changes.append(Change(case_id, "case", "absent", "present"))
        else:
            cur_flat = cur_by_id[case_id]
            if legacy:
                cur_flat = _only_keys_of(base_by_id[case_id], cur_flat)
            changes.extend(_diff_dicts(case_id, base_by_id[case_id], cur_flat, case_field_part))
    return changes


LEGACY_WARNING = (
    "the baseline is a schemaVersion 1 report: only the values it holds were compared; "
    "save a new baseline to compare counts and intervals"
)


def diff_reports(baseline: EvalReport | ReportV1, current: EvalReport) -> BaselineDiff:
    """Every field but the run-specific ones, each change marked decisions, usage or context.

    A version-1 baseline is compared on the values it holds (each rate's value), with a warning.
    """
    legacy = isinstance(baseline, ReportV1)
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
    cur_cases = [r.to_json_dict() for r in current.cases]
    base_cases = (
        baseline.cases if isinstance(baseline, ReportV1) else [r.to_json_dict() for r in baseline.cases]
    )
    base_flat = {k: v for k, v in flatten(base_dump).items() if not _ignored(k)}
    cur_flat = {k: v for k, v in flatten(cur_dump).items() if not _ignored(k)}
    if legacy:
        warnings.append(LEGACY_WARNING)
        base_flat.pop("schemaVersion", None)
        cur_flat = _only_keys_of(base_flat, flatten(values_only(cur_dump)))
    base_blocks, cur_blocks = block_summaries(baseline), block_summaries(current)
    blocks = [
        Change("report", name, base_blocks[name], cur_blocks[name], "context")
        for name in SUMMARISED_BLOCKS
        if base_blocks[name] != cur_blocks[name]
    ]
    return BaselineDiff(
        comparable=not not_comparable,
        not_comparable=not_comparable,
        warnings=warnings,
        changes=_diff_dicts("report", base_flat, cur_flat, report_path_part) + blocks,
        case_changes=_case_changes(base_cases, cur_cases, legacy),
        baseline_metrics=flatten(values_only(base_dump["metrics"])),
    )


def check_baseline_target(path: Path, kind: str) -> None:
    """E5 for `--save-baseline`: checked before a run too, so a paid live run is not wasted.

    No baseline goes into a set's store-only parts (a sealed case would become a report).
    """
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
    """True when `path` is a report whose comparison with `report` finds no difference.

    Only the run id, time, commit and duration may differ.
    """
    if not Path(path).is_file():
        return False
    try:
        diff = diff_reports(load_any_report(path), report)
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


def shown_path(path: Path) -> str:
    """A path as a person would type it here: relative to the working folder when inside it."""
    try:
        return os.path.relpath(Path(path).resolve(), Path.cwd().resolve()) if _inside_cwd(path) else str(path)
    except (OSError, ValueError):
        return str(path)


def _inside_cwd(path: Path) -> bool:
    return Path(path).resolve().is_relative_to(Path.cwd().resolve())


def accept_command(set_dir: Path, baseline: Path, live: bool) -> str:
    """The one command that makes the current results the baseline (after reviewing them)."""
    words = ["graft-eval", "run", "--set", shown_path(set_dir), *(["--live"] if live else [])]
    words += ["--save-baseline", shown_path(baseline)]
    return " ".join(shlex.quote(w) for w in words)
