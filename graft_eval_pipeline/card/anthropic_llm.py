"""The live LLM client (design 3.5): the official `anthropic` SDK with forced tool use.

Forcing the one tool whose input schema is the output schema makes the model answer JSON that
the API has already shaped; the reply is still checked against the schema here, because a
truncated or sloppy answer must become `invalid_output`, never a half-filled card. The SDK
retries 429/529/5xx/connection errors itself (`max_retries`, honouring `retry-after-ms`, then
`retry-after`); what is left when it gives up becomes a failure kind. Failures carry kinds,
status codes and error types only, never prompt or reply text.

A 2xx reply is read from its JSON through the SDK's raw-response path: building the SDK's
`Message` model cost about a sixth of the client's CPU per call, for the five fields read here.
"""

from __future__ import annotations

import json
import logging

import anthropic
import httpx2

from graft_eval_pipeline.card.llm import LlmClient, LlmFailure, LlmReply, LlmRequest, Usage, check_reply
from graft_eval_pipeline.card.models import LlmPurpose

log = logging.getLogger(__name__)

TOOL_NAMES: dict[LlmPurpose, str] = {
    "writer": "submit_card",
    "writerEscalated": "submit_card",
    "verifier": "submit_verification",
}
CUT_STOP_REASONS = frozenset({"max_tokens", "model_context_window_exceeded"})
"""The answer was cut off, so its tool input is incomplete even when it happens to parse."""


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
        open_telemetry={"traces": {"content_mode": "metadata_only"}},
    )
    return AnthropicLlm(client, refusal_fallback)


class AnthropicLlm:
    """`LlmClient` over an `AsyncAnthropic`; one event loop per instance (the SDK pools connections)."""

    def __init__(self, client: anthropic.AsyncAnthropic, refusal_fallback: str | None) -> None:
        self._client = client
        self._refusal_fallback = refusal_fallback

    async def aclose(self) -> None:
        """Close the connection pool on the event loop that opened it (else the SDK tries to
        when the client is collected, after `asyncio.run` has closed that loop)."""
        await self._client.close()

    async def complete(self, request: LlmRequest) -> LlmReply | LlmFailure:
        """One call; on a refusal, one more with the fallback model when one is configured.

        The refused call's tokens were paid for, so they are added to the outcome's usage
        (priced as the model that answered last, since one outcome names one model).
        """
        outcome = await self._call(request, request.model)
        fallback = self._refusal_fallback
        refused = isinstance(outcome, LlmFailure) and outcome.kind == "refusal"
        if not refused or not fallback or fallback == request.model:
            return outcome
        log.warning("model %s refused; retrying once with %s", outcome.model, fallback)
        second = await self._call(request, fallback)
        usage = outcome.usage + second.usage
        if isinstance(second, LlmReply):
            return LlmReply(json=second.json, usage=usage, model=second.model)
        return LlmFailure(
            kind=second.kind, usage=usage, model=second.model or outcome.model, detail=second.detail
        )

    async def _call(self, request: LlmRequest, model: str) -> LlmReply | LlmFailure:
        tool = TOOL_NAMES[request.purpose]
        try:
            # The raw response: the SDK still sends, retries and raises typed errors on an error
            # status, but does not build its `Message` model, of which only a few fields are read.
            response = await self._client.messages.with_raw_response.create(
                model=model,
                max_tokens=request.max_tokens,
                system=[{"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}],
                messages=[{"role": "user", "content": request.user}],
                tools=[
                    {
                        "name": tool,
                        "description": "Submit the answer. The input must match the schema exactly.",
                        "input_schema": dict(request.output_schema),
                    }
                ],
                tool_choice={"type": "tool", "name": tool},
                output_config={"effort": request.effort} if request.effort else anthropic.omit,
                timeout=request.timeout_ms / 1000,
            )
            body = await response.read()
        except anthropic.APITimeoutError:
            return LlmFailure(kind="timeout", detail="request timed out")
        except anthropic.APIConnectionError:
            return LlmFailure(kind="unavailable", detail="connection error")
        except anthropic.APIStatusError as err:
            return _status_failure(err)
        return _outcome(request, body, tool)


def _status_failure(err: anthropic.APIStatusError) -> LlmFailure:
    """An HTTP error after the SDK's retries. 429 is rate_limited, 408 a timeout; anything
    else (5xx, 529 overloaded, and 4xx such as a bad key or a prompt too long) is unavailable:
    no card came back, and nothing was billed."""
    detail = f"HTTP {err.status_code} {err.type or 'error'}"
    if err.status_code == 429:
        return LlmFailure(kind="rate_limited", detail=detail)
    if err.status_code == 408:
        return LlmFailure(kind="timeout", detail=detail)
    return LlmFailure(kind="unavailable", detail=detail)


def _outcome(request: LlmRequest, body: bytes, tool: str) -> LlmReply | LlmFailure:
    """The outcome of a 2xx Messages API reply (its JSON bytes).

    A body that is not a message (not JSON, no `model` or token counters) is `invalid_output`
    with no usage: nothing usable came back, and what was billed cannot be known.
    """
    try:
        message = json.loads(body)
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
