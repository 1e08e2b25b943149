"""How the headline rates moved over a set's runs.

`runs/<runId>/report.json`, oldest first (the HTML report's history charts, and `graft-eval history`
through history_table.py).

Only the metrics, prompt (version and fingerprints) and trial count of each report are read
(through the untrusted-file reader, without validating every case row). A report that cannot be
read (damaged, hostile, of another shape) is skipped with a one-line warning naming it: a past run
never stops a new one.

Why an index: parsing a report is parsing all its case rows (80 ms for 5,000 cases), and every
run's report.html charts the last 50 runs, so a large set's history cost seconds on every run and
grew with it. `cache/history-index.json` (sealed in a pilot set, as the set's other caches) keeps
what the history read of each report (those fields alone), by its run folder and the report file's
size, modification time and inode, so each report is parsed once. It is a cache, never trusted
over the file: one that cannot be read, or an entry whose file changed, is read past and the report
parsed again; every entry still goes through the same checks as a report.
"""

from __future__ import annotations

import json
import os
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from graft_eval_pipeline.evalset.report.files import REPORT_FILE
from graft_eval_pipeline.evalset.report.headline import HEADLINE_RATES
from graft_eval_pipeline.evalset.report.runs import run_dirs
from graft_eval_pipeline.evalset.scoring import EvalReport
from graft_eval_pipeline.evalset.sets import (
    HISTORY_INDEX,
    RUNS_DIR,
    CaseSet,
    EvalError,
    UntrustedInputError,
    load_json,
    parse_json,
    read_limited,
    read_private,
    write_private,
)

MAX_HISTORY = 50


@dataclass(frozen=True)
class RatePoint:
    """One rate of one run: k of n, the value, its 95% interval and the upper bound.

    The upper bound is the one-sided one, of under-classification. A schemaVersion 1 report holds
    the value alone.
    """

    k: int | None
    n: int | None
    value: float | None
    ci95: tuple[float, float] | None = None
    upper95: float | None = None

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "n": self.n,
            "value": self.value,
            "ci95": list(self.ci95) if self.ci95 is not None else None,
            "upper95": self.upper95,
        }


@dataclass(frozen=True)
class HistoryPoint:
    run_id: str
    llm: str
    case_set_hash: str
    rates: dict[str, float | None]  # headline metric -> value
    evidence: dict[str, RatePoint] = field(default_factory=dict)  # headline metric -> k, n, bounds
    passed: bool | None = None  # the report's `pass`: every threshold passed (also the baseline match)
    prompt_version: str | None = None  # None: a report of another shape held none
    prompt_fingerprint: str | None = None
    engine_fingerprint: str | None = None  # None in reports made before the engine was hashed
    trials: int = 1  # runs of each case (--trials)

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "llm": self.llm,
            "caseSetHash": self.case_set_hash,
            "promptVersion": self.prompt_version,
            "promptFingerprint": self.prompt_fingerprint,
            "engineFingerprint": self.engine_fingerprint,
            "trials": self.trials,
            "pass": self.passed,
            "rates": {name: rate.to_json_dict() for name, rate in self.evidence.items()},
        }


def _number(value: Any) -> float | None:
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return None if value is None else float(value)
    raise TypeError("not a number")


def _count(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise TypeError("not a count")


def _rate_point(stored: Any) -> RatePoint:
    """A stored rate: `{k, n, value, ci95, method[, upper95]}` (schema 2) or a bare number (schema 1)."""
    if not isinstance(stored, dict):
        return RatePoint(None, None, _number(stored))
    ci95 = stored.get("ci95")
    interval = None
    if ci95 is not None:
        low, high = ci95
        interval = (float(_number(low) or 0.0), float(_number(high) or 0.0))
    return RatePoint(
        _count(stored["k"]),
        _count(stored["n"]),
        _number(stored.get("value")),
        interval,
        _number(stored.get("upper95")),
    )


def _point_of(data: dict[str, Any]) -> HistoryPoint:
    """A report's JSON (as on disk) -> its history point.

    KeyError, TypeError or ValueError when it is not a report.
    """
    metrics = data["metrics"]
    evidence = {name: _rate_point(metrics.get(name)) for name in HEADLINE_RATES}
    passed = data.get("pass")
    prompt = data.get("prompt") or {}
    trials = (data.get("trials") or {}).get("trials", 1)
    return HistoryPoint(
        str(data["runId"]),
        str(data["llm"]),
        str(data["set"]["caseSetHash"]),
        {name: rate.value for name, rate in evidence.items()},
        evidence,
        passed if isinstance(passed, bool) else None,
        _text(prompt.get("promptVersion")),
        _text(prompt.get("promptFingerprint")),
        _text(prompt.get("engineFingerprint")),
        _count(trials) or 1,
    )


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError("not a string")


def _point(report: EvalReport) -> HistoryPoint:
    fields = {"run_id", "llm", "set", "metrics", "passed", "prompt", "trials"}
    return _point_of(report.model_dump(mode="json", by_alias=True, include=fields))


def _read_fields(run_dir: Path) -> dict[str, Any]:
    """What `_point_of` reads of `runs/<runId>/report.json`, and nothing else (for the index).

    An UntrustedInputError naming the file (relative to the set) when it cannot be read or is not
    a report.
    """
    where = f"{RUNS_DIR}/{run_dir.name}/{REPORT_FILE}"
    try:
        data = load_json(read_limited(run_dir / REPORT_FILE, where), where)
        _point_of(data)
        return {
            "runId": data["runId"],
            "llm": data["llm"],
            "set": {"caseSetHash": data["set"]["caseSetHash"]},
            "metrics": {name: data["metrics"].get(name) for name in HEADLINE_RATES},
            "pass": data.get("pass"),
            "prompt": {key: (data.get("prompt") or {}).get(key) for key in _PROMPT_KEYS},
            "trials": {"trials": (data.get("trials") or {}).get("trials", 1)},
        }
    except OSError as err:
        raise UntrustedInputError(f"{where}: could not read it ({err.strerror or err})") from None
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        if isinstance(err, UntrustedInputError):
            raise
        raise UntrustedInputError(
            f"{where}: not an eval report (a field is missing or of another type)"
        ) from None


_PROMPT_KEYS = ("promptVersion", "promptFingerprint", "engineFingerprint")


def read_point(run_dir: Path) -> HistoryPoint:
    """The history point of `runs/<runId>/report.json` (an UntrustedInputError as `_read_fields`)."""
    return _point_of(_read_fields(run_dir))


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    stat: tuple[int, int, int]  # the report file's size, modification time (ns) and inode
    fields: dict[str, Any]


class _Index(BaseModel):
    model_config = ConfigDict(extra="forbid")

    entries: dict[str, _Entry]


def _stat_of(run_dir: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(run_dir / REPORT_FILE)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


def _load_index(cs: CaseSet) -> dict[str, _Entry]:
    try:
        text = read_private(cs, HISTORY_INDEX)
        return {} if text is None else dict(parse_json(text, HISTORY_INDEX, _Index).entries)
    except (OSError, EvalError):  # unreadable or damaged: every report is read again
        return {}


def _indexed_point(entry: _Entry | None, stat: tuple[int, int, int] | None) -> HistoryPoint | None:
    if entry is None or stat is None or entry.stat != stat:
        return None
    try:
        return _point_of(entry.fields)
    except (KeyError, TypeError, ValueError, AttributeError):  # an entry of another shape: read the file
        return None


@dataclass(frozen=True)
class RunHistory:
    """The points that could be read, oldest first, and a warning for each report skipped."""

    points: list[HistoryPoint]
    skipped: list[str]


def read_points(cs: CaseSet, folders: list[Path]) -> RunHistory:
    """The points of these run folders of `cs`, each report parsed once (`HISTORY_INDEX`)."""
    if not folders:
        return RunHistory([], [])
    index = _load_index(cs)
    points, skipped, changed = [], [], False
    for run_dir in folders:
        stat = _stat_of(run_dir)
        point = _indexed_point(index.get(run_dir.name), stat)
        if point is None:
            try:
                fields = _read_fields(run_dir)
            except UntrustedInputError as err:
                skipped.append(f"{err}: left out of the history")
                continue
            point = _point_of(fields)
            if stat is not None:
                index[run_dir.name] = _Entry(stat=stat, fields=fields)
                changed = True
        points.append(point)
    if changed:
        kept = {name: entry for name, entry in index.items() if (cs.dir / RUNS_DIR / name).is_dir()}
        text = json.dumps(_Index(entries=kept).model_dump(mode="json"))
        with suppress(OSError, EvalError):  # a cache: the history stands without it (a read-only set)
            write_private(cs, HISTORY_INDEX, text)
    return RunHistory(points, skipped)


def earlier_history(cs: CaseSet, before: str | None = None, limit: int = MAX_HISTORY) -> RunHistory:
    """The set's runs before run `before` (None: every run on disk), oldest first, the last `limit - 1`.

    What a report's history holds besides its own run: `graft-eval run` reads it before its first
    case (`publish.read_prior`), so the last case is followed only by what depends on the rows.
    """
    runs = run_dirs(cs.dir)
    names = [p.name for p in runs]
    # publishing: every run on disk is earlier; re-rendering a past run: those before it
    earlier = runs[: names.index(before)] if before in names else runs
    return read_points(cs, earlier[-(limit - 1) :] if limit > 1 else [])


def with_report(earlier: RunHistory, report: EvalReport) -> RunHistory:
    """`earlier` (from `earlier_history`) and `report`'s own point, last."""
    return RunHistory([*earlier.points, _point(report)], earlier.skipped)


def load_history(cs: CaseSet, report: EvalReport, limit: int = MAX_HISTORY) -> RunHistory:
    """The set's runs up to and including `report`, oldest first, the last `limit` of them.

    `report` need not be on disk yet; an unreadable run is skipped and named in `skipped`.
    """
    return with_report(earlier_history(cs, report.run_id, limit), report)
