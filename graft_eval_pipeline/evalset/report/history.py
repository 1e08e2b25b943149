"""How the headline rates moved over a set's runs: `runs/<runId>/report.json`, oldest first.

Only the metrics of each report are read (plain JSON, no validation of every case row), so a
set with many large runs still renders quickly; a report that cannot be read is skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graft_eval_pipeline.evalset.report.files import REPORT_FILE
from graft_eval_pipeline.evalset.report.headline import HEADLINE_RATES, headline_metrics
from graft_eval_pipeline.evalset.report.runs import run_dirs
from graft_eval_pipeline.evalset.scoring import EvalReport

MAX_HISTORY = 50


@dataclass(frozen=True)
class HistoryPoint:
    run_id: str
    llm: str
    case_set_hash: str
    rates: dict[str, float | None]  # headline metric -> value


def _rate_value(stored: Any) -> float | None:
    """A stored rate: `{k, n, value, ci95, method}` (schema 2) or a bare number (schema 1)."""
    value = stored.get("value") if isinstance(stored, dict) else stored
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return None if value is None else float(value)
    raise TypeError("not a rate")


def _point(report: EvalReport) -> HistoryPoint:
    return HistoryPoint(
        report.run_id,
        report.llm,
        report.set.case_set_hash,
        {h.name: h.value for h in headline_metrics(report.metrics)},
    )


def _read_point(path: Path) -> HistoryPoint | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        metrics = data["metrics"]
        rates = {name: _rate_value(metrics.get(name)) for name in HEADLINE_RATES}
        point = HistoryPoint(str(data["runId"]), str(data["llm"]), str(data["set"]["caseSetHash"]), rates)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return point


def load_history(set_dir: Path, report: EvalReport, limit: int = MAX_HISTORY) -> list[HistoryPoint]:
    """The set's runs up to and including `report` (which need not be on disk yet), oldest first,
    the last `limit` of them."""
    runs = run_dirs(set_dir)
    names = [p.name for p in runs]
    # publishing: every run on disk is earlier; re-rendering a past run: those before it
    earlier = runs[: names.index(report.run_id)] if report.run_id in names else runs
    earlier = earlier[-(limit - 1) :] if limit > 1 else []
    points = [point for p in earlier if (point := _read_point(p / REPORT_FILE)) is not None]
    return [*points, _point(report)]
