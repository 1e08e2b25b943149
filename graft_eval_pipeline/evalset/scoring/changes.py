"""What "this case changed" means, once, for every surface that says it.

The surfaces: report.json, report.md, report.html, `cases --only changed`, the baseline checks and
`compare`. A case changed when one of its decision fields differs between two runs: the classes (floor,
model, writer, verifier, final), the status and failure reason, the verifier's status, the flag
outcome and instructions in the data, the out-of-scope counts, the floor rules, what raised the
final class, and whether it was skipped. Tokens, calls and cost are usage: a prompt edit moves
them without changing a decision, so they are reported as "usage moved", never as a changed case.
The rest of a row (id, tags, gold, stratum, trial) describes the case, not a result: context.
"""

from __future__ import annotations

from typing import Any, Literal

from graft_eval_pipeline.evalset.scoring.report_schema import CaseRow

ChangePart = Literal["decisions", "usage", "context"]

# The row fields (camelCase, as report.json names them) whose change makes a case changed.
DECISION_FIELDS: tuple[str, ...] = (
    "floor",
    "floorRules",
    "model",
    "writer",
    "verifier",
    "final",
    "status",
    "failureReason",
    "verifierStatus",
    "raisedBy",
    "flag",
    "instructionsInData",
    "instructionsInDataFrom",
    "oos",
    "skipped",
)
# The row fields that count tokens, calls and money.
USAGE_FIELDS: tuple[str, ...] = ("usage", "costUsd", "verifierCostUsd")


def _top(name: str) -> str:
    return name.split(".", 1)[0]


def case_field_part(name: str) -> ChangePart:
    """The part a row field belongs to; `name` is its dotted path in the row's JSON (`oos.fp`)."""
    top = _top(name)
    if top in USAGE_FIELDS:
        return "usage"
    return "decisions" if top in DECISION_FIELDS else "context"


def decision_fields(row: CaseRow) -> dict[str, Any]:
    """The row's decision fields as report.json holds them (a field a row leaves out is absent)."""
    data = row.to_json_dict()
    return {name: data[name] for name in DECISION_FIELDS if name in data}


def _attribute_names() -> tuple[str, ...]:
    """The CaseRow attributes behind DECISION_FIELDS (their JSON names are aliases)."""
    by_alias = {(f.serialization_alias or f.alias or name): name for name, f in CaseRow.model_fields.items()}
    return tuple(by_alias[name] for name in DECISION_FIELDS)


_DECISION_ATTRIBUTES = _attribute_names()


def changed_decisions(old: CaseRow, new: CaseRow) -> list[str]:
    """The decision fields that differ between two rows of one case, in DECISION_FIELDS order.

    Empty when the case did not change (whatever its usage did). Rows whose decision attributes
    are equal dump them equally, so those (most cases of two runs) are not dumped to JSON.
    """
    if all(getattr(old, name) == getattr(new, name) for name in _DECISION_ATTRIBUTES):
        return []
    before, after = decision_fields(old), decision_fields(new)
    return [
        name
        for name in DECISION_FIELDS
        if before.get(name) != after.get(name) or (name in before) != (name in after)
    ]
