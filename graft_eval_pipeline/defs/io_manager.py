"""The sealed IO manager (design §5): asset outputs live inside their case set's folder.

Each partition is one case set. Outputs become JSON at `assets/<asset key>.json` in the set
folder, written through the store's `write_private`: an AES-256-GCM envelope bound to the set and
path in a pilot set, plain JSON in the synthetic set. The key comes only from GRAFT_EVAL_KEY via
`dagster.EnvVar`, never from run config or metadata.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import TypeAdapter
from pydantic_core import to_jsonable_python

from graft_eval_pipeline.evalset.crypto import parse_key
from graft_eval_pipeline.evalset.env import DEFAULT_EVAL_DIR
from graft_eval_pipeline.evalset.errors import EvalError
from graft_eval_pipeline.evalset.store import CaseSet, open_set, read_private, resolve_set_dir, write_private

REPO_ROOT = Path(__file__).resolve().parents[2]
SYNTHETIC_DIR = REPO_ROOT / "eval" / "synthetic"
KEY_VAR = "GRAFT_EVAL_KEY"
DIR_VAR = "GRAFT_EVAL_DIR"


class SealedIOManager(dg.ConfigurableIOManager):
    """Stores case_set-partitioned outputs as (sealed) JSON inside the set folder."""

    eval_dir: str = DEFAULT_EVAL_DIR
    synthetic_dir: str = str(SYNTHETIC_DIR)
    eval_key: str | None = None

    def _open(self, partition_key: str) -> CaseSet:
        folder = resolve_set_dir(partition_key, Path(self.eval_dir).expanduser(), Path(self.synthetic_dir))
        return open_set(folder, parse_key(self.eval_key) if self.eval_key else None)

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        cs = self._open(_partition(context.has_asset_partitions, context))
        rel = _asset_rel(context.asset_key)
        write_private(cs, rel, json.dumps(to_jsonable_python(obj, by_alias=True), ensure_ascii=False))
        context.add_output_metadata({"sealed": cs.is_pilot, "file": rel + (".enc" if cs.is_pilot else "")})

    def load_input(self, context: dg.InputContext) -> Any:
        cs = self._open(_partition(context.has_asset_partitions, context))
        rel = _asset_rel(context.asset_key)
        text = read_private(cs, rel)
        if text is None:
            raise EvalError(
                f"asset {context.asset_key.to_user_string()} has no stored value for set {cs.set_id}: "
                "materialize it for this partition first"
            )
        wanted = context.dagster_type.typing_type
        if wanted in (Any, object):
            return json.loads(text)
        return TypeAdapter(wanted).validate_json(text)


def _partition(has_partitions: bool, context: dg.OutputContext | dg.InputContext) -> str:
    if not has_partitions:
        raise EvalError("the sealed IO manager stores only case_set-partitioned assets: add the partitions")
    return context.asset_partition_key


def _asset_rel(asset_key: dg.AssetKey) -> str:
    return "assets/" + "/".join(asset_key.path) + ".json"


def sealed_io_manager(environ: Mapping[str, str] = os.environ) -> SealedIOManager:
    """The IO manager for Definitions: GRAFT_EVAL_KEY and GRAFT_EVAL_DIR wired through EnvVar.

    A variable is wired only when set, because Dagster fails every run on an unset EnvVar and the
    synthetic set must materialize without a key.
    """
    return SealedIOManager(
        eval_dir=dg.EnvVar(DIR_VAR) if environ.get(DIR_VAR) else DEFAULT_EVAL_DIR,
        eval_key=dg.EnvVar(KEY_VAR) if environ.get(KEY_VAR) else None,
    )
