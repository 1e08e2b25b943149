"""Where case sets live, and the key that opens the pilot ones.

One resource serves the assets, the sealed IO manager and the sensors, so they all resolve a
partition key (set id) to the same folder. The key comes only from GRAFT_EVAL_KEY via
`dagster.EnvVar`, never from run config or metadata.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import dagster as dg

from graft_eval_pipeline.defs.isolation import hold_for_run
from graft_eval_pipeline.defs.run_memo import keep, kept
from graft_eval_pipeline.evalset.export.client import github_client
from graft_eval_pipeline.evalset.sets import (
    DEFAULT_EVAL_DIR,
    SYNTHETIC_DIR,
    CaseSet,
    EvalEnv,
    discover_set_ids,
    open_set,
    parse_key,
    purged_set_ids,
    resolve_set_dir,
)
from graft_eval_pipeline.github.client import GitHubClient
from graft_eval_pipeline.github.limits import DEFAULT_MAX_REQUESTS, DEFAULT_MAX_WAIT_S, DEFAULT_MIN_REMAINING
from graft_eval_pipeline.github.rate_limit import RateLimitOptions

KEY_VAR = "GRAFT_EVAL_KEY"
DIR_VAR = "GRAFT_EVAL_DIR"


# Bare `ConfigurableResource` on purpose: subscripting it (a pydantic model) makes an extra class at
# runtime, so the strict type-arg check is silenced on the two class lines instead.
class CaseSetsResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """Resolves set ids to folders and opens them."""

    eval_dir: str = DEFAULT_EVAL_DIR
    synthetic_dir: str = str(SYNTHETIC_DIR)
    eval_key: str | None = None

    def set_dir(self, set_id: str) -> Path:
        return resolve_set_dir(set_id, Path(self.eval_dir).expanduser(), Path(self.synthetic_dir))

    def open(self, set_id: str, *, warn: bool = True) -> CaseSet:
        """Open the set, sending its warnings to the Dagster log unless `warn` is off.

        Its warnings are loose modes. The IO manager opens the set again for every value, and the
        asset has warned already.
        """
        cs = open_set(self.set_dir(set_id), parse_key(self.eval_key) if self.eval_key else None)
        if warn:
            for warning in cs.warnings:
                dg.get_dagster_logger().warning(warning)
        return cs

    def open_for_run(self, context: dg.AssetExecutionContext) -> CaseSet:
        """Open the step's set and take (or re-enter) its hold for this run.

        Every asset of a set starts here, so a run holds its set from its first step to its end
        (`defs/isolation.py`). The set as opened is kept for the run (`opened_in_run`).
        """
        cs = self.open(context.partition_key)
        hold_for_run(context, cs)
        keep(context.run.run_id, _opened(cs.dir), cs)
        return cs

    def opened_in_run(self, run_id: str, set_id: str) -> CaseSet:
        """The set as this run's latest step opened it (same folder and key), else opened now.

        The IO manager reads and writes each value through it: one walk of the set folder per
        step (`open_for_run`), not one more per value, while the run holds the set.
        """
        found = kept(run_id, _opened(self.set_dir(set_id)))
        key = parse_key(self.eval_key) if self.eval_key else None
        if isinstance(found, CaseSet) and found.key == key:
            return found
        return self.open(set_id, warn=False)

    def env(self) -> EvalEnv:
        """Model ids and timeouts: the same environment variables `graft-eval` reads."""
        return EvalEnv.from_environ(os.environ)

    def discover(self) -> list[str]:
        """Every set id on this machine: the committed synthetic set and each pilot set folder."""
        return discover_set_ids(Path(self.eval_dir).expanduser(), Path(self.synthetic_dir))

    def purged(self) -> set[str]:
        """The set ids the purge log under the eval dir names (gone for good)."""
        return purged_set_ids(Path(self.eval_dir))


def _opened(set_dir: Path) -> str:
    return f"opened set {set_dir}"


def case_sets_resource(environ: Mapping[str, str] = os.environ) -> CaseSetsResource:
    """GRAFT_EVAL_KEY and GRAFT_EVAL_DIR wired through EnvVar, each only when set.

    Dagster fails every run on an unset EnvVar, and the synthetic set must run without a key.
    """
    return CaseSetsResource(
        eval_dir=dg.EnvVar(DIR_VAR) if environ.get(DIR_VAR) else DEFAULT_EVAL_DIR,
        eval_key=dg.EnvVar(KEY_VAR) if environ.get(KEY_VAR) else None,
    )


class GitHubResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """The export's GitHub access and rate limits; credentials come from the environment, never config."""

    auth: Literal["app", "token"] = "app"
    installation_id: int | None = None
    min_remaining: int = DEFAULT_MIN_REMAINING
    max_wait_s: float = DEFAULT_MAX_WAIT_S
    max_requests: int = DEFAULT_MAX_REQUESTS

    def env(self) -> EvalEnv:
        return EvalEnv.from_environ(os.environ)

    def client(self) -> GitHubClient:
        limits = RateLimitOptions(
            min_remaining=self.min_remaining, max_wait_s=self.max_wait_s, max_requests=self.max_requests
        )
        return github_client(self.env(), auth=self.auth, installation_id=self.installation_id, limits=limits)
