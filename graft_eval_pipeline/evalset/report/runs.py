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


RUN_ID_PREFIX = r"^\d{1,8}(T\d{0,6}(Z(-[0-9a-f]{0,4})?)?)?$"
"""The start of a run id, like a short git commit: `20261201T2306`, `20261201T230647Z-3f`."""


def is_run_id_prefix(ref: str) -> bool:
    return bool(re.match(RUN_ID_PATTERN, ref) or re.match(RUN_ID_PREFIX, ref))


def find_run(cs: CaseSet, run_id: str | None, option: str = "--run") -> Path:
    """The folder of run `run_id` of the set (a whole run id or its start), or of its latest run.

    A start matches when only one run starts so; a clear error naming `option` when the id is
    malformed, names no run, or starts several (listed).
    """
    if run_id is None:
        return latest_run(cs)
    if not is_run_id_prefix(run_id):
        raise EvalError(
            f"{option} {run_id!r} is not a run id or the start of one (YYYYMMDDTHHMMSSZ-xxxx, a folder "
            "under runs/)"
        )
    runs = run_dirs(cs.dir)
    exact = [p for p in runs if p.name == run_id]
    found = exact or [p for p in runs if p.name.startswith(run_id)]
    if len(found) > 1:
        shown = ", ".join(p.name for p in found[:SHOWN_RUN_IDS])
        more = f" and {len(found) - SHOWN_RUN_IDS} more" if len(found) > SHOWN_RUN_IDS else ""
        raise EvalError(
            f"{option} {run_id} is ambiguous in set {cs.set_id}: {len(found)} runs start with it "
            f"({shown}{more}); give more of the id"
        )
    if not found:
        latest = ", ".join(p.name for p in runs[-SHOWN_RUN_IDS:]) or "none"
        raise EvalError(
            f"{option}: set {cs.set_id} has no run {run_id} with a report.json; latest runs: {latest}"
        )
    return found[0]


def resolve_report_path(ref: str, cs: CaseSet | None, option: str) -> Path:
    """The report.json that `ref` names (a report.json, a run folder, or a run id of the set or its start).

    EvalError (exit 2) naming the option otherwise.
    """
    path = Path(ref)
    if path.is_file():
        return path
    if path.is_dir() and (path / REPORT_FILE).is_file():
        return path / REPORT_FILE
    if is_run_id_prefix(ref):
        if cs is None:
            raise EvalError(
                f"{option} {ref} is a run id: add --set <set folder> so its runs/ can be searched"
            )
        return find_run(cs, ref, option) / REPORT_FILE
    raise EvalError(
        f"{option} {ref}: no such report.json file or run folder, and not a run id or its start "
        "(YYYYMMDDTHHMMSSZ-xxxx with --set)"
    )
