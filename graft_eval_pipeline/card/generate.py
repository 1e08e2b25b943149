"""`generate_card`: floor, writer, escalation, verifier, combination (design 3.6).

LLM failures are results (an unavailable card, a verifier error); an exception from a client
is a bug and propagates.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, ConfigDict

from graft_eval_pipeline.card.llm import LlmClient, LlmFailure, LlmReply, LlmRequest, Usage, check_reply
from graft_eval_pipeline.card.models import (
    RISK_ORDER,
    CardInputs,
    FailureKind,
    LlmPurpose,
    RiskClass,
    max_risk,
)
from graft_eval_pipeline.card.options import MAX_OUTPUT_TOKENS, GenerateOptions, Models
from graft_eval_pipeline.card.prepare import PreparedInputs, prepare_card_inputs
from graft_eval_pipeline.card.prompts import (
    VERIFIER_OUTPUT_SCHEMA,
    VERIFIER_SYSTEM_PROMPT,
    WRITER_OUTPUT_SCHEMA,
    WRITER_SYSTEM_PROMPT,
    file_section,
    verifier_user_prompt,
    writer_user_prompt,
)
from graft_eval_pipeline.card.result import (
    RAISED_BY_ORDER,
    CallRecord,
    Card,
    CardResult,
    ClaimCheck,
    ClaimStatus,
    FailureReason,
    InstructionsFrom,
    OutOfScopeEdit,
    RaisedBy,
    RiskSummary,
    VerifierResult,
)

__all__ = [
    "MAX_OUTPUT_TOKENS",
    "CallRecord",
    "Card",
    "CardResult",
    "GenerateOptions",
    "Models",
    "RiskSummary",
    "VerifierResult",
    "combine_risk",
    "generate_card",
]

_FAILURE_REASON: dict[FailureKind, FailureReason] = {
    "unavailable": "llm_unavailable",
    "timeout": "llm_timeout",
    "rate_limited": "llm_rate_limited",
    "refusal": "llm_refusal",
    "invalid_output": "llm_invalid_output",
}


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class _OosEdit(_Output):
    path: str
    reason: str


class WriterOutput(_Output):
    goal: str
    behavior_changes: list[str]
    risk_class: RiskClass
    risk_reason: str
    out_of_scope_edits: list[_OosEdit]
    instructions_in_data: bool


class _Claim(_Output):
    id: str
    status: ClaimStatus


class VerifierOutput(_Output):
    claims: list[_Claim]
    unexplained_files: list[str]
    missing_behavior_changes: list[str]
    risk_class: RiskClass
    instructions_in_data: bool


def combine_risk(
    floor: RiskClass,
    writer: RiskClass | None,
    first_pass: RiskClass | None,
    verifier: RiskClass | None,
    instructions_in_data: bool,
    unavailable: bool,
) -> tuple[RiskClass, list[RaisedBy]]:
    """The final class and the sources that raised it above the floor.

    `final` = max(floor, writer, firstPass, verifier), at least logic with instructions in data or
    an unavailable card. `raisedBy` names every source whose own class is above the floor.
    """
    lifts: dict[RaisedBy, RiskClass | None] = {
        "writer": max_risk(writer, first_pass),
        "verifier": verifier,
        "instructions_in_data": "logic" if instructions_in_data else None,
        "unavailable": "logic" if unavailable else None,
    }
    final = max_risk(floor, *lifts.values()) or floor
    raised = [
        source
        for source in RAISED_BY_ORDER
        if (c := lifts[source]) is not None and RISK_ORDER[c] > RISK_ORDER[floor]
    ]
    return final, raised


class _Run:
    """The calls of one card: records each one for per-model pricing."""

    def __init__(self, llm: LlmClient, options: GenerateOptions) -> None:
        self.llm = llm
        self.options = options
        self.calls: list[CallRecord] = []

    async def call(
        self, purpose: LlmPurpose, strong: bool, system: str, user: str, schema: dict[str, Any]
    ) -> dict[str, Any] | LlmFailure:
        o = self.options
        request = LlmRequest(
            purpose=purpose,
            model=o.models.strong if strong else o.models.fast,
            system=system,
            user=user,
            output_schema=schema,
            max_tokens=MAX_OUTPUT_TOKENS,
            timeout_ms=o.timeout_ms,
            effort=o.efforts.strong if strong else o.efforts.fast,
        )
        answer: LlmReply | LlmFailure
        try:
            # Not wait_for: on 3.11 it wraps every call in a task of its own, about a tenth of
            # a fake run; the timeout context awaits in place (what wait_for does from 3.12 on).
            async with asyncio.timeout(o.timeout_ms / 1000):
                answer = await self.llm.complete(request)
        except TimeoutError:
            answer = LlmFailure(kind="timeout", detail="no answer within timeout_ms")
        if isinstance(answer, LlmReply):
            answer = check_reply(request, answer)
        if isinstance(answer, LlmFailure):
            model = answer.model or request.model
            record = CallRecord(
                purpose=purpose, model=model, usage=answer.usage, failure=answer.kind, batch=answer.batch
            )
            self.calls.append(record)
            return answer
        record = CallRecord(purpose=purpose, model=answer.model, usage=answer.usage, batch=answer.batch)
        self.calls.append(record)
        return answer.json

    def usage(self) -> Usage:
        total = Usage()
        for call in self.calls:
            total = total + call.usage
        return total


def _result(
    prepared: PreparedInputs,
    run: _Run,
    *,
    failure: FailureReason | None = None,
    card: Card | None = None,
    writer: RiskClass | None = None,
    first_pass: RiskClass | None = None,
    verifier: VerifierResult | None = None,
    verifier_risk: RiskClass | None = None,
    instructions_from: tuple[InstructionsFrom, ...] = (),
) -> CardResult:
    floor = prepared.floor
    instructions_in_data = bool(instructions_from)
    final, raised_by = combine_risk(
        floor.risk, writer, first_pass, verifier_risk, instructions_in_data, unavailable=failure is not None
    )
    return CardResult(
        status="unavailable" if failure else "ok",
        failure_reason=failure,
        card=card,
        risk=RiskSummary(
            floor=floor.risk, writer=writer, first_pass=first_pass, verifier=verifier_risk, final=final
        ),
        floor_rules=list(floor.rules),
        raised_by=raised_by,
        instructions_in_data=instructions_in_data,
        instructions_in_data_from=list(instructions_from),
        verifier=verifier,
        usage=run.usage(),
        calls=run.calls,
        input_hash=prepared.input_hash,
    )


def _needs_escalation(first: WriterOutput) -> bool:
    return first.risk_class != "trivial" or first.instructions_in_data or bool(first.out_of_scope_edits)


def _card(writer: WriterOutput, listed: set[str]) -> Card:
    """Out-of-scope paths the file list does not hold are dropped (a model cannot add files)."""
    edits: dict[str, OutOfScopeEdit] = {}
    for e in writer.out_of_scope_edits:
        if e.path in listed and e.path not in edits:
            edits[e.path] = OutOfScopeEdit(path=e.path, reason=e.reason)
    return Card(
        goal=writer.goal,
        behavior_changes=writer.behavior_changes,
        out_of_scope_edits=list(edits.values()),
        risk_reason=writer.risk_reason,
    )


def _verifier_result(out: VerifierOutput, card: Card, listed: set[str]) -> VerifierResult:
    """Claims the card does not have and paths the file list does not hold are ignored."""
    known = {f"b{i}" for i in range(1, len(card.behavior_changes) + 1)}
    claims: dict[str, ClaimCheck] = {}
    for c in out.claims:
        if c.id in known and c.id not in claims:
            claims[c.id] = ClaimCheck(id=c.id, status=c.status)
    unexplained = list(dict.fromkeys(p for p in out.unexplained_files if p in listed))
    disagree = any(c.status != "supported" for c in claims.values()) or bool(out.missing_behavior_changes)
    return VerifierResult(
        status="disagree" if disagree else "agree",
        unexplained=unexplained,
        claims=list(claims.values()),
        missing=out.missing_behavior_changes,
    )


async def generate_card(
    inputs: CardInputs, llm: LlmClient, options: GenerateOptions | None = None
) -> CardResult:
    options = options or GenerateOptions()
    prepared = prepare_card_inputs(inputs, options)
    run = _Run(llm, options)
    if inputs.too_large:
        return _result(prepared, run, failure="too_large")

    seen, cut = prepared.inputs, prepared.cut_paths
    files = file_section(seen, cut)
    writer_user = writer_user_prompt(seen, prepared.floor, cut, prepared.text_cut, files=files)
    fast = prepared.floor.risk == "trivial"
    answer = await run.call("writer", not fast, WRITER_SYSTEM_PROMPT, writer_user, WRITER_OUTPUT_SCHEMA)
    if isinstance(answer, LlmFailure):
        return _result(prepared, run, failure=_FAILURE_REASON[answer.kind])
    writer = WriterOutput.model_validate(answer)

    first_pass: RiskClass | None = None
    writer_saw = writer.instructions_in_data
    if fast and _needs_escalation(writer):
        first_pass = writer.risk_class
        answer = await run.call(
            "writerEscalated", True, WRITER_SYSTEM_PROMPT, writer_user, WRITER_OUTPUT_SCHEMA
        )
        if isinstance(answer, LlmFailure):
            return _result(
                prepared,
                run,
                failure=_FAILURE_REASON[answer.kind],
                first_pass=first_pass,
                instructions_from=("writer",) if writer_saw else (),
            )
        writer = WriterOutput.model_validate(answer)
        writer_saw = writer_saw or writer.instructions_in_data

    listed = {f.path for f in inputs.files}
    card = _card(writer, listed)
    verifier_user = verifier_user_prompt(seen, cut, card.goal, card.behavior_changes, files=files)
    answer = await run.call("verifier", True, VERIFIER_SYSTEM_PROMPT, verifier_user, VERIFIER_OUTPUT_SCHEMA)
    verifier_saw = False
    if isinstance(answer, LlmFailure):
        verifier = VerifierResult(status="error", unexplained=[], claims=[], missing=[])
        verifier_risk: RiskClass | None = None
    else:
        checked = VerifierOutput.model_validate(answer)
        verifier = _verifier_result(checked, card, listed)
        verifier_risk = checked.risk_class
        verifier_saw = checked.instructions_in_data
    sources: tuple[tuple[InstructionsFrom, bool], ...] = (("writer", writer_saw), ("verifier", verifier_saw))
    instructions = tuple(source for source, saw in sources if saw)
    return _result(
        prepared,
        run,
        card=card,
        writer=writer.risk_class,
        first_pass=first_pass,
        verifier=verifier,
        verifier_risk=verifier_risk,
        instructions_from=instructions,
    )
