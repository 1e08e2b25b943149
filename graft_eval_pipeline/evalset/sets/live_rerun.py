"""live-rerun.json beside set.json: a set's opt-in to live re-runs by the prompt-change sensor.

`{"maxCostUsd": 5}` lets the sensor re-run the set live, with that cost cap, when the prompts or
models change; without the file it re-runs in fake mode. A set-folder format like set.json, so
it lives with the set; the Dagster sensor only reads it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from graft_eval_pipeline.card import CamelModel
from graft_eval_pipeline.evalset.sets.paths import LIVE_RERUN_FILE
from graft_eval_pipeline.evalset.sets.untrusted import UntrustedInputError, read_json_file


class LiveRerun(CamelModel):
    max_cost_usd: float = Field(gt=0)


def read_live_rerun(set_dir: Path) -> LiveRerun | None:
    """The set's opt-in, or None. A broken file raises naming the file, never its content."""
    path = set_dir / LIVE_RERUN_FILE
    if not path.is_file():
        return None
    try:
        return read_json_file(path, str(path), LiveRerun)
    except (OSError, UntrustedInputError):
        raise UntrustedInputError(f'{path} must be {{"maxCostUsd": <positive number>}}') from None
