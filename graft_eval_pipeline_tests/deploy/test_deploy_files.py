"""The deployment files say one thing (issue 21 §1-2).

One run per case set in every instance config (the shipped dagster.yaml as a real instance), a gRPC
workspace Dagster accepts, Helm values that bring the key and the set volume to the code server and
its runs, an image built by the script CI runs, a wheel without the tests, and eval/ found outside
the checkout.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml
from dagster._core.workspace.config_schema import ensure_workspace_config

from graft_eval_pipeline.evalset.sets.paths import EVAL_REPO_VAR, REPO_ROOT, eval_home
from graft_eval_pipeline_tests.deploy.conftest import DEPLOY_DIR

PARTITION_LIMIT = {"key": "dagster/partition", "value": {"applyLimitPerUniqueValue": True}, "limit": 1}


def _docs_postgres_block() -> str:
    page = (REPO_ROOT / "docs" / "deploying.md").read_text(encoding="utf-8")
    blocks: list[str] = [b for b in re.findall(r"```yaml\n(.*?)```", page, flags=re.S) if "postgres:" in b]
    assert len(blocks) == 1, "docs/deploying.md should hold one Postgres dagster.yaml block"
    return blocks[0]


DOCS_POSTGRES_BLOCK = _docs_postgres_block()


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_shipped_dagster_yaml_queues_at_most_one_run_per_partition(tmp_path: Path) -> None:
    shutil.copy(REPO_ROOT / "dagster.yaml", tmp_path / "dagster.yaml")
    instance = dg.DagsterInstance.from_config(str(tmp_path))
    try:
        coordinator = instance.run_coordinator
        assert type(coordinator).__name__ == "QueuedRunCoordinator"
        assert coordinator.get_run_queue_config().tag_concurrency_limits == [PARTITION_LIMIT]  # type: ignore[attr-defined]
    finally:
        instance.dispose()


@pytest.mark.parametrize("config", ["docs/deploying.md", "deploy/dagster.yaml"])
def test_postgres_examples_queue_at_most_one_run_per_partition(config: str) -> None:
    """As data here; each is loaded into a real instance by test_postgres_instance.py."""
    text = (
        DOCS_POSTGRES_BLOCK
        if config == "docs/deploying.md"
        else (DEPLOY_DIR / "dagster.yaml").read_text(encoding="utf-8")
    )
    data = yaml.safe_load(text)
    assert data["run_coordinator"]["class"] == "QueuedRunCoordinator"
    assert PARTITION_LIMIT in data["run_coordinator"]["config"]["tag_concurrency_limits"]
    assert data["storage"]["postgres"]["postgres_db"]["scheme"] == "postgresql+psycopg2"


def test_deploy_workspace_loads_a_grpc_code_server() -> None:
    workspace: dict[str, Any] = dict(
        ensure_workspace_config(_load(DEPLOY_DIR / "workspace.yaml"), str(DEPLOY_DIR))
    )
    (entry,) = workspace["load_from"]
    assert entry["grpc_server"]["location_name"] == "graft_eval_pipeline"
    dockerfile = (DEPLOY_DIR / "Dockerfile").read_text(encoding="utf-8")
    assert f'"--port", "{entry["grpc_server"]["port"]}"' in dockerfile


def test_helm_values_bring_key_and_set_volume_to_the_code_server_and_its_runs() -> None:
    values = _load(DEPLOY_DIR / "helm-values.yaml")
    (deployment,) = values["dagster-user-deployments"]["deployments"]
    env = {e["name"]: e["value"] for e in deployment["env"]}
    (mount,) = deployment["volumeMounts"]
    assert {"name": "graft-eval-key"} in deployment["envSecrets"]
    assert env["GRAFT_EVAL_DIR"].startswith(mount["mountPath"] + "/")
    assert env["GRAFT_EVAL_REPO"].startswith(mount["mountPath"] + "/")
    assert mount["name"] in {v["name"] for v in deployment["volumes"]}
    assert deployment["includeConfigInLaunchedRuns"] == {"enabled": True}
    assert deployment["codeServerArgs"][:2] == ["--module-name", "graft_eval_pipeline.definitions"]
    (seed,) = deployment["initContainers"]
    assert env["GRAFT_EVAL_REPO"] in seed["command"][-1]
    queue = values["dagsterDaemon"]["runCoordinator"]
    assert queue["type"] == "QueuedRunCoordinator"
    assert PARTITION_LIMIT in queue["config"]["queuedRunCoordinator"]["tagConcurrencyLimits"]


def test_dockerfile_installs_through_the_script_ci_runs() -> None:
    """CI cannot build the image; it runs deploy/install.sh, so the Dockerfile must too."""
    dockerfile = (DEPLOY_DIR / "Dockerfile").read_text(encoding="utf-8")
    (install,) = re.findall(r"/src/deploy/install\.sh (\S+) (\S+)", dockerfile)
    assert f"PATH={install[0]}/bin:" in dockerfile
    assert f"GRAFT_EVAL_REPO={install[1]}" in dockerfile
    check = (DEPLOY_DIR / "check-install.sh").read_text(encoding="utf-8")
    assert '"$src/deploy/install.sh"' in check and "--partition synthetic" in check


@pytest.mark.slow  # builds a wheel in a subprocess
def test_wheel_carries_the_package_and_no_tests(tmp_path: Path) -> None:
    """The wheel of `pip install .` in a checkout (offline: no dependencies, no build isolation)."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO_ROOT / name, src / name)
    for package in ("graft_eval_pipeline", "graft_eval_pipeline_tests"):
        shutil.copytree(REPO_ROOT / package, src / package, ignore=shutil.ignore_patterns("__pycache__"))
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation"]
    subprocess.run(
        [*pip_wheel, "--no-index", "-w", str(tmp_path / "dist"), str(src)],
        check=True,
        capture_output=True,
    )
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "graft_eval_pipeline/definitions.py" in names
    assert "graft_eval_pipeline/evalset/sets/paths.py" in names
    assert {n.split("/")[0] for n in names} == {"graft_eval_pipeline", "graft_eval_pipeline-0.1.0.dist-info"}


def test_eval_dir_comes_from_graft_eval_repo_else_the_checkout(tmp_path: Path) -> None:
    assert eval_home({}) == REPO_ROOT
    assert eval_home({EVAL_REPO_VAR: "  "}) == REPO_ROOT
    assert eval_home({EVAL_REPO_VAR: str(tmp_path)}) == tmp_path
    code = "from graft_eval_pipeline.evalset import sets; print(sets.SYNTHETIC_DIR, sets.THRESHOLDS_FILE)"
    env = {**os.environ, EVAL_REPO_VAR: str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == [
        str(tmp_path / "eval" / "synthetic"),
        str(tmp_path / "eval" / "thresholds.json"),
    ]


def test_missing_eval_dir_names_the_variable(tmp_path: Path) -> None:
    env = {**os.environ, EVAL_REPO_VAR: str(tmp_path / "nowhere")}
    out = subprocess.run(
        [str(Path(sys.executable).with_name("graft-eval")), "ci"], env=env, capture_output=True, text=True
    )
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert (
        f"no eval/ folder at {tmp_path / 'nowhere'}: set GRAFT_EVAL_REPO to the folder that holds eval/"
        in line
    )
