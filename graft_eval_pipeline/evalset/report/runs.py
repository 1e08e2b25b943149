"""A set's runs on disk (`runs/<runId>/report.json`): their order, the latest one, and the run a person names.

The one home of both questions, for every command that reads runs (`cases`, `view`, `history`,
`summary` and the main job's summary, `compare`, `calibration`) and for the history in report.html,
so no two of them can disagree.

The order: by the second the run started (the run id's time, which is also the report's
`createdAt`), then, for runs started in the same second, by when their report.json was written
(the run that finished last is the latest), then by run id, so that it is a total order even
when two reports were written within one tick of the file system's clock.
"""

from __future__ import annotations

import re
from pathlib import Path

from graft_eval_pipeline.evalset.report.files import REPORT_FILE
from graft_eval_pipeline.evalset.scoring import RUN_ID_PATTERN
from graft_eval_pipeline.evalset.sets import RUNS_DIR, CaseSet, EvalError

SHOWN_RUN_IDS = 5  # the latest run ids an unknown --run names


def no_run_yet(cs: CaseSet) -> str:
    """What every command says about a set without a run."""
    return f"set {cs.set_id} has no run yet: run `graft-eval run --set {cs.dir}` first"


def _order(run_dir: Path) -> tuple[str, int, str]:
    return run_dir.name.partition("-")[0], (run_dir / REPORT_FILE).stat().st_mtime_ns, run_dir.name


def run_dirs(set_dir: Path) -> list[Path]:
    """Every `runs/<runId>/` holding a report.json, oldest first (the order above)."""
    runs = Path(set_dir) / RUNS_DIR
    if not runs.is_dir():
        return []
    found = [p for p in runs.iterdir() if re.match(RUN_ID_PATTERN, p.name) and (p / REPORT_FILE).is_file()]
    return sorted(found, key=_order)


def latest_run(cs: CaseSet, option: str | None = None) -> Path:
    """The folder of the set's latest run.

    EvalError (exit 2) when it has none, naming the option whose default it is, if any.
    """
    runs = run_dirs(cs.dir)
    if not runs:
        raise EvalError(f"{option}: {no_run_yet(cs)}" if option else no_run_yet(cs))
    return runs[-1]


def find_run(cs: CaseSet, run_id: str | None, option: str = "--run") -> Path:
    """The folder of run `run_id` of the set, or of its latest run.

    A clear error naming `option` when the id is malformed or the set has no such run.
    """
    if run_id is None:
        return latest_run(cs)
    if not re.match(RUN_ID_PATTERN, run_id):
        raise EvalError(f"{option} {run_id!r} is not a run id (YYYYMMDDTHHMMSSZ-xxxx, a folder under runs/)")
    runs = run_dirs(cs.dir)
    found = Path(cs.dir) / RUNS_DIR / run_id
    if found not in runs:
        latest = ", ".join(p.name for p in runs[-SHOWN_RUN_IDS:]) or "none"
        raise EvalError(
            f"{option}: set {cs.set_id} has no run {run_id} with a report.json; latest runs: {latest}"
        )
    return found


def resolve_report_path(ref: str, cs: CaseSet | None, option: str) -> Path:
    """The report.json that `ref` names (a report.json, a run folder, or a run id of the set).

    EvalError (exit 2) naming the option otherwise.
    """
    path = Path(ref)
    if path.is_file():
        return path
    if path.is_dir() and (path / REPORT_FILE).is_file():
        return path / REPORT_FILE
    if re.fullmatch(RUN_ID_PATTERN, ref):
        if cs is None:
            raise EvalError(
                f"{option} {ref} is a run id: add --set <set folder> so its runs/ can be searched"
            )
        return find_run(cs, ref, option) / REPORT_FILE
    raise EvalError(
        f"{option} {ref}: no such report.json file or run folder, and not a run id "
        "(YYYYMMDDTHHMMSSZ-xxxx with --set)"
    )
