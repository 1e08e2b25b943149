"""The project's code location with its set folders taken from the environment, for subprocess tests.

The project's code location with its set folders taken from the environment, for tests that run
`dagster asset materialize -m graft_eval_pipeline_tests.defs.location` in a subprocess on a copy of
the synthetic set (the shipped location reads the committed eval/synthetic).
"""

from __future__ import annotations

import os

import dagster as dg

from graft_eval_pipeline import definitions
from graft_eval_pipeline.defs.io_manager import SealedIOManager
from graft_eval_pipeline.defs.resources import CaseSetsResource, GitHubResource

EVAL_DIR_VAR = "GRAFT_TEST_EVAL_DIR"
SYNTHETIC_DIR_VAR = "GRAFT_TEST_SYNTHETIC_DIR"

_sets = CaseSetsResource(
    eval_dir=os.environ.get(EVAL_DIR_VAR, "/nonexistent"),
    synthetic_dir=os.environ.get(SYNTHETIC_DIR_VAR, "/nonexistent"),
)
defs = dg.Definitions(
    assets=list(definitions.defs.assets or []),
    jobs=list(definitions.defs.jobs or []),
    executor=definitions.defs.executor,
    resources={"case_sets": _sets, "github": GitHubResource(), "io_manager": SealedIOManager(sets=_sets)},
)
