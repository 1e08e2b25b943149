"""Lazy stage exports (graft_eval_pipeline/lazy.py): every public name resolves, an unknown one is
an AttributeError, and a fake run leaves the heavy modules unloaded (issue 16 §4)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

from graft_eval_pipeline.evalset.sets.paths import SYNTHETIC_DIR

STAGES = ("sets", "export", "labeling", "scoring", "run", "report")

# What a fake `graft-eval run` needs none of: numerics and dataframes (the statistics of a run
# are plain Python), the terminal bar, the Anthropic SDK and live planning, the GitHub client,
# the secret catalogue.
NOT_FOR_A_FAKE_RUN = (
    "numpy",
    "pandas",
    "scipy",
    "rich",
    "anthropic",
    "httpx",
    "graft_eval_pipeline.evalset.run.live",
    "graft_eval_pipeline.evalset.export.stages",
    "graft_eval_pipeline.evalset.sets.secret_scan",
)


@pytest.mark.parametrize("stage", STAGES)
def test_every_public_name_of_a_stage_resolves(stage: str) -> None:
    package = import_module(f"graft_eval_pipeline.evalset.{stage}")
    for name in package.__all__:
        assert getattr(package, name) is not None, name


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    package = import_module("graft_eval_pipeline.evalset.run")
    with pytest.raises(AttributeError, match="no_such_name"):
        package.no_such_name  # noqa: B018


def test_a_lazy_name_is_loaded_once_and_kept_in_the_package() -> None:
    package = import_module("graft_eval_pipeline.evalset.sets")
    first = package.secret_kinds
    assert "secret_kinds" in vars(package) and package.secret_kinds is first


@pytest.mark.usefixtures("clean_env")
def test_a_fake_run_imports_none_of_the_heavy_modules(tmp_path: Path) -> None:
    synthetic = tmp_path / "synthetic"
    shutil.copytree(SYNTHETIC_DIR, synthetic, ignore=shutil.ignore_patterns("runs", "cache", "assets"))
    script = (
        "import json, sys\n"
        "from graft_eval_pipeline.cli import main\n"
        f"code = main(['run', '--quiet', '--set', {str(synthetic)!r}])\n"
        f"print(json.dumps([code, sorted(m for m in {NOT_FOR_A_FAKE_RUN!r} if m in sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    code, loaded = json.loads(done.stdout.splitlines()[-1])
    assert code == 0
    assert loaded == []
