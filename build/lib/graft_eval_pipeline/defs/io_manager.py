"""The sealed IO manager (design §5): asset outputs live inside their case set's folder.

Each partition is one case set. Outputs become JSON at `assets/<asset key>.json` in the set
folder, written through the store's `write_private`: an AES-256-GCM envelope bound to the set and
path in a pilot set, plain JSON in the synthetic set. The key comes only from GRAFT_EVAL_KEY via
`dagster.EnvVar`, never from run config or metadata.
"""

from __future__ import annotations

import json
from typing import Any

import dagster as dg
from pydantic import TypeAdapter, ValidationError
from pydantic_core import to_jsonable_python

from graft_eval_pipeline.defs.resources import CaseSetsResource
from graft_eval_pipeline.evalset.sets import (
    ASSETS_DIR,
    CaseSet,
    EvalError,
    describe_validation_error,
    read_private,
    write_private,
)


class SealedIOManager(dg.ConfigurableIOManager):
    """Stores case_set-partitioned outputs as (sealed) JSON inside the set folder."""

    sets: CaseSetsResource

    def _open(self, partition_key: str) -> CaseSet:
        return self.sets.open(partition_key, warn=False)

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
        try:
            return TypeAdapter(wanted).validate_json(text)
        except ValidationError as err:  # its message quotes the stored value: never pass it on
            raise EvalError(
                describe_validation_error(err, f"stored {rel} of set {cs.set_id}")
                + ": the code changed since it was written; materialize the upstream asset again"
            ) from None


def _partition(has_partitions: bool, context: dg.OutputContext | dg.InputContext) -> str:
    if not has_partitions:
        raise EvalError("the sealed IO manager stores only case_set-partitioned assets: add the partitions")
    return context.asset_partition_key


def _asset_rel(asset_key: dg.AssetKey) -> str:
    return f"{ASSETS_DIR}/" + "/".join(asset_key.path) + ".json"
