"""The executor is chosen by run config or GRAFT_EVAL_EXECUTOR, with the shipped `definitions.py` (issue 21).

In-process by default, each step in its own process on `multiprocess` run config (as the celery and
k8s executors run steps), and the celery / k8s executors by name.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from graft_eval_pipeline.defs.assets.evaluation import eval_report
from graft_eval_pipeline.defs.executor import (
    DEFAULT_EXECUTOR,
    EXECUTOR_VAR,
    executor_from_env,
    in_process_or_multiprocess_executor,
)
from graft_eval_pipeline.evalset.sets import EvalError
from graft_eval_pipeline.evalset.sets.paths import EVAL_REPO_VAR, REPO_ROOT
from graft_eval_pipeline_tests.builders import copy_eval_home
from graft_eval_pipeline_tests.defs.multiprocess_job import evaluation_job

PARTITION = "synthetic"
EVALUATION_STEPS = 7  # label_import … eval_comparison, with the checks in their assets' steps
MULTIPROCESS = {
    "execution": {"config": {"multiprocess": {"max_concurrent": 2, "start_method": {"spawn": {}}}}}
}


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_config: dict[str, Any]) -> dg.ExecutionResult:
    """The shipped evaluation job on a copy of eval/ (GRAFT_EVAL_REPO), as a reconstructable job."""
    home = copy_eval_home(tmp_path / "repo")
    monkeypatch.setenv(EVAL_REPO_VAR, str(home))
    monkeypatch.setenv("GRAFT_EVAL_DIR", str(tmp_path / "pilots"))
    monkeypatch.delenv("GRAFT_EVAL_KEY", raising=False)
    (tmp_path / "dagster-home").mkdir()
    instance = dg.instance_for_test(temp_dir=str(tmp_path / "dagster-home"))
    with instance as inst:
        inst.add_dynamic_partitions("case_set", [PARTITION])
        result = dg.execute_job(
            dg.reconstructable(evaluation_job),
            instance=inst,
            run_config=run_config,
            tags={"dagster/partition": PARTITION},
        )
        assert result.success
        assert inst.get_latest_materialization_event(eval_report.key) is not None
    (run_dir,) = (home / "eval" / "synthetic" / "runs").iterdir()
    assert (run_dir / "report.html").is_file()
    return result


def _step_pids(result: dg.ExecutionResult) -> list[int | None]:
    return [e.pid for e in result.all_events if e.event_type_value == "STEP_START"]


def test_shipped_job_runs_in_process_without_run_config() -> None:
    """No `execution` in run config.

    The whole run in one process (the test above shows the choice is real; every in-process
    materialization of the other tests runs this way).
    """
    job = evaluation_job()
    assert job.executor_def.name == DEFAULT_EXECUTOR
    assert list(dg.validate_run_config(job, {})["execution"][DEFAULT_EXECUTOR]) == ["in_process"]


@pytest.mark.slow  # a process per step
def test_multiprocess_run_config_puts_each_step_in_its_own_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/deploying.md's scale-out claim.

    Steps in separate processes share only the set folder and the IO manager's files, as with the
    k8s or celery executors; the checks come out the same.
    """
    result = _run(tmp_path, monkeypatch, MULTIPROCESS)
    pids = _step_pids(result)
    assert len(pids) == EVALUATION_STEPS and len(set(pids)) == EVALUATION_STEPS and os.getpid() not in pids
    checks = {
        e.asset_check_evaluation_data.check_name: e.asset_check_evaluation_data.passed
        for e in result.all_events
        if e.event_type_value == "ASSET_CHECK_EVALUATION"
    }
    # the synthetic set has one labeler: no pair compared, so the agreement check is skipped
    assert checks == {
        "thresholds": True,
        "baseline_match": True,
        "baseline_usage": True,
        "no_regression": True,
        "risk_kappa_meets_target": True,
    }


def test_executor_config_is_checked_by_dagsters_own_schema() -> None:
    @dg.op
    def one() -> int:
        return 1

    @dg.job(executor_def=in_process_or_multiprocess_executor)
    def tiny() -> None:
        one()

    assert tiny.run_config_schema.config_type.fields["execution"] is not None  # type: ignore[attr-defined]
    with pytest.raises(dg.DagsterInvalidConfigError, match="max_concurent"):
        dg.validate_run_config(tiny, {"execution": {"config": {"multiprocess": {"max_concurent": 2}}}})
    with pytest.raises(dg.DagsterInvalidConfigError):
        dg.validate_run_config(tiny, {"execution": {"config": {"in_process": {}, "multiprocess": {}}}})
    chosen = dg.validate_run_config(tiny, {"execution": {"config": {"multiprocess": {"max_concurrent": 2}}}})
    assert chosen["execution"][DEFAULT_EXECUTOR]["multiprocess"]["max_concurrent"] == 2


@pytest.mark.parametrize(("name", "executor"), [("", DEFAULT_EXECUTOR), ("celery", "celery"), ("k8s", "k8s")])
def test_environment_variable_names_the_executor(name: str, executor: str) -> None:
    assert executor_from_env({EXECUTOR_VAR: name}).name == executor


def test_unknown_executor_name_is_refused_naming_the_choices() -> None:
    with pytest.raises(
        EvalError, match=r"GRAFT_EVAL_EXECUTOR='dask' is not an executor: use one of .*celery, k8s"
    ):
        executor_from_env({EXECUTOR_VAR: "dask"})


@pytest.mark.slow  # loads the definitions in a subprocess
def test_shipped_definitions_take_the_executor_from_the_environment() -> None:
    """A code location started with GRAFT_EVAL_EXECUTOR=k8s runs every job's steps as k8s jobs."""
    code = (
        "from graft_eval_pipeline.definitions import defs\n"
        "print(sorted({defs.resolve_job_def(j.name).executor_def.name for j in defs.jobs or []}))\n"
    )
    env = {**os.environ, EXECUTOR_VAR: "k8s"}
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO_ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "['k8s']"
