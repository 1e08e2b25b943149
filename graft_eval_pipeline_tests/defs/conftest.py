"""Fixtures of the Dagster tests: an ephemeral instance that knows the test's case sets."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import dagster as dg
import pytest

from graft_eval_pipeline.defs.partitions import CASE_SET_PARTITIONS

InstanceWith = Callable[..., dg.DagsterInstance]
"""`instance_with(*set_ids)`: a fresh ephemeral instance with those `case_set` partitions."""


@pytest.fixture
def instance_with() -> Iterator[InstanceWith]:
    """Builds in-memory instances with the given `case_set` partitions; disposes them after the test."""
    made: list[dg.DagsterInstance] = []

    def make(*set_ids: str) -> dg.DagsterInstance:
        instance = dg.DagsterInstance.ephemeral()
        instance.add_dynamic_partitions(CASE_SET_PARTITIONS, list(set_ids))
        made.append(instance)
        return instance

    yield make
    for instance in made:
        instance.dispose()
