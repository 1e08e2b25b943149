"""The reports `graft-eval compare` and `calibration` read.

The runs named with --base, --new or --run (runs.py resolves a report.json, a run folder or a run
id), or the set's defaults (its baseline and its latest run). Errors say which option was wrong and
how to name a run instead.
"""

from __future__ import annotations

from pathlib import Path

from graft_eval_pipeline.evalset.report.files import REPORT_FILE, load_report
from graft_eval_pipeline.evalset.report.publish import default_baseline_path
from graft_eval_pipeline.evalset.report.runs import latest_run, resolve_report_path
from graft_eval_pipeline.evalset.scoring import EvalReport
from graft_eval_pipeline.evalset.sets import CaseSet, EvalError


def compare_paths(base_ref: str | None, new_ref: str | None, cs: CaseSet | None) -> tuple[Path, Path]:
    """The two report.json files `graft-eval compare` (and `view --base/--new`) names.

    With a set, the defaults are its baseline (base) and its latest run (new).
    """
    if cs is None and (base_ref is None or new_ref is None):
        raise EvalError(
            "name both runs with --base and --new, or add --set to default to its baseline and latest run"
        )
    if base_ref is not None:
        base = resolve_report_path(base_ref, cs, "--base")
    else:
        assert cs is not None
        base = default_baseline_path(cs.dir, cs.meta)
        if not base.is_file():
            raise EvalError(
                f"--base: set {cs.set_id} has no baseline at {base}: name a run with --base, or save one "
                "with graft-eval run --save-baseline"
            )
    if new_ref is not None:
        new = resolve_report_path(new_ref, cs, "--new")
    else:
        assert cs is not None
        new = latest_run(cs, "--new") / REPORT_FILE
    return base, new


def compare_inputs(
    base_ref: str | None, new_ref: str | None, cs: CaseSet | None
) -> tuple[EvalReport, EvalReport]:
    """The two reports `compare_paths` names, loaded."""
    base, new = compare_paths(base_ref, new_ref, cs)
    return load_report(base), load_report(new)


def chosen_report(run_ref: str | None, cs: CaseSet | None, option: str = "--run") -> EvalReport:
    """The report `run_ref` names, or the set's latest run."""
    if run_ref is not None:
        return load_report(resolve_report_path(run_ref, cs, option))
    if cs is None:
        raise EvalError(f"name a run with {option}, or add --set to take its latest run")
    return load_report(latest_run(cs) / REPORT_FILE)
