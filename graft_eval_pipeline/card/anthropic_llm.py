"""The live LLM client (design 3.5): the official `anthropic` SDK with forced tool use.

Forcing the one tool whose input schema is the output schema makes the model answer JSON that
the API has already shaped; the reply is still checked against the schema here, because a
truncated or sloppy answer must become `invalid_output`, never a half-filled card. The SDK
retries 429/529/5xx/connection errors itself (`max_retries`, honouring `retry-after-ms`, then
`retry-after`); what is left when it gives up becomes a failure kind. Failures carry kinds,
status codes and error types only, never prompt or reply text.

A 2xx reply is read from its JSON through the SDK's raw-response path: building the SDK's
`Message` model cost about a sixth of the client's CPU per call, for the five fields read here.

Gated (`gated(gate)`, what a live run uses): the SDK's own retries are off and every attempt
passes the harness's limiter, which sees each 429/529 with its `retry-after` and every reply's
`anthropic-ratelimit-*` headers; 429/529 are sent again (at most MAX_THROTTLED_RETRIES times),
408/409/5xx and connection errors up to `max_retries` times, each after the wait the gate says.
The Message Batches API (`--batch`) goes through `submit_batch`, `batch_status` and
`batch_outcomes`; a batch request's params are exactly an interactive call's, and its results
are read from the JSONL lines as plain JSON.
"""

from __future__ import annotations

import dataclasses
import email.utils
import json
import logging
import time
from collections.abc import Awaitable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import anthropic
import httpx2

from graft_eval_pipeline.card.llm import (
    BatchApiError,
    BatchMiss,
    BatchStatus,
    CallGate,
    LlmClient,
    LlmFailure,
    LlmReply,
    LlmRequest,
    RateSignal,
    Usage,
    check_reply,
)
from graft_eval_pipeline.card.models import FailureKind, LlmPurpose
from graft_eval_pipeline.card.safe_text import to_terminal_safe

T = TypeVar("T")

log = logging.getLogger(__name__)

TOOL_NAMES: dict[LlmPurpose, str] = {
    "writer": "submit_card",
    "writerEscalated": "submit_card",
    "verifier": "submit_verification",
}
CUT_STOP_REASONS = frozenset({"max_tokens", "model_context_window_exceeded"})
"""The answer was cut off, so its tool input is incomplete even when it happens to parse."""
MAX_THROTTLED_RETRIES = 12
"""Gated: a call answered 429/529 is sent again after the limiter's pause, at most this often
(the card's timeout bounds it too)."""
RATELIMIT_HEADER = "anthropic-ratelimit-"
TOKEN_LIMITS = ("tokens", "input-tokens", "output-tokens")
BATCH_RETRYABLE_ERRORS: dict[str, FailureKind] = {
    "api_error": "unavailable",
    "overloaded_error": "unavailable",
    "rate_limit_error": "rate_limited",
    "timeout_error": "timeout",
}
"""Error types of an errored batch request that an interactive call may get past, and the
failure kind each is reported as when it is not retried. Any other type is `unavailable`."""
METADATA_ONLY_TRACES: Any = {"traces": {"content_mode": "metadata_only"}}


def create_anthropic_llm(
    *,
    api_key: str,
    max_retries: int,
    timeout_ms: int,
    refusal_fallback: str | None,
    http_client: httpx2.AsyncClient | None = None,
    base_url: str | None = None,
) -> LlmClient:
    """The live client; building it sends nothing.

    `timeout_ms` is the SDK's default per attempt; each request's own `timeout_ms` overrides it.
    `refusal_fallback` names a model that a refused request is sent to once more.
    `http_client` and `base_url` are for tests (an `httpx2.MockTransport`), never the network.
    Its OpenTelemetry spans (when a tracer provider is set up) carry metadata only: the
    environment's content mode is not read. Its log records are the harness's to silence
    (`card.log_guard`).
    """
    client = anthropic.AsyncAnthropic(
        api_key=api_key,
        max_retries=max_retries,
        timeout=timeout_ms / 1000,
        http_client=http_client,
        base_url=base_url,
        # Spans never hold request or reply content, whatever ANTHROPIC_OPEN_TELEMETRY_* say.
        open_telemetry=METADATA_ONLY_TRACES,
    )
    return AnthropicLlm(client, refusal_fallback)


class AnthropicLlm:
    """`LlmClient` over an `AsyncAnthropic`; one event loop per instance (the SDK pools connections)."""

    def __init__(
        self,
        client: anthropic.AsyncAnthropic,
        refusal_fallback: str | None,
        *,
        gate: CallGate | None = None,
        max_retries: int = 0,
    ) -> None:
        self._client = client
        self._refusal_fallback = refusal_fallback
        self._gate = gate
        self._max_retries = max_retries

    def gated(self, gate: CallGate) -> AnthropicLlm:
        """The same connection pool, every attempt through `gate`.

        The SDK retries nothing, this client retries (throttles after the gate's pause, transient
        errors up to the SDK's former `max_retries`). Closing either client closes the shared pool.
        """
        client = self._client.with_options(max_retries=0, open_telemetry=METADATA_ONLY_TRACES)
        return AnthropicLlm(client, self._refusal_fallback, gate=gate, max_retries=self._client.max_retries)

    async def aclose(self) -> None:
        """Close the connection pool on the event loop that opened it.

        Else the SDK tries to when the client is collected, after `asyncio.run` has closed that
        loop.
        """
        await self._client.close()

    async def complete(self, request: LlmRequest) -> LlmReply | LlmFailure:
        """One call; on a refusal, one more with the fallback model when one is configured.

        The refused call's tokens were paid for, so they are added to the outcome's usage
        (priced as the model that answered last, since one outcome names one model).
        """
        outcome = await self._call(request, request.model)
        if isinstance(outcome, LlmFailure) and outcome.kind == "refusal":
            return await self.after_refusal(request, outcome)
        return outcome

    async def after_refusal(self, request: LlmRequest, refused: LlmFailure) -> LlmReply | LlmFailure:
        """Send a refused request once more, interactively, to the fallback model when one is configured.

        A batch request's refusal goes too. The outcome's usage holds both calls; it is priced at
        the standard rate, an upper bound when the refused call was a batch one.
        """
        fallback = self._refusal_fallback
        if not fallback or fallback == request.model:
            return refused
        # the model id is as the API answered it: shown terminal-safe like every outside string
        shown = to_terminal_safe(str(refused.model))
        log.warning("model %s refused; retrying once with %s", shown, to_terminal_safe(fallback))
        second = await self._call(request, fallback)
        usage = refused.usage + second.usage
        if isinstance(second, LlmReply):
            return LlmReply(json=second.json, usage=usage, model=second.model)
        return LlmFailure(
            kind=second.kind, usage=usage, model=second.model or refused.model, detail=second.detail
        )

    async def _call(self, request: LlmRequest, model: str) -> LlmReply | LlmFailure:
        """One call: a single attempt (the SDK retries) or, gated, attempts through the gate."""
        gate = self._gate
        if gate is None:
            return (await self._attempt(request, model))[0]
        throttled = transient = 0
        while True:
            ticket = await gate.enter()
            signal = RateSignal()  # what the gate hears when the attempt is cancelled
            try:
                outcome, signal = await self._attempt(request, model)
            finally:
                gate.leave(ticket, signal)
            if signal.throttled:
                if throttled < MAX_THROTTLED_RETRIES:
                    throttled += 1  # the gate has lowered the concurrency
                    await gate.before_retry(signal, throttled)
                    continue
            elif _transient(signal) and transient < self._max_retries:
                transient += 1
                await gate.before_retry(signal, transient)
                continue
            return outcome

    def _params(self, request: LlmRequest, model: str) -> dict[str, Any]:
        """The Messages API parameters of a request: an interactive call's and a batch request's."""
        tool = TOOL_NAMES[request.purpose]
        params: dict[str, Any] = {
            "model": model,
            "max_tokens": request.max_tokens,
            "system": [{"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": request.user}],
            "tools": [
                {
                    "name": tool,
                    "description": "Submit the answer. The input must match the schema exactly.",
                    "input_schema": dict(request.output_schema),
                }
            ],
            "tool_choice": {"type": "tool", "name": tool},
        }
        if request.effort:
            params["output_config"] = {"effort": request.effort}
        return params

    async def _attempt(self, request: LlmRequest, model: str) -> tuple[LlmReply | LlmFailure, RateSignal]:
        """One request and what its answer said about the rate limits (status, headers)."""
        tool = TOOL_NAMES[request.purpose]
        try:
            # The raw response: the SDK still sends, retries and raises typed errors on an error
            # status, but does not build its `Message` model, of which only a few fields are read.
            response = await self._client.messages.with_raw_response.create(
                **self._params(request, model), timeout=request.timeout_ms / 1000
            )
            body = await response.read()
        except anthropic.APITimeoutError:
            return LlmFailure(kind="timeout", detail="request timed out"), RateSignal()
        except anthropic.APIConnectionError:
            return LlmFailure(kind="unavailable", detail="connection error"), RateSignal()
        except anthropic.APIStatusError as err:
            return _status_failure(err), rate_signal(err.status_code, err.response.headers)
        return _outcome(request, body, tool), rate_signal(response.status_code, response.headers)

    # --- the Message Batches API ------------------------------------------------------------

    async def submit_batch(self, requests: Sequence[tuple[str, LlmRequest]]) -> str:
        """Create one batch of `(custom_id, request)`; returns its id.

        Sends no timeout: a batch answers within 24 hours.
        """
        body = [{"custom_id": cid, "params": self._params(r, r.model)} for cid, r in requests]
        batch = await _batch_op("create", self._client.messages.batches.create(requests=body))  # type: ignore[arg-type]
        return batch.id

    async def batch_status(self, batch_id: str) -> BatchStatus:
        batch = await _batch_op("retrieve", self._client.messages.batches.retrieve(batch_id))
        counts = batch.request_counts
        return BatchStatus(
            batch_id=batch.id,
            processing=batch.processing_status,
            processing_count=counts.processing,
            succeeded=counts.succeeded,
            errored=counts.errored,
            canceled=counts.canceled,
            expired=counts.expired,
        )

    async def batch_outcomes(
        self, batch_id: str, requests: Mapping[str, LlmRequest]
    ) -> dict[str, LlmReply | LlmFailure | BatchMiss]:
        """The outcome of each of `requests` (by custom id) in an ended batch's results.

        The JSONL is read raw, one JSON object a line (no SDK models). A succeeded entry is read
        like an interactive reply and marked `batch`; errored, expired and canceled entries, and
        requests the results do not mention, are `BatchMiss`. Lines for other ids are skipped.
        """
        raw = await _batch_op("results", self._client.messages.batches.with_raw_response.results(batch_id))
        body = await _batch_op("results", raw.read())
        outcomes: dict[str, LlmReply | LlmFailure | BatchMiss] = {}
        for line in body.splitlines():
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                custom_id, result = entry["custom_id"], entry["result"]
                kind = result["type"]
            except (ValueError, TypeError, KeyError):
                raise BatchApiError(f"results of batch {batch_id}: a line is not a batch result") from None
            request = requests.get(custom_id) if isinstance(custom_id, str) else None
            if request is None or custom_id in outcomes:
                continue
            outcomes[custom_id] = _batch_outcome(request, kind, result)
        for custom_id in requests.keys() - outcomes.keys():
            missing = LlmFailure(kind="unavailable", detail="not in the batch results")
            outcomes[custom_id] = BatchMiss(result="missing", failure=missing, retry=True)
        return outcomes


def _transient(signal: RateSignal) -> bool:
    """No answer, a request timeout or lock (408, 409), or a server error (5xx but 529, which is a throttle).

    Worth another attempt after a backoff.
    """
    status = signal.status
    return status is None or status in (408, 409) or (status >= 500 and not signal.throttled)


def _count(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _instant(value: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if value else None
    except ValueError:
        return None


def retry_after_s(headers: httpx2.Headers) -> float | None:
    """`retry-after-ms`, else `retry-after` in seconds (fractions allowed) or as an HTTP date."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(float(value) * scale, 0.0)
        except ValueError:
            parsed = email.utils.parsedate_tz(value) if name == "retry-after" else None
            if parsed is not None:
                return max(float(email.utils.mktime_tz(parsed)) - time.time(), 0.0)
    return None


def _server_now(headers: httpx2.Headers) -> datetime:
    """The reply's `Date` (the server's clock, so a skewed local clock does not matter), else now."""
    value = headers.get("date")
    parsed = email.utils.parsedate_to_datetime(value) if value else None
    if parsed is None or parsed.tzinfo is None:
        return datetime.now(UTC)
    return parsed


def rate_signal(status: int | None, headers: httpx2.Headers | None) -> RateSignal:
    """The rate-limit signal of one answer, from its `anthropic-ratelimit-*` and `retry-after` headers.

    Values that do not parse count as absent. `reset_after_s` is the latest reset among the limits
    at 0 remaining, in seconds after the reply's `Date`.
    """
    if headers is None:
        return RateSignal(status=status)
    remaining = {
        name: _count(headers.get(f"{RATELIMIT_HEADER}{name}-remaining"))
        for name in ("requests", *TOKEN_LIMITS)
    }
    resets = [
        reset
        for name, left in remaining.items()
        if left == 0 and (reset := _instant(headers.get(f"{RATELIMIT_HEADER}{name}-reset"))) is not None
    ]
    tokens = [left for name, left in remaining.items() if name != "requests" and left is not None]
    reset_after = None
    if resets:
        try:
            reset_after = max((max(resets) - _server_now(headers)).total_seconds(), 0.0)
        except (TypeError, ValueError):  # a reset without a time zone
            reset_after = None
    return RateSignal(
        status=status,
        retry_after_s=retry_after_s(headers),
        requests_remaining=remaining["requests"],
        tokens_remaining=min(tokens) if tokens else None,
        reset_after_s=reset_after,
    )


async def _batch_op(what: str, operation: Awaitable[T]) -> T:
    """A Batches API operation.

    An error after the SDK's retries is a `BatchApiError` naming the operation and the status, never
    a request.
    """
    try:
        return await operation
    except anthropic.APIStatusError as err:
        raise BatchApiError(f"batch {what}: HTTP {err.status_code} {err.type or 'error'}") from None
    except anthropic.APIConnectionError:
        raise BatchApiError(f"batch {what}: connection error") from None
    except anthropic.AnthropicError as err:
        raise BatchApiError(f"batch {what}: {type(err).__name__}") from None


def _batch_outcome(
    request: LlmRequest, kind: object, result: dict[str, Any]
) -> LlmReply | LlmFailure | BatchMiss:
    """One result line: succeeded is read like an interactive reply; the rest are misses."""
    if kind == "succeeded":
        message = result.get("message")
        outcome = _message_outcome(request, message, TOOL_NAMES[request.purpose])
        return dataclasses.replace(outcome, batch=True)
    if kind in ("expired", "canceled"):
        failure = LlmFailure(kind="unavailable", detail=f"batch request {kind}")
        return BatchMiss(result=kind, failure=failure, retry=True)
    error = result.get("error") if kind == "errored" else None
    inner = error.get("error") if isinstance(error, dict) else None
    error_type = inner.get("type") if isinstance(inner, dict) else None
    named = error_type if isinstance(error_type, str) and error_type.isidentifier() else "error"
    failure_kind = BATCH_RETRYABLE_ERRORS.get(named, "unavailable")
    failure = LlmFailure(kind=failure_kind, detail=f"batch request errored ({named})")
    return BatchMiss(result="errored", failure=failure, retry=named in BATCH_RETRYABLE_ERRORS)


def _status_failure(err: anthropic.APIStatusError) -> LlmFailure:
    """An HTTP error after the SDK's retries.

    429 is rate_limited, 408 a timeout; anything else (5xx, 529 overloaded, and 4xx such as a bad
    key or a prompt too long) is unavailable: no card came back, and nothing was billed.
    """
    detail = f"HTTP {err.status_code} {err.type or 'error'}"
    if err.status_code == 429:
        return LlmFailure(kind="rate_limited", detail=detail)
    if err.status_code == 408:
        return LlmFailure(kind="timeout", detail=detail)
    return LlmFailure(kind="unavailable", detail=detail)


def _outcome(request: LlmRequest, body: bytes, tool: str) -> LlmReply | LlmFailure:
    """The outcome of a 2xx Messages API reply (its JSON bytes)."""
    try:
        message = json.loads(body)
    except ValueError:
        return LlmFailure(kind="invalid_output", detail="malformed Messages API reply")
    return _message_outcome(request, message, tool)


def _message_outcome(request: LlmRequest, message: Any, tool: str) -> LlmReply | LlmFailure:
    """The outcome of a Messages API message (a reply's JSON, or a succeeded batch result's).

    A body that is not a message (not JSON, no `model` or token counters) is `invalid_output`
    with no usage: nothing usable came back, and what was billed cannot be known.
    """
    try:
        model = message["model"]
        counters = message["usage"]
        usage = Usage(
            input_tokens=counters["input_tokens"],
            output_tokens=counters["output_tokens"],
            cache_read_tokens=counters.get("cache_read_input_tokens") or 0,
            cache_write_tokens=counters.get("cache_creation_input_tokens") or 0,
        )
        content = message.get("content") or []
        stop_reason = message.get("stop_reason")
        if not isinstance(model, str) or not isinstance(content, list):
            raise TypeError("not a message")
    except (ValueError, TypeError, KeyError, AttributeError):  # pydantic's ValidationError is a ValueError
        return LlmFailure(kind="invalid_output", detail="malformed Messages API reply")
    if stop_reason == "refusal":
        details = message.get("stop_details")
        category = details.get("category") if isinstance(details, dict) else None
        detail = f"stop_reason refusal ({category})" if isinstance(category, str) else "stop_reason refusal"
        return LlmFailure(kind="refusal", usage=usage, model=model, detail=detail)
    if stop_reason in CUT_STOP_REASONS:
        detail = f"stop_reason {stop_reason}"
        return LlmFailure(kind="invalid_output", usage=usage, model=model, detail=detail)
    tool_input = next(
        (
            b.get("input")
            for b in content
            if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == tool
        ),
        None,
    )
    if not isinstance(tool_input, dict):
        return LlmFailure(kind="invalid_output", usage=usage, model=model, detail=f"no {tool} tool input")
    return check_reply(request, LlmReply(json=tool_input, usage=usage, model=model))
