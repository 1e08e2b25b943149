"""What `generate_card` returns (design 3.6 step 8). Cached and reported, so camelCase on disk."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from graft_eval_pipeline.card.llm import Usage
from graft_eval_pipeline.card.models import CamelModel, ContentModel, FailureKind, LlmPurpose, RiskClass

FloorRuleId = Literal[
    "ci_config",
    "policy_file",
    "dependency_manifest",
    "infra",
    "auth_secrets",
    "migration",
    "configured_path",
    "test_deleted",
    "test_shrunk",
    "binary",
    "size_large",
    "size_huge",
    "listing_truncated",
    "partial_view",
    "injection_marker",
]
FailureReason = Literal[
    "too_large",
    "llm_unavailable",
    "llm_timeout",
    "llm_rate_limited",
    "llm_refusal",
    "llm_invalid_output",
]
RaisedBy = Literal["writer", "verifier", "instructions_in_data", "unavailable"]
RAISED_BY_ORDER: tuple[RaisedBy, ...] = ("writer", "verifier", "instructions_in_data", "unavailable")
InstructionsFrom = Literal["writer", "verifier"]
"""Which model reported instructions in the data (the writer: its first pass or escalated call)."""
ClaimStatus = Literal["supported", "unsupported", "contradicted"]
VerifierStatus = Literal["agree", "disagree", "error"]
CardStatus = Literal["ok", "unavailable"]


class OutOfScopeEdit(ContentModel):
    path: str
    reason: str


class Card(ContentModel):
    goal: str
    behavior_changes: list[str]
    out_of_scope_edits: list[OutOfScopeEdit]
    risk_reason: str


class RiskSummary(CamelModel):
    """Every class that went into `final`; None where that model did not answer."""

    floor: RiskClass
    writer: RiskClass | None
    first_pass: RiskClass | None
    verifier: RiskClass | None
    final: RiskClass


class ClaimCheck(CamelModel):
    id: str
    status: ClaimStatus


class VerifierResult(ContentModel):
    status: VerifierStatus
    unexplained: list[str]
    claims: list[ClaimCheck]
    missing: list[str]


class CallRecord(CamelModel):
    """One model call, priced per model by the harness; failures count too.

    `batch` marks a call the Message Batches API answered (half price); it is written only when
    true, so an interactive result reads and writes as before.
    """

    purpose: LlmPurpose
    model: str
    usage: Usage
    failure: FailureKind | None = None
    batch: bool = Field(default=False, exclude_if=lambda batch: not batch)


class CardResult(CamelModel):
    status: CardStatus
    failure_reason: FailureReason | None
    card: Card | None
    risk: RiskSummary
    floor_rules: list[FloorRuleId]
    raised_by: list[RaisedBy]
    instructions_in_data: bool
    # Who reported it, so the verifier calibration credits a lift to the model that caused it;
    # None in a result made before results said so (a cached one).
    instructions_in_data_from: list[InstructionsFrom] | None = None
    verifier: VerifierResult | None
    usage: Usage
    calls: list[CallRecord]
    input_hash: str
