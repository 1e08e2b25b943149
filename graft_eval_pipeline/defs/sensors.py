"""Sensors: keep partitions in step with the sets on disk, re-evaluate sets made with other prompts.

The registry sensor keeps the case_set partitions in step with the sets on disk; the prompt-change
sensor re-evaluates sets whose last report was made with other prompts or models.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import dagster as dg

from graft_eval_pipeline.card import (
    PROMPT_VERSION,
    Models,
    engine_fingerprint,
    prompt_fingerprint,
)
from graft_eval_pipeline.defs.assets.evaluation import eval_report
from graft_eval_pipeline.defs.jobs import evaluate_case_set_job
from graft_eval_pipeline.defs.metadata import models_label
from graft_eval_pipeline.defs.partitions import CASE_SET_PARTITIONS
from graft_eval_pipeline.defs.resources import CaseSetsResource
from graft_eval_pipeline.evalset.sets import LiveRerun, read_live_rerun


def partition_changes(
    known: Sequence[str], found: Sequence[str], purged: Collection[str], *, prune: bool = False
) -> tuple[list[str], list[str]]:
    """(to add, to delete): new set folders become partitions.

    A partition whose folder this machine lacks goes only when the purge log says the set was purged
    (or with `prune`): the instance is shared, and another machine may hold the set.
    """
    missing = set(known) - set(found)
    return sorted(set(found) - set(known)), sorted(missing if prune else missing & set(purged))


def sync_case_set_partitions(
    instance: dg.DagsterInstance, sets: CaseSetsResource, *, prune: bool = False
) -> tuple[list[str], list[str]]:
    """What `graft-eval sets sync` does for CI.

    Register every set the instance does not know yet, and forget the purged ones (with `prune`,
    every set this machine lacks).
    """
    added, deleted = partition_changes(
        instance.get_dynamic_partitions(CASE_SET_PARTITIONS), sets.discover(), sets.purged(), prune=prune
    )
    if added:
        instance.add_dynamic_partitions(CASE_SET_PARTITIONS, added)
    for set_id in deleted:
        instance.delete_dynamic_partition(CASE_SET_PARTITIONS, set_id)
    return added, deleted


@dg.sensor(
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Every minute: a new set folder (the synthetic set, or one under GRAFT_EVAL_DIR) becomes "
    "a case_set partition, and a set the purge log names stops being one (a set only absent from this "
    "machine stays: another machine sharing the instance may hold it).",
)
def case_set_registry_sensor(
    context: dg.SensorEvaluationContext, case_sets: CaseSetsResource
) -> dg.SensorResult:
    """Registers new set folders (and forgets purged ones) so they can be materialized."""
    added, deleted = partition_changes(
        context.instance.get_dynamic_partitions(CASE_SET_PARTITIONS), case_sets.discover(), case_sets.purged()
    )
    if not added and not deleted:
        return dg.SensorResult(skip_reason="case_set partitions match the sets on disk and the purge log")
    return dg.SensorResult(
        dynamic_partitions_requests=[
            *([dg.AddDynamicPartitionsRequest(CASE_SET_PARTITIONS, added)] if added else []),
            *([dg.DeleteDynamicPartitionsRequest(CASE_SET_PARTITIONS, deleted)] if deleted else []),
        ]
    )


# --- prompt changes: re-evaluate sets whose last report used other prompts or models --------

SIGNATURE_KEYS = ("prompt_fingerprint", "prompt_version", "engine_fingerprint", "models")


def current_signature(models: Models) -> dict[str, str]:
    """What a report made by this code and environment records (eval_report metadata)."""
    return {
        "prompt_fingerprint": prompt_fingerprint(),
        "prompt_version": PROMPT_VERSION,
        "engine_fingerprint": engine_fingerprint(),
        "models": models_label(models.fast, models.strong),
    }


def last_report_signature(instance: dg.DagsterInstance, set_id: str) -> dict[str, str] | None:
    """The signature in the newest eval_report materialization of the set; None if never reported."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=eval_report.key, asset_partitions=[set_id]), limit=1
    ).records
    if not records or records[0].asset_materialization is None:
        return None
    metadata = records[0].asset_materialization.metadata
    return {key: str(metadata[key].value) if key in metadata else "" for key in SIGNATURE_KEYS}


def rerun_request(set_id: str, signature: dict[str, str], live: LiveRerun | None) -> dg.RunRequest:
    """One run per set and signature: the run key makes the daemon request it once."""
    config: dict[str, object] = {"mode": "fake"}
    if live is not None:
        config = {"mode": "live", "confirm_live": True, "max_cost_usd": live.max_cost_usd}
    mode = str(config["mode"])
    key = ":".join(["prompt-change", set_id, mode, *(signature[k] for k in SIGNATURE_KEYS)])
    return dg.RunRequest(
        run_key=key,
        partition_key=set_id,
        run_config={"ops": {"harness_run": {"config": config}}},
        tags={"graft/trigger": "prompt_change", "graft/mode": mode},
    )


@dg.sensor(
    job=evaluate_case_set_job,
    minimum_interval_seconds=300,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Every 5 minutes: re-evaluates each set whose last report was made with another prompt "
    "fingerprint, prompt version, card engine code or model pair (fake mode, or live with the cap of "
    "its live-rerun.json).",
)
def prompt_change_sensor(context: dg.SensorEvaluationContext, case_sets: CaseSetsResource) -> dg.SensorResult:
    """Re-evaluate every set whose last report was made with other prompts, engine code or models.

    Other means another prompt fingerprint, prompt version, engine fingerprint (the card engine's
    code) or model pair. The re-run is in fake mode, or live with its cap where `live-rerun.json`
    opts in. Sets never reported are left alone.
    """
    signature = current_signature(case_sets.env().models())
    requests = []
    for set_id in context.instance.get_dynamic_partitions(CASE_SET_PARTITIONS):
        last = last_report_signature(context.instance, set_id)
        if last is None or last == signature:
            continue
        try:
            live = read_live_rerun(case_sets.set_dir(set_id))
        except ValueError as err:
            context.log.warning(f"{err}; re-running set {set_id} in fake mode")
            live = None
        requests.append(rerun_request(set_id, signature, live))
    if not requests:
        return dg.SensorResult(skip_reason="every reported set matches the current prompts and models")
    return dg.SensorResult(run_requests=requests)
