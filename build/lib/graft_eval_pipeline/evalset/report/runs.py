"""A set's runs on disk: `runs/<runId>/` folders, found by id or as the latest (ids sort by time).

`graft-eval cases`, `graft-eval view` and the HTML report's metric history read runs from here.
"""

from __future__ import annotations

import re
from pathlib import Path

from graft_eval_pipeline.evalset.report.files import REPORT_FILE
from graft_eval_pipeline.evalset.scoring import RUN_ID_PATTERN
from graft_eval_pipeline.evalset.sets import RUNS_DIR, CaseSet, EvalError

SHOWN_RUN_IDS = 5


def _age(run_dir: Path) -> tuple[str, int]:
    """Run ids carry the second they started; two runs in one second are told apart by when
    their report.json was written (the id's random suffix says nothing about order)."""
    return run_dir.name.partition("-")[0], (run_dir / REPORT_FILE).stat().st_mtime_ns


def run_dirs(set_dir: Path) -> list[Path]:
    """Every `runs/<runId>/` holding a report.json, oldest first."""
    runs = Path(set_dir) / RUNS_DIR
    if not runs.is_dir():
        return []
    found = [p for p in runs.iterdir() if re.match(RUN_ID_PATTERN, p.name) and (p / REPORT_FILE).is_file()]
    return sorted(found, key=_age)


def find_run(cs: CaseSet, run_id: str | None) -> Path:
    """The folder of run `run_id`, or of the latest run; a clear error when there is none."""
    runs = run_dirs(cs.dir)
    if run_id is None:
        if not runs:
            raise EvalError(f"set {cs.set_id} has no run yet: run `graft-eval run --set {cs.dir}` first")
        return runs[-1]
    if not re.match(RUN_ID_PATTERN, run_id):
        raise EvalError(f"--run {run_id!r} is not a run id (YYYYMMDDTHHMMSSZ-xxxx, a folder under runs/)")
    found = Path(cs.dir) / RUNS_DIR / run_id
    if found not in runs:
        latest = ", ".join(p.name for p in runs[-SHOWN_RUN_IDS:]) or "none"
        raise EvalError(f"set {cs.set_id} has no run {run_id} with a report.json; latest runs: {latest}")
    return found
