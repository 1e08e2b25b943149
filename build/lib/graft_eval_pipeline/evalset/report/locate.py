"""Find a run's report from what a person types: a report.json path, a run folder or a run id.

`graft-eval compare` and `summary` name runs either way; a run id needs the set whose `runs/`
holds it. Errors say which option was wrong and how to name a run instead.
"""

from __future__ import annotations

import re
from pathlib import Path

from graft_eval_pipeline.evalset.report.files import REPORT_FILE, load_report
from graft_eval_pipeline.evalset.report.publish import default_baseline_path
from graft_eval_pipeline.evalset.report.runs import run_dirs
from graft_eval_pipeline.evalset.scoring import RUN_ID_PATTERN, EvalReport
from graft_eval_pipeline.evalset.sets import RUNS_DIR, CaseSet, EvalError


def latest_report_path(set_dir: Path) -> Path | None:
    runs = run_dirs(set_dir)
    return runs[-1] / REPORT_FILE if runs else None


def resolve_report_path(ref: str, set_dir: Path | None, option: str) -> Path:
    """The report.json that `ref` names; EvalError (exit 2) naming the option otherwise."""
    path = Path(ref)
    if path.is_file():
        return path
    if path.is_dir() and (path / REPORT_FILE).is_file():
        return path / REPORT_FILE
    if re.fullmatch(RUN_ID_PATTERN, ref):
        if set_dir is None:
            raise EvalError(
                f"{option} {ref} is a run id: add --set <set folder> so its runs/ can be searched"
            )
        candidate = Path(set_dir) / RUNS_DIR / ref / REPORT_FILE
        if not candidate.is_file():
            raise EvalError(
                f"{option}: no run {ref} in {Path(set_dir) / RUNS_DIR}: check the id against that folder"
            )
        return candidate
    raise EvalError(
        f"{option} {ref}: no such report.json file or run folder, and not a run id "
        "(YYYYMMDDTHHMMSSZ-xxxx with --set)"
    )


def resolve_report(ref: str, set_dir: Path | None, option: str) -> tuple[Path, EvalReport]:
    path = resolve_report_path(ref, set_dir, option)
    return path, load_report(path)


def compare_inputs(
    base_ref: str | None, new_ref: str | None, cs: CaseSet | None
) -> tuple[EvalReport, EvalReport]:
    """The two reports `graft-eval compare` names; with a set, the defaults are its baseline (base)
    and its latest run (new)."""
    set_dir = cs.dir if cs is not None else None
    if cs is None and (base_ref is None or new_ref is None):
        raise EvalError(
            "name both runs with --base and --new, or add --set to default to its baseline and latest run"
        )
    if base_ref is not None:
        _, base = resolve_report(base_ref, set_dir, "--base")
    else:
        assert cs is not None
        path = default_baseline_path(cs.dir, cs.meta)
        if not path.is_file():
            raise EvalError(
                f"--base: set {cs.set_id} has no baseline at {path}: name a run with --base, or save one "
                "with graft-eval run --save-baseline"
            )
        base = load_report(path)
    if new_ref is not None:
        _, new = resolve_report(new_ref, set_dir, "--new")
    else:
        assert cs is not None
        latest = latest_report_path(cs.dir)
        if latest is None:
            raise EvalError(f"--new: set {cs.set_id} has no run yet: run graft-eval run --set {cs.dir} first")
        new = load_report(latest)
    return base, new


def chosen_report(run_ref: str | None, cs: CaseSet | None, option: str = "--run") -> EvalReport:
    """The report `run_ref` names, or the set's latest run."""
    if run_ref is not None:
        return resolve_report(run_ref, cs.dir if cs is not None else None, option)[1]
    if cs is None:
        raise EvalError(f"name a run with {option}, or add --set to take its latest run")
    latest = latest_report_path(cs.dir)
    if latest is None:
        raise EvalError(f"set {cs.set_id} has no run yet: run graft-eval run --set {cs.dir} first")
    return load_report(latest)
