"""Build, diff, check, render and write evaluation reports (spec 6.5, 6.6, E22, E23).

Reports hold ids, classes, rule ids, counts, booleans, tokens and cost only (E8), so they can be
printed, committed as a baseline (synthetic) and shown as Dagster metadata.
"""

from __future__ import annotations

import io
import json
import secrets
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from graft_eval_pipeline.card.models import RISK_CLASSES
from graft_eval_pipeline.evalset.case_schema import EvalCase, SetMeta, case_set_hash, needs_adjudication
from graft_eval_pipeline.evalset.errors import EvalError, EvalLocationError
from graft_eval_pipeline.evalset.metrics import compute_metrics
from graft_eval_pipeline.evalset.report_schema import (
    REPORT_SCHEMA_VERSION,
    CaseRow,
    EvalReport,
    GitInfo,
    Metrics,
    SetSummary,
    ThresholdResult,
)
from graft_eval_pipeline.evalset.rows import HarnessRun
from graft_eval_pipeline.evalset.store import (
    DIR_MODE,
    FILE_MODE,
    CaseSet,
    assert_private_location,
    atomic_write,
)

REPORT_FILE = "report.json"
MARKDOWN_FILE = "report.md"
PARQUET_FILE = "cases.parquet"
BASELINE_FILE = "baseline.json"
THRESHOLDS_FILE = Path(__file__).resolve().parents[2] / "eval" / "thresholds.json"

# Baseline comparison ignores what differs between two runs of the same code (6.6); thresholds
# and pass are derived from the baseline itself, so comparing them would be circular.
IGNORED_PATHS = ("runId", "createdAt", "git", "run.durationMs", "run.cachedResults", "thresholds", "pass")

# Metrics where a higher value is worse; every other scalar metric is better when higher.
LOWER_IS_BETTER_PREFIXES = (
    "underClassification",
    "severeUnderClassification",
    "overClassification",
    "unavailableRate",
    "verifierErrorRate",
)


# --- building --------------------------------------------------------------------------------


def new_run_id(now: datetime, suffix: str | None = None) -> str:
    """`YYYYMMDDTHHMMSSZ-xxxx`: sortable by time, unique enough for two runs in one second."""
    return now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + (suffix or secrets.token_hex(2))


def git_info(cwd: Path) -> GitInfo:
    """Commit and dirty flag of the code that ran; both None outside a git checkout."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain"], cwd=cwd, capture_output=True, text=True, check=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return GitInfo(commit=None, dirty=None)
    return GitInfo(commit=commit or None, dirty=bool(status.strip()))


def set_summary(meta: SetMeta, cases: list[EvalCase], rows: list[CaseRow]) -> SetSummary:
    return SetSummary(
        set_id=meta.set_id,
        kind=meta.kind,
        case_set_hash=case_set_hash(cases),
        cases=len(cases),
        scored=sum(r.gold is not None and r.skipped is None for r in rows),
        unlabeled=sum(not c.labels and c.adjudicated is None for c in cases),
        needs_adjudication=sum(needs_adjudication(c) for c in cases),
    )


def build_report(harness: HarnessRun, metrics: Metrics, run_id: str | None = None) -> EvalReport:
    """The report before thresholds are checked (they need the baseline diff)."""
    return EvalReport(
        schema_version=REPORT_SCHEMA_VERSION,
        run_id=run_id or new_run_id(harness.created_at),
        created_at=harness.created_at.astimezone(UTC).replace(microsecond=0),
        set=harness.set,
        prompt=harness.prompt,
        models=harness.models,
        llm=harness.llm,
        git=harness.git,
        run=harness.run,
        metrics=metrics,
        cases=sorted(harness.rows, key=lambda r: r.id),
        thresholds=[],
        passed=True,
    )


def with_thresholds(report: EvalReport, results: list[ThresholdResult]) -> EvalReport:
    return report.model_copy(update={"thresholds": results, "passed": all(t.passed for t in results)})


def dump_report(report: EvalReport) -> str:
    return json.dumps(report.to_json_dict(), indent=2, ensure_ascii=False) + "\n"


def load_report(path: Path) -> EvalReport:
    try:
        return EvalReport.model_validate_json(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise EvalError(f"cannot read report {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise EvalError(
            f"{path} is not a valid eval report (schemaVersion 1): {type(exc).__name__}"
        ) from None


def default_baseline_path(set_dir: Path, meta: SetMeta) -> Path:
    """Pilot sets keep their baseline inside the set; the synthetic one is committed beside it."""
    if meta.kind == "pilot":
        return Path(set_dir) / BASELINE_FILE
    return Path(set_dir).parent / "baselines" / f"{meta.set_id}.json"


# --- flattening and diff ---------------------------------------------------------------------


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


def render_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(render_value(v) for v in value) + "]"
    return str(value)


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


# --- thresholds ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Limit:
    kind: str  # "max" or "min"
    value: float


@dataclass(frozen=True)
class ThresholdBlock:
    """One set kind's block of eval/thresholds.json (6.5)."""

    limits: dict[str, Limit]
    match_baseline: bool = False
    regression: dict[str, float] = field(default_factory=dict)
    provisional: bool = False


def scalar_metric_names() -> set[str]:
    """camelCase names of the top-level scalar metrics, the ones a threshold may name."""
    return {k for k, v in compute_metrics([]).to_json_dict().items() if not isinstance(v, dict)}


def parse_thresholds(data: dict[str, Any]) -> dict[str, ThresholdBlock]:
    """Parse thresholds.json; an unknown metric or a bad limit is a configuration error."""
    known = scalar_metric_names()
    blocks = {}
    for kind, body in data.items():
        if kind not in ("synthetic", "pilot") or not isinstance(body, dict):
            raise EvalError(f"thresholds: unknown set kind {kind!r}; use 'synthetic' or 'pilot'")
        limits: dict[str, Limit] = {}
        regression: dict[str, float] = {}
        match_baseline = provisional = False
        for name, spec in body.items():
            if name == "matchBaseline" and isinstance(spec, bool):
                match_baseline = spec
            elif name == "provisional" and isinstance(spec, bool):
                provisional = spec
            elif name == "regressionVsBaseline" and isinstance(spec, dict):
                for metric, allowed in spec.items():
                    if metric not in known or not isinstance(allowed, int | float):
                        raise EvalError(f"thresholds.{kind}.regressionVsBaseline: bad entry {metric!r}")
                    regression[metric] = float(allowed)
            elif (
                name in known
                and isinstance(spec, dict)
                and len(spec) == 1
                and next(iter(spec)) in ("max", "min")
                and isinstance(next(iter(spec.values())), int | float)
            ):
                (limit_kind, value), *_ = spec.items()
                limits[name] = Limit(limit_kind, float(value))
            else:
                raise EvalError(f"thresholds.{kind}: bad entry {name!r}; use {{'max': n}} or {{'min': n}}")
        blocks[kind] = ThresholdBlock(limits, match_baseline, regression, provisional)
    return blocks


def load_thresholds(path: Path) -> dict[str, ThresholdBlock]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise EvalError(f"cannot read thresholds {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise EvalError(f"{path} is not valid JSON (line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise EvalError(f"{path}: expected an object keyed by set kind")
    return parse_thresholds(data)


def _fmt(number: float) -> str:
    return f"{number:g}"


def _worsening(name: str, baseline: float, current: float) -> float:
    lower_better = name.startswith(LOWER_IS_BETTER_PREFIXES)
    return round(current - baseline if lower_better else baseline - current, 4)


def check_thresholds(
    report: EvalReport,
    thresholds: dict[str, ThresholdBlock],
    diff: BaselineDiff | None,
    strict: bool,
) -> list[ThresholdResult]:
    """6.5: limits, regression against the baseline and the baseline match for the set's kind.

    A null metric passes as n/a. In a provisional block failures are marked provisional (not
    fatal) unless `strict`.
    """
    block = thresholds.get(report.set.kind)
    if block is None:
        return []
    provisional = block.provisional and not strict
    metrics = report.metrics.to_json_dict()
    results = []
    for name, limit in block.limits.items():
        value = metrics[name]
        if value is None:
            results.append(
                ThresholdResult(
                    name=name,
                    value=None,
                    limit=f"{limit.kind} {_fmt(limit.value)}",
                    passed=True,
                    na=True,
                    provisional=provisional,
                )
            )
            continue
        ok = value <= limit.value if limit.kind == "max" else value >= limit.value
        results.append(
            ThresholdResult(
                name=name,
                value=value,
                limit=f"{limit.kind} {_fmt(limit.value)}",
                passed=ok,
                provisional=provisional,
            )
        )
    for name, allowed in block.regression.items():
        limit_text = f"worsening <= {_fmt(allowed)} vs baseline"
        base = diff.baseline_metrics.get(name) if diff is not None and diff.comparable else None
        cur = metrics[name]
        if base is None or cur is None:
            results.append(
                ThresholdResult(
                    name=f"regressionVsBaseline.{name}",
                    value=None,
                    limit=limit_text,
                    passed=True,
                    na=True,
                    provisional=provisional,
                )
            )
            continue
        worse = _worsening(name, base, cur)
        results.append(
            ThresholdResult(
                name=f"regressionVsBaseline.{name}",
                value=worse,
                limit=limit_text,
                passed=worse <= allowed,
                provisional=provisional,
            )
        )
    if block.match_baseline:
        results.append(
            ThresholdResult(
                name="matchBaseline",
                value=diff is not None and diff.equal,
                limit="equal to baseline",
                passed=diff is not None and diff.equal,
                provisional=provisional,
            )
        )
    return results


def check_failed(results: Iterable[ThresholdResult]) -> bool:
    """True when a non-provisional threshold failed: the run exits 1 under --check."""
    return any(not r.passed and not r.provisional for r in results)


def threshold_verdict(result: ThresholdResult) -> str:
    if result.na:
        return "n/a"
    if result.passed:
        return "PASS"
    return "FAIL (provisional)" if result.provisional else "FAIL"


# --- rendering -------------------------------------------------------------------------------

TABLE_EXCLUDED_PREFIXES = ("confusion.", "underClassificationByTag.")
SUMMARY_METRICS = (
    "underClassificationFinal",
    "severeUnderClassificationFinal",
    "exactAccuracyFinal",
    "underClassificationFloor",
    "severeUnderClassificationFloor",
    "outOfScopePrecision",
    "outOfScopeRecall",
    "flagPrecision",
    "flagRecall",
    "unavailableRate",
    "cardAcceptableRate",
    "costUsd",
)
MAX_SUMMARY_CHANGES = 15


def _delta(baseline: Any, current: Any) -> str:
    numeric = (int, float)
    if (
        isinstance(baseline, numeric)
        and isinstance(current, numeric)
        and not isinstance(baseline, bool)
        and not isinstance(current, bool)
    ):
        delta = round(current - baseline, 6)
        return "0" if delta == 0 else f"{delta:+g}"
    return "" if baseline == current else "changed"


def _table(header: list[str], rows: Iterable[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines


def _baseline_line(diff: BaselineDiff | None) -> str:
    if diff is None:
        return "no baseline"
    if not diff.comparable:
        return "not comparable: " + "; ".join(diff.not_comparable)
    if diff.equal:
        return "matches"
    return f"differs: {len(diff.case_changes)} case field(s), {len(diff.changes)} other field(s)"


def render_change(change: Change) -> str:
    return f"{change.where}: {change.field} {render_value(change.baseline)} → {render_value(change.current)}"


def render_markdown(report: EvalReport, diff: BaselineDiff | None) -> str:
    """report.md (6.6): header, metric table, confusion matrices, per-tag UC, thresholds, changes."""
    s, r = report.set, report.run
    git = report.git
    lines = [
        f"# Evaluation report {report.run_id}",
        "",
        f"- Set: {s.set_id} ({s.kind}), {s.cases} cases, {s.scored} scored, {s.unlabeled} unlabeled, "
        f"{s.needs_adjudication} need adjudication",
        f"- Case set hash: `{s.case_set_hash}`",
        f"- Run: created {report.created_at.strftime('%Y-%m-%dT%H:%M:%SZ')}, mode {report.llm}, "
        f"complete {render_value(r.complete)}, skipped (budget) {r.skipped_budget}, "
        f"cached {r.cached_results}, {r.duration_ms} ms",
        f"- Prompt: {report.prompt.prompt_version} (fingerprint `{report.prompt.prompt_fingerprint}`)",
        f"- Models: fast {report.models.fast}, strong {report.models.strong}",
        f"- Git: {git.commit or 'unknown'}{' (dirty)' if git.dirty else ''}",
        f"- Baseline: {_baseline_line(diff)}",
    ]
    lines += [f"- Warning: {w}" for w in (diff.warnings if diff else [])]
    lines += ["", "## Metrics", ""]
    baseline = diff.baseline_metrics if diff else {}
    metric_rows = []
    for key, value in flatten(report.metrics.to_json_dict()).items():
        if key.startswith(TABLE_EXCLUDED_PREFIXES):
            continue
        base = baseline.get(key) if diff else None
        metric_rows.append(
            [
                key,
                render_value(value),
                render_value(base) if diff else "",
                _delta(base, value) if diff else "",
            ]
        )
    lines += _table(["metric", "value", "baseline", "Δ"], metric_rows)
    lines += ["", "## Confusion matrices (rows gold, columns predicted)"]
    for name in ("floor", "model", "final"):
        conf = getattr(report.metrics.confusion, name)
        rows = [
            [gold_class, *(str(n) for n in conf.matrix[i]), render_value(getattr(conf.recall, gold_class))]
            for i, gold_class in enumerate(RISK_CLASSES)
        ]
        rows.append(["precision", *(render_value(getattr(conf.precision, c)) for c in RISK_CLASSES), ""])
        lines += ["", f"### {name} (n = {conf.n})", ""]
        lines += _table(["gold \\ predicted", *RISK_CLASSES, "recall"], rows)
    lines += ["", "## Under-classification by tag", ""]
    by_tag = report.metrics.under_classification_by_tag
    if by_tag:
        lines += _table(
            ["tag", "n", "floor", "model", "final"],
            (
                [tag, str(t.n), render_value(t.floor), render_value(t.model), render_value(t.final)]
                for tag, t in by_tag.items()
            ),
        )
    else:
        lines.append("No tagged scored cases.")
    lines += ["", "## Thresholds", ""]
    if report.thresholds:
        lines += _table(
            ["threshold", "value", "limit", "result"],
            ([t.name, render_value(t.value), t.limit, threshold_verdict(t)] for t in report.thresholds),
        )
    else:
        lines.append("No thresholds for this set kind.")
    lines += ["", "## Changed cases", ""]
    if diff is None:
        lines.append("No baseline.")
    elif diff.case_changes:
        lines += [f"- {render_change(c)}" for c in diff.case_changes]
    else:
        lines.append("None.")
    other = [c for c in (diff.changes if diff else []) if not c.field.startswith("metrics.")]
    if other:
        lines += ["", "## Other changes", ""]
        lines += [f"- {c.field}: {render_value(c.baseline)} → {render_value(c.current)}" for c in other]
    return "\n".join(lines) + "\n"


def summary_text(report: EvalReport, diff: BaselineDiff | None, results: list[ThresholdResult]) -> str:
    """One screen for the CLI and the main job: headline metrics, baseline, thresholds."""
    s = report.set
    metrics = report.metrics.to_json_dict()
    lines = [
        f"set {s.set_id} ({s.kind}): {s.cases} cases, {s.scored} scored, mode {report.llm}, "
        f"complete {render_value(report.run.complete)}, run {report.run_id}",
    ]
    lines += [f"  {name:<32} {render_value(metrics[name])}" for name in SUMMARY_METRICS]
    usage = report.metrics.usage
    lines.append(
        f"  {'tokens (in/out/cache r/w, calls)':<32} {usage.input_tokens}/{usage.output_tokens}/"
        f"{usage.cache_read_tokens}/{usage.cache_write_tokens}, {usage.calls}"
    )
    lines.append(f"baseline: {_baseline_line(diff)}")
    if diff is not None:
        lines += [f"  warning: {w}" for w in diff.warnings]
        shown = [*diff.case_changes, *diff.changes][:MAX_SUMMARY_CHANGES]
        lines += [
            f"  {render_change(c) if c in diff.case_changes else c.field}"
            + ("" if c in diff.case_changes else f": {render_value(c.baseline)} → {render_value(c.current)}")
            for c in shown
        ]
        hidden = len(diff.case_changes) + len(diff.changes) - len(shown)
        if hidden > 0:
            lines.append(f"  … and {hidden} more (see report.md)")
    if results:
        failed = [t for t in results if not t.passed]
        verdict = "PASS" if not failed else "FAIL (provisional)" if not check_failed(results) else "FAIL"
        lines.append(f"thresholds: {verdict}")
        lines += [
            f"  {threshold_verdict(t)}: {t.name} = {render_value(t.value)} ({t.limit})"
            for t in results
            if not t.passed or t.na
        ]
    return "\n".join(lines) + "\n"


# --- writing ---------------------------------------------------------------------------------

PARQUET_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("tags", pa.list_(pa.string())),
        ("gold_risk", pa.string()),
        ("gold_should_flag", pa.bool_()),
        ("gold_out_of_scope_count", pa.int64()),
        ("floor", pa.string()),
        ("model", pa.string()),
        ("final", pa.string()),
        ("status", pa.string()),
        ("failure_reason", pa.string()),
        ("verifier_status", pa.string()),
        ("raised_by", pa.list_(pa.string())),
        ("floor_rules", pa.list_(pa.string())),
        ("instructions_in_data", pa.bool_()),
        ("oos_tp", pa.int64()),
        ("oos_fp", pa.int64()),
        ("oos_fn", pa.int64()),
        ("flag", pa.string()),
        ("input_tokens", pa.int64()),
        ("output_tokens", pa.int64()),
        ("cache_read_tokens", pa.int64()),
        ("cache_write_tokens", pa.int64()),
        ("calls", pa.int64()),
        ("cost_usd", pa.float64()),
        ("cached", pa.bool_()),
        ("skipped", pa.string()),
    ]
)


def flat_row(row: CaseRow) -> dict[str, Any]:
    """One Parquet record: the nested row flattened to snake_case columns."""
    gold_, oos = row.gold, row.oos
    return {
        "id": row.id,
        "tags": row.tags,
        "gold_risk": gold_.risk if gold_ else None,
        "gold_should_flag": gold_.should_flag if gold_ else None,
        "gold_out_of_scope_count": gold_.out_of_scope_count if gold_ else None,
        "floor": row.floor,
        "model": row.model,
        "final": row.final,
        "status": row.status,
        "failure_reason": row.failure_reason,
        "verifier_status": row.verifier_status,
        "raised_by": row.raised_by,
        "floor_rules": row.floor_rules,
        "instructions_in_data": row.instructions_in_data,
        "oos_tp": oos.tp if oos else None,
        "oos_fp": oos.fp if oos else None,
        "oos_fn": oos.fn if oos else None,
        "flag": row.flag,
        "input_tokens": row.usage.input_tokens,
        "output_tokens": row.usage.output_tokens,
        "cache_read_tokens": row.usage.cache_read_tokens,
        "cache_write_tokens": row.usage.cache_write_tokens,
        "calls": row.usage.calls,
        "cost_usd": row.cost_usd,
        "cached": row.cached,
        "skipped": row.skipped,
    }


def cases_parquet(rows: list[CaseRow]) -> bytes:
    table = pa.Table.from_pylist([flat_row(r) for r in rows], schema=PARQUET_SCHEMA)
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def default_out_dir(set_dir: Path, report: EvalReport) -> Path:
    return Path(set_dir) / "runs" / report.run_id


def write_run_outputs(out_dir: Path, report: EvalReport, markdown: str) -> dict[str, Path]:
    """report.json, report.md and cases.parquet, each written atomically (0700 dirs, 0600 files)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    files = {
        REPORT_FILE: dump_report(report).encode("utf-8"),
        MARKDOWN_FILE: markdown.encode("utf-8"),
        PARQUET_FILE: cases_parquet(report.cases),
    }
    paths = {}
    for name, data in files.items():
        atomic_write(out_dir / name, data, FILE_MODE)
        paths[name] = out_dir / name
    return paths


@dataclass(frozen=True)
class CheckedRun:
    """A report with its thresholds checked against an optional baseline, ready to write."""

    report: EvalReport
    diff: BaselineDiff | None
    markdown: str

    @property
    def failed(self) -> bool:
        return check_failed(self.report.thresholds)

    def summary(self) -> str:
        return summary_text(self.report, self.diff, self.report.thresholds)


def check_run(
    report: EvalReport,
    baseline: EvalReport | None,
    thresholds: dict[str, ThresholdBlock],
    strict: bool,
) -> CheckedRun:
    """Diff against the baseline, check the thresholds, render report.md (CLI and main job)."""
    diff = diff_reports(baseline, report) if baseline is not None else None
    checked = with_thresholds(report, check_thresholds(report, thresholds, diff, strict))
    return CheckedRun(checked, diff, render_markdown(checked, diff))


@dataclass(frozen=True)
class PublishedRun:
    checked: CheckedRun
    out_dir: Path


def publish_run(
    cs: CaseSet,
    report: EvalReport,
    *,
    thresholds: dict[str, ThresholdBlock],
    strict: bool,
    baseline: Path | None = None,
    out: Path | None = None,
) -> PublishedRun:
    """Diff against the baseline (default: the set's own), check, write the run's three files.

    The one path from a report to disk, shared by `graft-eval run` and the Dagster report asset.
    """
    baseline_path = baseline or default_baseline_path(cs.dir, cs.meta)
    previous = load_report(baseline_path) if baseline_path.is_file() else None
    checked = check_run(report, previous, thresholds, strict)
    out_dir = out or default_out_dir(cs.dir, checked.report)
    write_run_outputs(out_dir, checked.report, checked.markdown)
    return PublishedRun(checked, out_dir)


def latest_report_summary(cs: CaseSet) -> str:
    """The newest `runs/<runId>/report.json` (run ids sort by time), diffed with the set's baseline."""
    reports = sorted((Path(cs.dir) / "runs").glob(f"*/{REPORT_FILE}"))
    if not reports:
        raise EvalError(f"set {cs.set_id} has no report yet: run `graft-eval run --set {cs.dir}` first")
    report = load_report(reports[-1])
    baseline_path = default_baseline_path(cs.dir, cs.meta)
    diff = diff_reports(load_report(baseline_path), report) if baseline_path.is_file() else None
    return summary_text(report, diff, report.thresholds) + f"report: {reports[-1]}\n"


def save_baseline(path: Path, report: EvalReport) -> None:
    """Write a report as a baseline; a pilot baseline never goes into a git working tree (E5)."""
    path = Path(path)
    if report.set.kind == "pilot":
        try:
            assert_private_location(path.parent)
        except EvalLocationError:
            raise EvalLocationError(
                f"refusing to save a pilot baseline to {path}: it is inside a git working tree; "
                "use the set's own baseline.json"
            ) from None
    pilot = report.set.kind == "pilot"
    path.parent.mkdir(mode=DIR_MODE if pilot else 0o755, parents=True, exist_ok=True)
    atomic_write(path, dump_report(report), FILE_MODE if pilot else 0o644)
