"""Sensors: keep the case_set partitions in step with the sets on disk."""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from graft_eval_pipeline.defs.partitions import CASE_SET_PARTITIONS
from graft_eval_pipeline.defs.resources import CaseSetsResource


def partition_changes(known: Sequence[str], found: Sequence[str]) -> tuple[list[str], list[str]]:
    """(to add, to delete): new set folders become partitions; purged sets stop being ones."""
    return sorted(set(found) - set(known)), sorted(set(known) - set(found))


def sync_case_set_partitions(
    instance: dg.DagsterInstance, sets: CaseSetsResource
) -> tuple[list[str], list[str]]:
    """What `graft-eval sets sync` does for CI: register every set the instance does not know yet."""
    added, deleted = partition_changes(instance.get_dynamic_partitions(CASE_SET_PARTITIONS), sets.discover())
    if added:
        instance.add_dynamic_partitions(CASE_SET_PARTITIONS, added)
    for set_id in deleted:
        instance.delete_dynamic_partition(CASE_SET_PARTITIONS, set_id)
    return added, deleted


@dg.sensor(minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING)
def case_set_registry_sensor(
    context: dg.SensorEvaluationContext, case_sets: CaseSetsResource
) -> dg.SensorResult:
    """Registers new set folders (and forgets purged ones) so they can be materialized."""
    added, deleted = partition_changes(
        context.instance.get_dynamic_partitions(CASE_SET_PARTITIONS), case_sets.discover()
    )
    if not added and not deleted:
        return dg.SensorResult(skip_reason="case_set partitions match the sets on disk")
    return dg.SensorResult(
        dynamic_partitions_requests=[
            *([dg.AddDynamicPartitionsRequest(CASE_SET_PARTITIONS, added)] if added else []),
            *([dg.DeleteDynamicPartitionsRequest(CASE_SET_PARTITIONS, deleted)] if deleted else []),
        ]
    )
