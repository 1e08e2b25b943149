"""Hand-made report rows (spec 6.6 `cases[]`) for the metric and report tests."""

from __future__ import annotations

from typing import Any

from graft_eval_pipeline.card.models import RiskClass
from graft_eval_pipeline.evalset.scoring.report_schema import CaseRow, GoldSummary, OosCounts, UsageSummary


def make_row(
    case_id: str,
    gold: str | None = "trivial",
    floor: str = "trivial",
    model: str | None = "trivial",
    final: str | None = None,
    **over: Any,
) -> CaseRow:
    """An ok, agreeing row; `final` defaults to the max of floor and model."""
    order = ["trivial", "logic", "sensitive"]
    fields: dict[str, Any] = {
        "id": case_id,
        "tags": [],
        "gold": None
        if gold is None
        else GoldSummary(risk=gold, should_flag=over.pop("should_flag", False), out_of_scope_count=0),
        "floor": floor,
        "model": model,
        "final": final or max(floor, model or "trivial", key=order.index),
        "status": "ok",
        "failure_reason": None,
        "verifier_status": "agree",
        "raised_by": [],
        "floor_rules": [],
        "instructions_in_data": False,
        "oos": OosCounts(tp=0, fp=0, fn=0),
        "flag": "tn",
        "usage": UsageSummary(
            input_tokens=1000, output_tokens=100, cache_read_tokens=0, cache_write_tokens=0, calls=2
        ),
        "cost_usd": 0.003,
        "cached": False,
        "skipped": None,
    }
    fields.update(over)
    return CaseRow(**fields)


def gold_risk(row: CaseRow) -> RiskClass:
    """The gold risk of a scored row (fails the test on a row without gold)."""
    assert row.gold is not None, row.id
    return row.gold.risk
