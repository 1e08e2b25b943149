"""The reports `graft-eval compare` and `calibration` read.

The runs named with --base, --new or --run (runs.py resolves a report.json, a run folder or a run
id), or the set's defaults (its baseline and its latest run). Errors say which option was wrong and
how to name a run instead.
"""

from __future__ import annotations

from graft_eval_pipeline.evalset.report.files import REPORT_FILE, load_report
from graft_eval_pipeline.evalset.report.publish import default_baseline_path
from graft_eval_pipeline.evalset.report.runs import latest_run, resolve_report_path
from graft_eval_pipeline.evalset.scoring import EvalReport
from graft_eval_pipeline.evalset.sets import CaseSet, EvalError


def compare_inputs(
    base_ref: str | None, new_ref: str | None, cs: CaseSet | None
) -> tuple[EvalReport, EvalReport]:
    """The two reports `graft-eval compare` names.

    With a set, the defaults are its baseline (base) and its latest run (new).
    """
    if cs is None and (base_ref is None or new_ref is None):
        raise EvalError(
            "name both runs with --base and --new, or add --set to default to its baseline and latest run"
        )
    if base_ref is not None:
        base = load_report(resolve_report_path(base_ref, cs, "--base"))
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
        new = load_report(resolve_report_path(new_ref, cs, "--new"))
    else:
        assert cs is not None
        new = load_report(latest_run(cs, "--new") / REPORT_FILE)
    return base, new


def chosen_report(run_ref: str | None, cs: CaseSet | None, option: str = "--run") -> EvalReport:
    """The report `run_ref` names, or the set's latest run."""
    if run_ref is not None:
        return load_report(resolve_report_path(run_ref, cs, option))
    if cs is None:
        raise EvalError(f"name a run with {option}, or add --set to take its latest run")
    return load_report(latest_run(cs) / REPORT_FILE)
