"""One run, one report: the hold a Dagster step takes on its set, and which stored value a step may load.

Why: the schedule, the sensors, people in the UI and `dagster asset materialize` from a shell
launch runs of the same set, and the queue's per-partition limit (dagster.yaml) binds only the
runs that go through the queue. So every step that writes into a set first takes the set's hold
(`evalset.sets.hold`) for its run: a step of another run waits until that run has ended. A run
holds the set from its first step to its end; the instance tells whether it has ended.

And every value a step loads must be the one it should see: the value its own run wrote when the
run materialized that asset, otherwise the one the instance records as the latest
materialization of the asset and partition. Anything else (another run's value, or an older one
left on a machine whose set folder is not the one the last run wrote) is refused, naming both runs.
"""

from __future__ import annotations

import multiprocessing
import os
from dataclasses import dataclass

import dagster as dg

from graft_eval_pipeline.evalset.scoring import REPORT_INPUTS
from graft_eval_pipeline.evalset.sets import (
    CaseSet,
    EvalError,
    Holder,
    Liveness,
    SetHold,
    process_alive,
    take_hold,
    this_process,
)

WRITTEN_BY = "written_by_run"  # output metadata: the run whose value the file holds
VALUE_SHA256 = "value_sha256"  # output metadata: SHA-256 of the stored value's text


def run_worker_pid() -> int:
    """The pid of the process that runs the whole Dagster run on this host.

    This one, or for a step in a multiprocess executor's child process (started by
    `multiprocessing`), its parent.
    """
    return os.getppid() if multiprocessing.parent_process() is not None else os.getpid()


def run_holder(run_id: str) -> Holder:
    return this_process(f"dagster run {run_id}", run_id=run_id, pid=run_worker_pid())


def run_liveness(instance: dg.DagsterInstance) -> Liveness:
    """`alive(holder)` for holds.

    A Dagster run's hold ends when the instance records the run as finished, or when its run worker
    is gone on this host; any other holder by its process.
    """

    def alive(holder: Holder) -> bool | None:
        if holder.run_id is not None:
            run = instance.get_run_by_id(holder.run_id)
            if run is not None and run.is_finished:
                return False
        return process_alive(holder)

    return alive


# The holds this process took, by (set folder, run id): released when the run's resources are
# torn down in the run worker (`release_run_holds`), which is the end of the run. A step in a
# multiprocess executor's child process leaves the hold to the run: it ends when the instance
# records the run as finished (or its run worker is gone), and the next writer takes it then.
_HELD: dict[tuple[str, str], SetHold] = {}


def hold_for_run(context: dg.AssetExecutionContext | dg.OutputContext, cs: CaseSet) -> SetHold:
    """Take (or re-enter) the set's hold for this step's run, waiting while another writer holds it."""
    instance, run_id, log = _context_parts(context)
    hold = take_hold(
        cs.dir,
        run_holder(run_id),
        alive=run_liveness(instance),
        say=log.info,
        set_id=cs.set_id,
    )
    _HELD[(str(cs.dir), run_id)] = hold
    return hold


def release_run_holds(run_id: str | None) -> None:
    """Release the holds the run worker took for `run_id` (all of them when None).

    Nothing in a step's child process, whose run goes on after the step.
    """
    if multiprocessing.parent_process() is not None:
        return
    for key in [k for k in _HELD if run_id is None or k[1] == run_id]:
        _HELD.pop(key).release()


def _context_parts(
    context: dg.AssetExecutionContext | dg.OutputContext,
) -> tuple[dg.DagsterInstance, str, dg.DagsterLogManager]:
    if isinstance(context, dg.OutputContext):
        return context.step_context.instance, context.run_id, context.log
    return context.instance, context.run.run_id, context.log


@dataclass(frozen=True)
class Writer:
    """The run whose value of an asset (and partition) a step should load, and the value's hash.

    The hash is as the materialization recorded it ("" when it recorded none).
    """

    run_id: str
    sha256: str


def expected_writer(
    instance: dg.DagsterInstance, run_id: str, asset_key: dg.AssetKey, partition: str
) -> Writer | None:
    """This run's own materialization of the asset and partition if it made one, else the instance's latest.

    None when the instance records none.
    """
    own = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
    for record in reversed(own):
        event = record.event_log_entry.dagster_event
        if event is None or event.asset_key != asset_key or event.partition != partition:
            continue
        return Writer(run_id, _recorded_sha(event.step_materialization_data.materialization))
    latest = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=[partition]), limit=1
    ).records
    if not latest or latest[0].asset_materialization is None:
        return None
    return Writer(latest[0].run_id, _recorded_sha(latest[0].asset_materialization))


def _recorded_sha(materialization: dg.AssetMaterialization) -> str:
    entry = materialization.metadata.get(VALUE_SHA256)
    return "" if entry is None else str(entry.value)


def check_writer(found_run: str, found_sha: str, expected: Writer | None, what: str) -> None:
    """Refuse a stored value that is not the expected run's (or whose hash is not the one recorded)."""
    if expected is None:
        raise EvalError(
            f"{what}: the instance records no materialization of it: materialize it for this partition first"
        )
    if found_run != expected.run_id:
        raise EvalError(
            f"stale value: this machine's set folder holds run {found_run}'s {what}, expected run "
            f"{expected.run_id}'s; materialize it again here, or give every process the same set "
            "folder (docs/deploying.md)"
        )
    if expected.sha256 and found_sha != expected.sha256:
        raise EvalError(
            f"stale value: {what} of run {found_run} is not the value that run recorded (rewritten "
            "since?); materialize it again"
        )


def report_inputs(context: dg.AssetExecutionContext) -> dict[str, str]:
    """The run that wrote each input of the report (report.json `inputs`).

    The values the IO manager handed over, by the same rule it checked them with.
    """
    found = {}
    for name in REPORT_INPUTS:
        writer = expected_writer(
            context.instance, context.run.run_id, dg.AssetKey(name), context.partition_key
        )
        found[name] = "" if writer is None else writer.run_id
    return found
