"""A shared instance on PostgreSQL.

The Postgres storage block of docs/deploying.md materializes the synthetic partition and the sensors
read it back; two launches of one partition through the queued run coordinator of
deploy/dagster.yaml run one after the other, the second QUEUED while the first runs. Each test has a
database of its own (conftest.py); skipped without a server, failed without one under CI=true.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import ModuleTarget
from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon

from graft_eval_pipeline.definitions import defs
from graft_eval_pipeline.defs.assets import EVALUATION_GROUP
from graft_eval_pipeline.defs.assets.evaluation import eval_report
from graft_eval_pipeline.defs.io_manager import SealedIOManager
from graft_eval_pipeline.defs.jobs import evaluate_case_set_job
from graft_eval_pipeline.defs.partitions import CASE_SET_PARTITIONS
from graft_eval_pipeline.defs.resources import CaseSetsResource, GitHubResource
from graft_eval_pipeline.defs.sensors import case_set_registry_sensor, prompt_change_sensor
from graft_eval_pipeline.evalset.sets.paths import EVAL_REPO_VAR
from graft_eval_pipeline_tests.deploy.conftest import DEPLOY_DIR, PgServer
from graft_eval_pipeline_tests.deploy.test_deploy_files import DOCS_POSTGRES_BLOCK, PARTITION_LIMIT

pytestmark = pytest.mark.slow  # a Postgres server

PARTITION = "synthetic"
IN_PROGRESS = {dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED}
DONE = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}
RUN_TIMEOUT_S = 300
WAIT_FOR_CODE_SERVER = "\ncode_servers:\n  wait_for_local_processes_on_shutdown: true\n"


def _instance(home: Path, yaml_text: str) -> dg.DagsterInstance:
    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text(yaml_text, encoding="utf-8")
    return dg.DagsterInstance.from_config(str(home))


def _synthetic_dir() -> Path:
    return Path(os.environ[EVAL_REPO_VAR]) / "eval" / "synthetic"


def test_docs_postgres_block_materializes_the_synthetic_partition_and_sensors_read_it(
    tmp_path: Path, deployment: PgServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance = _instance(tmp_path / "dagster-home", DOCS_POSTGRES_BLOCK)
    try:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert instance.run_coordinator.get_run_queue_config().tag_concurrency_limits == [PARTITION_LIMIT]  # type: ignore[attr-defined]
        sets = CaseSetsResource(eval_dir=os.environ["GRAFT_EVAL_DIR"], synthetic_dir=str(_synthetic_dir()))

        # the registry sensor, on an instance that knows no set yet, registers the synthetic one
        registry = case_set_registry_sensor(
            dg.build_sensor_context(instance=instance, resources={"case_sets": sets})
        )
        assert isinstance(registry, dg.SensorResult)
        (add,) = registry.dynamic_partitions_requests or []
        assert isinstance(add, dg.AddDynamicPartitionsRequest) and list(add.partition_keys) == [PARTITION]
        instance.add_dynamic_partitions(CASE_SET_PARTITIONS, [PARTITION])

        result = dg.materialize(
            [a for a in defs.assets or [] if isinstance(a, dg.AssetsDefinition)],
            selection=dg.AssetSelection.groups(EVALUATION_GROUP),
            partition_key=PARTITION,
            instance=instance,
            resources={
                "case_sets": sets,
                "github": GitHubResource(),
                "io_manager": SealedIOManager(sets=sets),
            },
        )
        assert result.success
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=eval_report.key, asset_partitions=[PARTITION]), limit=5
        ).records
        assert [r.run_id for r in records] == [result.run_id]
        (run_dir,) = (_synthetic_dir() / "runs").iterdir()
        assert (run_dir / "report.json").is_file()

        # the prompt-change sensor reads the last report's signature back from Postgres
        context = dg.build_sensor_context(instance=instance, resources={"case_sets": sets})
        unchanged = prompt_change_sensor(context)
        assert isinstance(unchanged, dg.SensorResult) and not unchanged.run_requests
        assert unchanged.skip_reason is not None
        os.environ["GRAFT_LLM_MODEL_FAST"] = "claude-haiku-9-9"
        try:
            changed = prompt_change_sensor(
                dg.build_sensor_context(instance=instance, resources={"case_sets": sets})
            )
        finally:
            del os.environ["GRAFT_LLM_MODEL_FAST"]
        assert isinstance(changed, dg.SensorResult)
        assert [r.partition_key for r in changed.run_requests or []] == [PARTITION]
        again = case_set_registry_sensor(
            dg.build_sensor_context(instance=instance, resources={"case_sets": sets})
        )
        assert isinstance(again, dg.SensorResult) and not again.dynamic_partitions_requests
    finally:
        instance.dispose()


def _launch(home: Path, workdir: Path) -> str:
    """`dagster job launch` as a user types it: the run goes to the instance's queue."""
    proc = subprocess.run(
        [
            str(Path(sys.executable).with_name("dagster")),
            "job",
            "launch",
            "-m",
            "graft_eval_pipeline.definitions",
            "-j",
            evaluate_case_set_job.name,
            "--tags",
            json.dumps({"dagster/partition": PARTITION}),
        ],
        env={**os.environ, "DAGSTER_HOME": str(home)},
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout + proc.stderr


def test_second_launch_of_a_partition_waits_in_the_queue_until_the_first_ends(
    tmp_path: Path, deployment: PgServer
) -> None:
    home = tmp_path / "dagster-home"
    # The workspace below starts a code server process; waiting for it on exit keeps it from
    # outliving the test (it would retry the dropped database for ever).
    yaml_text = (DEPLOY_DIR / "dagster.yaml").read_text(encoding="utf-8") + WAIT_FOR_CODE_SERVER
    instance = _instance(home, yaml_text)
    try:
        instance.add_dynamic_partitions(CASE_SET_PARTITIONS, [PARTITION])
        workdir = tmp_path / "work"
        workdir.mkdir()
        _launch(home, workdir)
        _launch(home, workdir)
        second, first = instance.get_runs()  # newest first
        assert {first.status, second.status} == {dg.DagsterRunStatus.QUEUED}
        assert first.tags["dagster/partition"] == second.tags["dagster/partition"] == PARTITION

        target = ModuleTarget(
            module_name="graft_eval_pipeline.definitions",
            attribute=None,
            working_directory=str(workdir),
            location_name=None,  # named after the module, as `dagster job launch -m` names it
        )
        daemon = QueuedRunCoordinatorDaemon(interval_seconds=1)
        seen_waiting = 0
        with WorkspaceProcessContext(instance, target) as workspace:
            deadline = time.monotonic() + 2 * RUN_TIMEOUT_S
            while True:
                list(daemon.run_iteration(workspace))
                a = instance.get_run_by_id(first.run_id)
                b = instance.get_run_by_id(second.run_id)
                assert a is not None and b is not None
                if a.status not in DONE:
                    # while the first is queued, starting or running, the second never leaves the queue
                    assert b.status == dg.DagsterRunStatus.QUEUED, (a.status, b.status)
                    seen_waiting += a.status in IN_PROGRESS
                if b.status in DONE:
                    break
                assert time.monotonic() < deadline, f"runs still {a.status}, {b.status}"
                time.sleep(0.5)
        assert seen_waiting >= 1  # the second was seen QUEUED while the first ran
        a_record = instance.get_run_record_by_id(first.run_id)
        b_record = instance.get_run_record_by_id(second.run_id)
        assert a_record is not None and b_record is not None
        assert a_record.dagster_run.status == b_record.dagster_run.status == dg.DagsterRunStatus.SUCCESS
        assert a_record.end_time is not None and b_record.start_time is not None
        assert b_record.start_time >= a_record.end_time
        assert len(list((_synthetic_dir() / "runs").iterdir())) == 2
    finally:
        instance.dispose()
        shutil.rmtree(home / "storage", ignore_errors=True)
