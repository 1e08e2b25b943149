"""The sealed IO manager (design §5): asset outputs live inside their case set's folder.

Each partition is one case set. Outputs become JSON at `assets/<asset key>.json` in the set
folder, written through the store's `write_private`: an AES-256-GCM envelope bound to the set and
path in a pilot set, plain JSON in the synthetic set. The key comes only from GRAFT_EVAL_KEY via
`dagster.EnvVar`, never from run config or metadata.

Each stored value is stamped with the run that wrote it and its hash (`evalset.sets.stamped`),
which also go into the materialization's metadata; a load hands on only the value the step
should see (`defs.isolation.expected_writer`) and refuses any other, naming both runs. A write
re-enters the set's hold of the run (taken by the asset when it started).

Within a run, each value is also kept in memory (`defs/run_memo.py`): a later step of the same
run in the same process gets the kept object once the file's stamp names this run and the value's
hash, instead of parsing and validating the file again. The file is written and checked either
way; other runs and other processes read only the file.
"""

from __future__ import annotations

import json
from typing import Any

import dagster as dg
from pydantic import TypeAdapter
from pydantic_core import to_jsonable_python

from graft_eval_pipeline.defs.isolation import (
    VALUE_SHA256,
    WRITTEN_BY,
    check_writer,
    expected_writer,
    hold_for_run,
    release_run_holds,
)
from graft_eval_pipeline.defs.resources import CaseSetsResource
from graft_eval_pipeline.defs.run_memo import forget_run, keep, kept
from graft_eval_pipeline.evalset.run import collector_paused
from graft_eval_pipeline.evalset.sets import (
    ASSETS_DIR,
    CaseSet,
    EvalError,
    UntrustedInputError,
    parse_document,
    read_private,
    stamp_value,
    unstamp,
    validate,
    write_private,
)


class SealedIOManager(dg.ConfigurableIOManager):
    """Stores case_set-partitioned outputs as (sealed) JSON inside the set folder."""

    sets: CaseSetsResource

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        """The end of the run in the run worker (every asset run has this IO manager).

        The run's holds go (`defs/isolation.py`; a multiprocess step's child keeps them for the
        run).
        """
        run_id = context.run.run_id if context.run is not None else None
        release_run_holds(run_id)
        forget_run(run_id)

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        cs = self.sets.opened_in_run(context.run_id, _partition(context.has_asset_partitions, context))
        hold_for_run(context, cs)
        rel = _asset_rel(context.asset_key)
        with collector_paused():  # a run's values are large and make no cycles: no collection walks them
            value = json.dumps(to_jsonable_python(obj, by_alias=True), ensure_ascii=False)
        stored, stamp = stamp_value(value, context.run_id)
        write_private(cs, rel, stored)
        keep(context.run_id, _kept_name(cs, rel), (stamp.sha256, obj))
        context.add_output_metadata(
            {
                "sealed": cs.is_pilot,
                "file": rel + (".enc" if cs.is_pilot else ""),
                WRITTEN_BY: stamp.run_id,
                VALUE_SHA256: stamp.sha256,
            }
        )

    def load_input(self, context: dg.InputContext) -> Any:
        partition = _partition(context.has_asset_partitions, context)
        cs = self._set_to_load_from(context, partition)
        rel = _asset_rel(context.asset_key)
        stored = read_private(cs, rel)
        what = f"asset {context.asset_key.to_user_string()} of set {cs.set_id}"
        if stored is None:
            raise EvalError(
                f"{what} has no stored value on this machine: materialize it for this partition first"
            )
        stamp, text = unstamp(stored, f"stored {rel} of set {cs.set_id}")
        step = context.step_context
        expected = expected_writer(step.instance, step.run_id, context.asset_key, partition)
        check_writer(stamp.run_id, stamp.sha256, expected, what)
        wanted = context.dagster_type.typing_type
        mine = kept(step.run_id, _kept_name(cs, rel)) if stamp.run_id == step.run_id else None
        typed = wanted not in (Any, object) and isinstance(wanted, type)
        if mine is not None and mine[0] == stamp.sha256 and typed and isinstance(mine[1], wanted):
            return mine[1]  # the file holds this very value: this run wrote it, same hash
        where = f"stored {rel} of set {cs.set_id}"
        with collector_paused():  # a run's values are large and make no cycles: no collection walks them
            document = parse_document(text, where)  # the one reader of untrusted JSON: size, depth, numbers
            if wanted in (Any, object):
                return document.value
            try:
                return validate(
                    document.value, where, TypeAdapter(wanted), surrogates=document.may_hold_surrogate
                )
            except UntrustedInputError as err:  # names the field, never the stored value
                raise UntrustedInputError(
                    f"{err}: the code changed since it was written; materialize the upstream asset again"
                ) from None

    def _set_to_load_from(self, context: dg.InputContext, partition: str) -> CaseSet:
        """The run's open set; opened here for a context built without a step (a direct call)."""
        try:
            run_id = context.step_context.run_id
        except dg.DagsterInvariantViolationError:
            return self.sets.open(partition, warn=False)
        return self.sets.opened_in_run(run_id, partition)


def _partition(has_partitions: bool, context: dg.OutputContext | dg.InputContext) -> str:
    if not has_partitions:
        raise EvalError("the sealed IO manager stores only case_set-partitioned assets: add the partitions")
    return context.asset_partition_key


def _kept_name(cs: CaseSet, rel: str) -> str:
    return f"value {cs.dir}/{rel}"


def _asset_rel(asset_key: dg.AssetKey) -> str:
    return f"{ASSETS_DIR}/" + "/".join(asset_key.path) + ".json"
