"""The one LLM interface of the card engine (design 3.5), and the output-schema check.

Clients return failures as values: a model being down is a result the engine records, not a
bug. Only a programming error (for example an unscripted fake call) raises.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import Field

from graft_eval_pipeline.card.models import RETRYABLE_FAILURES, CamelModel, FailureKind, LlmPurpose

Effort = Literal["low", "medium", "high"]


class Usage(CamelModel):
    """Token counters of one call or a sum of calls (priced per model by the harness)."""

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cache_read_tokens: int = Field(default=0, ge=0)
    cache_write_tokens: int = Field(default=0, ge=0)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(frozen=True, slots=True)
class LlmRequest:
    """One structured call: the client must answer JSON matching `output_schema`.

    `timeout_ms` bounds the whole call, retries included (`generate_card` enforces it too).
    `effort` is None when the API default applies; clients for models without an effort
    setting ignore it.
    """

    purpose: LlmPurpose
    model: str
    system: str
    user: str
    output_schema: Mapping[str, Any]
    max_tokens: int
    timeout_ms: int
    effort: Effort | None = None


@dataclass(frozen=True, slots=True)
class LlmReply:
    """Parsed JSON answer; `model` is the id the API answered with (may be dated).

    `batch` is true when the Message Batches API answered (billed at its discounted price).
    """

    json: dict[str, Any]
    usage: Usage
    model: str
    batch: bool = False


@dataclass(frozen=True, slots=True)
class LlmFailure:
    """A failed call. `usage` and `model` are set when tokens were spent (invalid output).

    `detail` is for operators and never holds prompt or reply text.
    """

    kind: FailureKind
    usage: Usage = field(default_factory=Usage)
    model: str | None = None
    detail: str = ""
    batch: bool = False

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE_FAILURES


class LlmClient(Protocol):
    async def complete(self, request: LlmRequest) -> LlmReply | LlmFailure: ...


# --- pacing: what an attempt said about the rate limits, and the gate every attempt passes ------

THROTTLE_STATUSES = frozenset({429, 529})
"""Rate limited (429) and overloaded (529): the answer asks the caller to send less."""


@dataclass(frozen=True, slots=True)
class RateSignal:
    """What one API attempt said about pacing: its HTTP status and rate-limit headers, no content.

    `status` is None when no HTTP answer came (connection error, timeout, cancelled).
    `tokens_remaining` is the smallest of the token limits' remaining counts; `reset_after_s` is
    how long until the exhausted limit (requests or tokens, remaining 0) is replenished, measured
    on the server's clock (its reset time against the reply's `Date`), else None.
    """

    status: int | None = None
    retry_after_s: float | None = None
    requests_remaining: int | None = None
    tokens_remaining: int | None = None
    reset_after_s: float | None = None

    @property
    def throttled(self) -> bool:
        return self.status in THROTTLE_STATUSES

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


class CallGate(Protocol):
    """Paces live calls (implemented by the harness's adaptive limiter).

    Every attempt waits in `enter` for a slot (and for any pause a throttle asked for), and hands
    back what the API said in `leave`, with the ticket `enter` returned. `before_retry` is this
    request's own wait before it is sent again: its `retry-after` after a throttle, a backoff
    after a transient failure (5xx, connection error); `attempt` counts from 1.
    """

    async def enter(self) -> int: ...

    def leave(self, ticket: int, signal: RateSignal) -> None: ...

    async def before_retry(self, signal: RateSignal, attempt: int) -> None: ...


@runtime_checkable
class GatedLlmClient(Protocol):
    """A client that can send every attempt through a gate (and then retries by itself)."""

    def gated(self, gate: CallGate) -> LlmClient: ...


# --- the Message Batches API: one request per custom id, answered within 24 hours ---------------

BatchProcessing = Literal["in_progress", "canceling", "ended"]
BatchResultType = Literal["errored", "expired", "canceled", "missing"]


@dataclass(frozen=True, slots=True)
class BatchStatus:
    """A submitted batch as the API reports it: processing status and request counts."""

    batch_id: str
    processing: BatchProcessing
    processing_count: int = 0
    succeeded: int = 0
    errored: int = 0
    canceled: int = 0
    expired: int = 0


@dataclass(frozen=True, slots=True)
class BatchMiss:
    """A batch request that brought no answer: errored, expired, canceled, or missing from the results.

    `failure` is what the call becomes when it is not retried; `retry` says an interactive call may
    succeed (expired, canceled, missing, or a transient error type).
    """

    result: BatchResultType
    failure: LlmFailure
    retry: bool


class BatchApiError(Exception):
    """A Message Batches API operation failed (after the client's retries).

    The text names the operation, status and error type only, never a request.
    """


@runtime_checkable
class BatchLlmClient(Protocol):
    """A client that can also send requests through the Message Batches API (`--batch`)."""

    async def submit_batch(self, requests: Sequence[tuple[str, LlmRequest]]) -> str: ...

    async def batch_status(self, batch_id: str) -> BatchStatus: ...

    async def batch_outcomes(
        self, batch_id: str, requests: Mapping[str, LlmRequest]
    ) -> dict[str, LlmReply | LlmFailure | BatchMiss]: ...

    async def after_refusal(self, request: LlmRequest, refused: LlmFailure) -> LlmReply | LlmFailure: ...


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
    "null": (type(None),),
}


def schema_violation(schema: Mapping[str, Any], value: Any, where: str = "$") -> str | None:
    """First place where `value` breaks `schema`, or None.

    Covers the JSON Schema subset the output schemas use (type, properties, required,
    additionalProperties: false, items, min/maxItems, min/maxLength, enum). The
    answer names a location and a rule, never the offending text.
    """
    expected = schema.get("type")
    if expected is not None:
        types = _JSON_TYPES[expected]
        is_bool = isinstance(value, bool)
        if not isinstance(value, types) or (is_bool and expected in ("integer", "number")):
            return f"{where}: expected {expected}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where}: not one of the allowed values"
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            return f"{where}: shorter than {schema['minLength']} characters"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return f"{where}: longer than {schema['maxLength']} characters"
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            return f"{where}: fewer than {schema['minItems']} items"
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            return f"{where}: more than {schema['maxItems']} items"
        items = schema.get("items")
        if items is not None:
            for i, item in enumerate(value):
                problem = schema_violation(items, item, f"{where}[{i}]")
                if problem:
                    return problem
    if isinstance(value, dict):
        properties: Mapping[str, Any] = schema.get("properties", {})
        for name in schema.get("required", ()):
            if name not in value:
                return f"{where}: missing {name}"
        if schema.get("additionalProperties") is False:
            extra = value.keys() - properties.keys()
            if extra:
                return f"{where}: {len(extra)} unexpected field(s)"
        for name, sub in properties.items():
            if name in value:
                problem = schema_violation(sub, value[name], f"{where}.{name}")
                if problem:
                    return problem
    return None


def check_reply(request: LlmRequest, reply: LlmReply) -> LlmReply | LlmFailure:
    """A reply whose JSON breaks the request's output schema is an invalid_output failure."""
    problem = schema_violation(request.output_schema, reply.json)
    if problem is None:
        return reply
    return LlmFailure(
        kind="invalid_output", usage=reply.usage, model=reply.model, detail=problem, batch=reply.batch
    )
