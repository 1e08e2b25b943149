"""One dynamic partition per case set; the key is the set id (design §5)."""

from __future__ import annotations

import dagster as dg

CASE_SET_PARTITIONS = "case_set"

case_set_partitions = dg.DynamicPartitionsDefinition(name=CASE_SET_PARTITIONS)
