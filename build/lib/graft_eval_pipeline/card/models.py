"""Shared pydantic base and the card engine's input model (design 3.1).

On disk every field is camelCase (the spec's JSON); in Python it is snake_case.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer
from pydantic.alias_generators import to_camel

RiskClass = Literal["trivial", "logic", "sensitive"]
RISK_CLASSES: tuple[RiskClass, ...] = ("trivial", "logic", "sensitive")
RISK_ORDER: dict[str, int] = {"trivial": 0, "logic": 1, "sensitive": 2}


def max_risk(*classes: RiskClass | None) -> RiskClass | None:
    """Highest class among the given ones; None when all are None."""
    present = [c for c in classes if c is not None]
    if not present:
        return None
    highest: RiskClass = max(present, key=RISK_ORDER.__getitem__)
    return highest


class CamelModel(BaseModel):
    """Strict model: camelCase aliases on disk, unknown fields rejected.

    Built on first use (`defer_build`): a command validates a handful of the project's ~100
    models, and building every schema at import took a fifth of `graft-eval run`'s start-up.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        validate_assignment=False,
        defer_build=True,
    )

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, mode="json")


class ContentModel(CamelModel):
    """A model that holds case content (PR text, paths, diffs, model prose).

    Its repr and str name only the type, so a traceback, an assertion message or a stray log
    line never prints pilot content; read the fields (or `show`) to see it.
    """

    def __repr__(self) -> str:
        return f"{type(self).__name__}(…)"

    def __str__(self) -> str:
        return repr(self)


FileStatus = Literal["added", "modified", "removed", "renamed", "copied", "changed", "unchanged"]


class PullRequestInfo(ContentModel):
    number: int = Field(ge=1)
    title: str
    body: str
    additions: int = Field(ge=0)
    deletions: int = Field(ge=0)
    changed_files: int = Field(ge=0)


class IssueInfo(ContentModel):
    number: int = Field(ge=1)
    title: str
    body: str


class ChangedFile(ContentModel):
    path: str = Field(min_length=1)
    previous_path: str | None = None
    status: FileStatus
    additions: int = Field(ge=0)
    deletions: int = Field(ge=0)
    patch: str | None = None


class CardInputs(ContentModel):
    """Exactly what generate_card takes; an eval case stores it unchanged."""

    repository_full_name: str = Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
    pr: PullRequestInfo
    issue: IssueInfo | None = None
    files: list[ChangedFile]
    listing_truncated: bool = False
    too_large: bool = False


FailureKind = Literal["unavailable", "timeout", "rate_limited", "refusal", "invalid_output"]
RETRYABLE_FAILURES: frozenset[str] = frozenset({"unavailable", "timeout", "rate_limited"})
LlmPurpose = Literal["writer", "writerEscalated", "verifier"]


class FakeJson(CamelModel):
    """A scripted reply: writer or verifier output JSON (snake_case, as the model answers)."""

    json_: dict[str, Any] = Field(alias="json")


class FakeFailure(CamelModel):
    failure: FailureKind


FakeEntry = FakeJson | FakeFailure


class FakeScript(CamelModel):
    """Per-purpose scripted replies of a synthetic case; "agree" means the agreeing verifier."""

    writer: FakeEntry | None = None
    writer_escalated: FakeEntry | None = None
    verifier: FakeEntry | Literal["agree"] | None = None

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A purpose without an entry is absent on disk, as the case files write it (not null)."""
        return {k: v for k, v in handler(self).items() if v is not None}
