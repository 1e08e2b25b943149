"""Reports of schemaVersion 1 (before counts and intervals), read as baselines.

A version-1 report holds each rate as a bare number. It still loads, so a committed or pilot
baseline made before version 2 keeps working: the diff compares the values it holds with the
current report's values (each rate's `value`), and says the baseline is old.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from graft_eval_pipeline.card import CamelModel
from graft_eval_pipeline.evalset.scoring import GitInfo, ModelPair, PromptInfo, RunInfo, SetSummary


class ReportV1(CamelModel):
    """The parts of a version-1 report the baseline diff reads; metrics and rows as plain JSON."""

    schema_version: Literal[1]
    run_id: str
    created_at: datetime
    set: SetSummary
    prompt: PromptInfo
    models: ModelPair
    llm: Literal["fake", "live"]
    git: GitInfo
    run: RunInfo
    metrics: dict[str, Any]
    cases: list[dict[str, Any]]
    thresholds: list[dict[str, Any]]
    passed: bool = Field(alias="pass")


RATE_KEYS = frozenset({"k", "n", "value", "method"})


def values_only(value: Any) -> Any:
    """JSON with every rate object ({k, n, value, ci95, method, ...}) replaced by its value.

    The shape a version-1 report has.
    """
    if isinstance(value, dict):
        if value.keys() >= RATE_KEYS:
            return value["value"]
        return {key: values_only(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [values_only(v) for v in value]
    return value
