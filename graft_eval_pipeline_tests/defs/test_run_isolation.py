"""One run, one report: overlapping runs of one set each publish a report from their own values.

One run, one report: overlapping runs of one set (CLI and Dagster, in separate processes) each
publish a report built from their own run's values only, and a writer waits for a held set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import dagster as dg
import pytest
from dagster._core.instance.ref import InstanceRef

from graft_eval_pipeline.evalset.report.files import load_report
from graft_eval_pipeline.evalset.scoring import REPORT_INPUTS
from graft_eval_pipeline.evalset.sets import take_hold, this_process
from graft_eval_pipeline.evalset.sets.hold import read_holder
from graft_eval_pipeline_tests.builders import copy_synthetic
from graft_eval_pipeline_tests.defs.location import EVAL_DIR_VAR, SYNTHETIC_DIR_VAR

pytestmark = pytest.mark.slow  # each test runs CLI or Dagster runs in processes side by side

BIN = Path(sys.executable).parent
FEW = ["syn-001-docs-typo", "syn-002-comment-typo", "syn-003-discount-logic"]
ALL_CASES = 30


def _env(tmp_path: Path, synthetic: Path) -> dict[str, str]:
    home = tmp_path / "dagster_home"
    home.mkdir(exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRAFT_", "DAGSTER_"))}
    return {
        **env,
        "DAGSTER_HOME": str(home),
        "GRAFT_EVAL_DIR": str(tmp_path / "pilots"),
        EVAL_DIR_VAR: str(tmp_path / "pilots"),
        SYNTHETIC_DIR_VAR: str(synthetic),
    }


def _register(env: dict[str, str]) -> None:
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(env["DAGSTER_HOME"])) as instance:
        instance.add_dynamic_partitions("case_set", ["synthetic"])


def _cli(synthetic: Path, env: dict[str, str], cases: list[str] | None, *extra: str) -> subprocess.Popen[str]:
    selection = ["--cases", ",".join(cases)] if cases else []
    return subprocess.Popen(
        [str(BIN / "graft-eval"), "run", "--set", str(synthetic), "--quiet", *selection, *extra],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _materialize_command(cases: list[str] | None) -> list[str]:
    """`dagster asset materialize` of the evaluation group of the synthetic partition.

    The project's assets over the test's set copy, with the harness's case selection.
    """
    config = {"ops": {"harness_run": {"config": {"cases": cases or []}}}}
    return [
        str(BIN / "dagster"),
        "asset",
        "materialize",
        "-m",
        "graft_eval_pipeline_tests.defs.location",
        "--select",
        "group:evaluation",
        "--partition",
        "synthetic",
        "--config-json",
        json.dumps(config),
    ]


def _dagster(env: dict[str, str], cases: list[str] | None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        _materialize_command(cases), env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    out, err = process.communicate(timeout=300)
    return process.returncode, out + err


class Published(NamedTuple):
    run_id: str
    cases: int
    inputs: dict[str, str] | None


def _reports(synthetic: Path) -> list[Published]:
    return [
        Published(report.run_id, len(report.cases), report.inputs)
        for report in (load_report(p) for p in sorted((synthetic / "runs").glob("*/report.json")))
    ]


def _dagster_runs(env: dict[str, str]) -> dict[str, int]:
    """Dagster run id -> how many cases its harness_run config selected (0: all)."""
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(env["DAGSTER_HOME"])) as instance:
        return {run.run_id: len(_selected(run.run_config)) for run in instance.get_runs()}


def _latest_harness_run(env: dict[str, str]) -> str:
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(env["DAGSTER_HOME"])) as instance:
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("harness_run"), asset_partitions=["synthetic"]),
            limit=1,
        ).records
        return records[0].run_id


def _selected(run_config: Mapping[str, Any]) -> list[str]:
    cases: list[str] = run_config["ops"]["harness_run"]["config"].get("cases", [])
    return cases


def _check_each_report_is_its_own(synthetic: Path, env: dict[str, str], cli_cases: dict[int, int]) -> None:
    """Every report names one run for all its inputs and has that run's case count."""
    dagster_runs = _dagster_runs(env)
    reports = _reports(synthetic)
    assert len(reports) == len(dagster_runs) + len(cli_cases)
    cli_seen = []
    for report in reports:
        assert report.inputs is not None and set(report.inputs) == set(REPORT_INPUTS)
        (source,) = set(report.inputs.values())  # one run made every input
        if source in dagster_runs:
            assert report.cases == (dagster_runs[source] or ALL_CASES)
        else:
            assert source == report.run_id  # a CLI run: its own report run id
            cli_seen.append(report.cases)
    assert sorted(cli_seen) == sorted(n or ALL_CASES for n in cli_cases.values())


@pytest.mark.parametrize("offset_s", [0.0, 0.3])
def test_two_cli_runs_of_one_set_each_report_their_own_cases(tmp_path: Path, offset_s: float) -> None:
    synthetic = copy_synthetic(tmp_path)
    env = _env(tmp_path, synthetic)
    first = _cli(synthetic, env, FEW)
    time.sleep(offset_s)
    second = _cli(synthetic, env, None)
    results = [_finish(first), _finish(second)]
    assert [code for code, _ in results] == [0, 0], results
    _check_each_report_is_its_own(synthetic, env, {0: len(FEW), 1: 0})
    assert read_holder(synthetic) is None


@pytest.mark.parametrize("offset_s", [0.0, 2.0])
def test_two_dagster_runs_of_one_set_each_report_their_own_cases(tmp_path: Path, offset_s: float) -> None:
    synthetic = copy_synthetic(tmp_path)
    env = _env(tmp_path, synthetic)
    _register(env)
    first = _dagster(env, FEW)
    time.sleep(offset_s)
    second = _dagster(env, None)
    outcomes = [_finish(first), _finish(second)]
    assert len(_dagster_runs(env)) == 2, outcomes
    assert len(_reports(synthetic)) == 2, outcomes
    _check_each_report_is_its_own(synthetic, env, {})
    assert read_holder(synthetic) is None
    # card results are one file per run, and a run that completes its own drops the earlier ones
    (kept,) = (synthetic / "assets").glob("harness_run.card-results.*")
    assert kept.name == f"harness_run.card-results.{_latest_harness_run(env)}.jsonl"


@pytest.mark.parametrize(("dagster_first", "offset_s"), [(True, 1.0), (False, 0.2)])
def test_a_cli_run_and_a_dagster_run_of_one_set_each_report_their_own_cases(
    tmp_path: Path, dagster_first: bool, offset_s: float
) -> None:
    synthetic = copy_synthetic(tmp_path)
    env = _env(tmp_path, synthetic)
    _register(env)

    def start(dagster: bool) -> subprocess.Popen[str]:
        return _dagster(env, None) if dagster else _cli(synthetic, env, FEW)

    first = start(dagster_first)
    time.sleep(offset_s)
    second = start(not dagster_first)
    outcomes = [_finish(first), _finish(second)]
    cli_code = outcomes[1 if dagster_first else 0][0]
    assert cli_code == 0, outcomes
    _check_each_report_is_its_own(synthetic, env, {0: len(FEW)})


def _wait_for(process: subprocess.Popen[str], stream_has: str, path: Path, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if stream_has in path.read_text(errors="replace"):
            return
        assert process.poll() is None, path.read_text(errors="replace")
        time.sleep(0.1)
    raise AssertionError(f"never saw {stream_has!r}")


def test_a_cli_run_waits_for_the_holder_and_says_who_it_is(tmp_path: Path) -> None:
    synthetic = copy_synthetic(tmp_path)
    env = _env(tmp_path, synthetic)
    hold = take_hold(synthetic, this_process("graft-eval rescan --apply"))
    err_path = tmp_path / "stderr"
    with err_path.open("w") as err:
        run = subprocess.Popen(
            [str(BIN / "graft-eval"), "run", "--set", str(synthetic), "--quiet"],
            env=env,
            stderr=err,
            text=True,
        )
        _wait_for(run, "is being written by graft-eval rescan --apply (pid", err_path)
        time.sleep(0.5)
        assert run.poll() is None and not (synthetic / "runs").exists()  # still waiting, nothing written
        hold.release()
        assert run.wait(120) == 0
    waiting = [line for line in err_path.read_text().splitlines() if "is being written by" in line]
    assert waiting == [f"set synthetic is being written by {hold.holder.describe()}: waiting for it to end"]
    assert len(_reports(synthetic)) == 1


def test_no_wait_exits_3_naming_the_holder(tmp_path: Path) -> None:
    synthetic = copy_synthetic(tmp_path)
    env = _env(tmp_path, synthetic)
    with_hold = take_hold(synthetic, this_process("dagster run 0123abcd", run_id="0123abcd"))
    code, output = _finish(_cli(synthetic, env, None, "--no-wait"))
    assert code == 3
    assert output.strip() == (
        f"error: set synthetic is being written by {with_hold.holder.describe()}: try again when it ends "
        "(without --no-wait, this command waits for it)"
    )
    assert not (synthetic / "runs").exists()


def test_a_dagster_run_waits_for_a_cli_writer(tmp_path: Path) -> None:
    synthetic = copy_synthetic(tmp_path)
    env = _env(tmp_path, synthetic)
    _register(env)
    hold = take_hold(synthetic, this_process("graft-eval label --apply"))
    err_path = tmp_path / "stderr"
    with err_path.open("w") as err:
        run = subprocess.Popen(
            _materialize_command(None),
            env=env,
            stderr=err,
            stdout=err,
            text=True,
        )
        _wait_for(run, "is being written by graft-eval label --apply", err_path)
        assert not (synthetic / "runs").exists()
        hold.release()
        run.wait(300)
    assert len(_reports(synthetic)) == 1
