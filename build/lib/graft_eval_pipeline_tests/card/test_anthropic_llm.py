"""The live Anthropic client (design 3.5) against a fake Messages API on `httpx2.MockTransport`.

No test reaches the network: every client gets a MockTransport and a `.invalid` base URL, and
the `no_network` fixture (conftest.py) makes httpx2's real transports raise `NetworkForbidden` (a
BaseException, so neither the SDK's retry loop nor our error mapping can swallow it).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from types import SimpleNamespace
from typing import Any

import anthropic
import httpx2
import pytest

from graft_eval_pipeline.card.anthropic_llm import AnthropicLlm, create_anthropic_llm
from graft_eval_pipeline.card.llm import LlmClient, LlmFailure, LlmReply, LlmRequest, Usage
from graft_eval_pipeline_tests.live_fakes import NetworkForbidden, message_json

pytestmark = pytest.mark.usefixtures("no_network")

BASE_URL = "http://anthropic.invalid"
MESSAGES_URL = f"{BASE_URL}/v1/messages"
SYSTEM = "You write intent cards. SYSTEM-SECRET-7f3a"
USER = "PR title: rotate the signing key. USER-SECRET-91bc"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "goal": {"type": "string", "minLength": 1},
        "risk_class": {"type": "string", "enum": ["trivial", "logic", "sensitive"]},
    },
    "required": ["goal", "risk_class"],
    "additionalProperties": False,
}
CARD = {"goal": "Rotate the signing key", "risk_class": "sensitive"}
PROSE = "MODEL-PROSE-55d0"


class FakeApi:
    """Answers POST /v1/messages from a queue, in order, and records every request."""

    def __init__(self, *answers: httpx2.Response | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        if request.method != "POST" or str(request.url) != MESSAGES_URL:
            raise NetworkForbidden(f"unexpected request {request.method} {request.url}")
        self.requests.append(request)
        if not self.answers:
            raise NetworkForbidden("more requests than the test scripted")
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


def message(
    tool_input: object = CARD,
    *,
    model: str = "claude-haiku-5-5",
    stop_reason: str = "tool_use",
    tool_name: str = "submit_card",
    content: list[dict[str, Any]] | None = None,
    stop_details: dict[str, Any] | None = None,
) -> httpx2.Response:
    """A real-shaped Messages API reply from `model`'s dated snapshot (forced tool use, cache counters)."""
    body = message_json(
        model, tool_name, tool_input, stop_reason=stop_reason, content=content, stop_details=stop_details
    )
    return httpx2.Response(200, json=body)


def api_error(status: int, kind: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    body = {"type": "error", "error": {"type": kind, "message": "Try again later."}}
    return httpx2.Response(status, headers=headers, json=body)


def make_llm(api: FakeApi, *, max_retries: int = 0, refusal_fallback: str | None = None) -> LlmClient:
    return create_anthropic_llm(
        api_key="test-key",
        max_retries=max_retries,
        timeout_ms=60_000,
        refusal_fallback=refusal_fallback,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(api)),
        base_url=BASE_URL,
    )


def make_request(**over: Any) -> LlmRequest:
    fields: dict[str, Any] = {
        "purpose": "writer",
        "model": "claude-haiku-5-5",
        "system": SYSTEM,
        "user": USER,
        "output_schema": SCHEMA,
        "max_tokens": 4096,
        "timeout_ms": 45_000,
    }
    fields.update(over)
    return LlmRequest(**fields)


def complete(llm: LlmClient, request: LlmRequest | None = None) -> LlmReply | LlmFailure:
    return asyncio.run(llm.complete(request or make_request()))


def assert_private(failure: LlmFailure) -> None:
    for secret in ("SECRET", PROSE, "Rotate", "Try again later"):
        assert secret not in failure.detail


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Records the SDK's retry waits instead of sleeping.

    The SDK waits with `anyio.sleep` in `anthropic._base_client` (2.14); only that module's
    reference is replaced, so a changed SDK fails here loudly rather than sleeping for real.
    """
    recorded: list[float] = []

    async def sleep(seconds: float) -> None:
        recorded.append(seconds)

    monkeypatch.setattr("anthropic._base_client.anyio", SimpleNamespace(sleep=sleep))
    return recorded


def test_U_ANTH_1_building_the_client_sends_nothing() -> None:
    api = FakeApi()
    make_llm(api, max_retries=3, refusal_fallback="claude-opus-5-5")
    create_anthropic_llm(api_key="test-key", max_retries=2, timeout_ms=1000, refusal_fallback=None)
    assert api.requests == []


def test_U_ANTH_1_guard_stops_a_client_without_an_injected_transport() -> None:
    llm = create_anthropic_llm(
        api_key="test-key", max_retries=0, timeout_ms=1000, refusal_fallback=None, base_url=BASE_URL
    )
    with pytest.raises(NetworkForbidden):
        complete(llm)


def test_U_ANTH_2_request_forces_the_tool_and_caches_the_system_prompt() -> None:
    api = FakeApi(message(), message(tool_name="submit_verification"), message())
    llm = make_llm(api)

    async def three_calls() -> None:
        await llm.complete(make_request())
        await llm.complete(make_request(purpose="verifier", model="claude-sonnet-5-5"))
        await llm.complete(make_request(effort="low"))

    asyncio.run(three_calls())
    writer, verifier, with_effort = api.bodies()
    assert writer == {
        "model": "claude-haiku-5-5",
        "max_tokens": 4096,
        "system": [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": USER}],
        "tools": [
            {
                "name": "submit_card",
                "description": "Submit the answer. The input must match the schema exactly.",
                "input_schema": SCHEMA,
            }
        ],
        "tool_choice": {"type": "tool", "name": "submit_card"},
    }
    assert verifier["model"] == "claude-sonnet-5-5"
    assert verifier["tools"][0]["name"] == "submit_verification"
    assert verifier["tool_choice"] == {"type": "tool", "name": "submit_verification"}
    assert with_effort["output_config"] == {"effort": "low"}
    sent = api.requests[0]
    assert sent.headers["authorization"] == "Bearer test-key"
    assert sent.extensions["timeout"]["read"] == 45.0


def test_U_ANTH_3_reply_is_the_tool_input_with_usage_and_the_dated_model() -> None:
    reply = complete(make_llm(FakeApi(message())))
    assert reply == LlmReply(
        json=CARD,
        usage=Usage(input_tokens=1200, output_tokens=310, cache_read_tokens=4000, cache_write_tokens=900),
        model="claude-haiku-5-5-20261001",
    )


def test_U_ANTH_3_missing_cache_counters_count_as_zero() -> None:
    answer = message()
    body = json.loads(answer.content)
    del body["usage"]["cache_read_input_tokens"]
    body["usage"]["cache_creation_input_tokens"] = None
    reply = complete(make_llm(FakeApi(httpx2.Response(200, json=body))))
    assert isinstance(reply, LlmReply)
    assert reply.usage == Usage(input_tokens=1200, output_tokens=310)


def test_U_ANTH_4_429_is_retried_by_the_sdk_after_retry_after_ms() -> None:
    api = FakeApi(
        api_error(429, "rate_limit_error", {"retry-after-ms": "1", "retry-after": "30"}),
        message(),
    )
    started = time.monotonic()
    reply = complete(make_llm(api, max_retries=2))
    assert isinstance(reply, LlmReply)
    assert reply.json == CARD
    assert [r.headers["x-stainless-retry-count"] for r in api.requests] == ["0", "1"]
    assert time.monotonic() - started < 5, "retry-after-ms must win over retry-after"


def test_U_ANTH_4_retry_after_seconds_is_honoured(sleeps: list[float]) -> None:
    api = FakeApi(api_error(429, "rate_limit_error", {"retry-after": "7"}), message())
    assert isinstance(complete(make_llm(api, max_retries=1)), LlmReply)
    assert sleeps == [7.0]
    assert len(api.requests) == 2


def test_U_ANTH_4_429_after_the_last_retry_is_rate_limited() -> None:
    limited = [api_error(429, "rate_limit_error", {"retry-after-ms": "1"}) for _ in range(3)]
    api = FakeApi(*limited)
    failure = complete(make_llm(api, max_retries=2))
    assert failure == LlmFailure(kind="rate_limited", detail="HTTP 429 rate_limit_error")
    assert failure.retryable
    assert len(api.requests) == 3


def test_U_ANTH_5_529_overloaded_is_retried_then_unavailable() -> None:
    overloaded = [api_error(529, "overloaded_error", {"retry-after-ms": "1"}) for _ in range(2)]
    api = FakeApi(*overloaded)
    failure = complete(make_llm(api, max_retries=1))
    assert failure == LlmFailure(kind="unavailable", detail="HTTP 529 overloaded_error")
    assert failure.retryable
    assert len(api.requests) == 2
    assert_private(failure)


@pytest.mark.parametrize(
    ("answer", "detail"),
    [
        (api_error(500, "api_error"), "HTTP 500 api_error"),
        (api_error(503, "api_error"), "HTTP 503 api_error"),
        (httpx2.ConnectError("connection refused"), "connection error"),
    ],
)
def test_U_ANTH_5_server_and_connection_errors_are_unavailable(
    answer: httpx2.Response | Exception, detail: str
) -> None:
    assert complete(make_llm(FakeApi(answer))) == LlmFailure(kind="unavailable", detail=detail)


def test_U_ANTH_5_a_client_error_is_not_retried_and_is_unavailable() -> None:
    api = FakeApi(api_error(400, "invalid_request_error"))
    failure = complete(make_llm(api, max_retries=2))
    assert failure == LlmFailure(kind="unavailable", detail="HTTP 400 invalid_request_error")
    assert len(api.requests) == 1


def test_U_ANTH_6_a_transport_timeout_is_timeout() -> None:
    api = FakeApi(httpx2.ReadTimeout("read timed out"))
    failure = complete(make_llm(api))
    assert failure == LlmFailure(kind="timeout", detail="request timed out")
    assert failure.retryable


def test_U_ANTH_6_timeouts_are_retried_by_the_sdk(sleeps: list[float]) -> None:
    api = FakeApi(httpx2.ReadTimeout("read timed out"), message())
    assert isinstance(complete(make_llm(api, max_retries=1)), LlmReply)
    assert len(sleeps) == 1
    assert len(api.requests) == 2


def refusal(model: str = "claude-haiku-5-5") -> httpx2.Response:
    return message(
        model=model,
        stop_reason="refusal",
        content=[{"type": "text", "text": PROSE}],
        stop_details={"type": "refusal", "category": "cyber", "explanation": PROSE},
    )


def test_U_ANTH_7_refusal_without_a_fallback_is_refusal() -> None:
    api = FakeApi(refusal())
    failure = complete(make_llm(api))
    assert isinstance(failure, LlmFailure)
    assert (failure.kind, failure.detail) == ("refusal", "stop_reason refusal (cyber)")
    assert failure.model == "claude-haiku-5-5-20261001"
    assert failure.usage.input_tokens == 1200
    assert not failure.retryable
    assert len(api.requests) == 1


def test_U_ANTH_7_refusal_is_sent_once_to_the_fallback_model(caplog: pytest.LogCaptureFixture) -> None:
    api = FakeApi(refusal(), message(model="claude-opus-5-5"))
    with caplog.at_level(logging.DEBUG, logger="graft_eval_pipeline"):
        reply = complete(make_llm(api, refusal_fallback="claude-opus-5-5"))
    assert isinstance(reply, LlmReply)
    assert reply.json == CARD
    assert reply.model == "claude-opus-5-5-20261001"
    assert reply.usage == Usage(
        input_tokens=2400, output_tokens=620, cache_read_tokens=8000, cache_write_tokens=1800
    )
    first, second = api.bodies()
    assert (first["model"], second["model"]) == ("claude-haiku-5-5", "claude-opus-5-5")
    assert second["system"] == first["system"] and second["tools"] == first["tools"]
    assert "claude-opus-5-5" in caplog.text
    assert "SECRET" not in caplog.text and PROSE not in caplog.text


def test_U_ANTH_7_a_second_refusal_is_final() -> None:
    api = FakeApi(refusal(), refusal(model="claude-opus-5-5"))
    failure = complete(make_llm(api, refusal_fallback="claude-opus-5-5"))
    assert isinstance(failure, LlmFailure)
    assert failure.kind == "refusal"
    assert failure.model == "claude-opus-5-5-20261001"
    assert failure.usage.input_tokens == 2400
    assert len(api.requests) == 2


def test_U_ANTH_7_no_fallback_to_the_model_that_just_refused() -> None:
    api = FakeApi(refusal())
    failure = complete(make_llm(api, refusal_fallback="claude-haiku-5-5"))
    assert isinstance(failure, LlmFailure)
    assert failure.kind == "refusal"
    assert len(api.requests) == 1


@pytest.mark.parametrize(
    ("answer", "detail"),
    [
        (message({"goal": PROSE}), "$: missing risk_class"),
        (
            message({"goal": PROSE, "risk_class": "catastrophic"}),
            "$.risk_class: not one of the allowed values",
        ),
        (message({**CARD, "note": PROSE}), "$: 1 unexpected field(s)"),
        (message(PROSE), "no submit_card tool input"),
        (message(CARD, tool_name="other_tool"), "no submit_card tool input"),
        (
            message(content=[{"type": "text", "text": PROSE}], stop_reason="end_turn"),
            "no submit_card tool input",
        ),
        (message(CARD, stop_reason="max_tokens"), "stop_reason max_tokens"),
    ],
)
def test_U_ANTH_8_a_reply_that_breaks_the_schema_is_invalid_output(
    answer: httpx2.Response, detail: str
) -> None:
    failure = complete(make_llm(FakeApi(answer)))
    assert isinstance(failure, LlmFailure)
    assert (failure.kind, failure.detail) == ("invalid_output", detail)
    assert failure.model == "claude-haiku-5-5-20261001"
    assert failure.usage.output_tokens == 310
    assert not failure.retryable
    assert_private(failure)


def malformed(body: object) -> httpx2.Response:
    if isinstance(body, bytes):
        return httpx2.Response(200, content=body, headers={"content-type": "application/json"})
    return httpx2.Response(200, json=body)


def without(key: str, *, inside: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(message().content)
    del (body[inside] if inside else body)[key]
    return body


@pytest.mark.parametrize(
    "answer",
    [
        malformed(b"<html>" + PROSE.encode() + b"</html>"),
        malformed(b'{"model": "claude-haiku-5-5-20261001", "usage": '),
        malformed([CARD]),
        malformed(without("usage")),
        malformed(without("model")),
        malformed(without("output_tokens", inside="usage")),
        malformed({**without("usage"), "usage": {"input_tokens": -1, "output_tokens": 310}}),
        malformed({**without("content"), "content": PROSE}),
    ],
)
def test_U_ANTH_8_a_2xx_body_that_is_not_a_message_is_invalid_output(answer: httpx2.Response) -> None:
    failure = complete(make_llm(FakeApi(answer), max_retries=2))
    assert failure == LlmFailure(kind="invalid_output", detail="malformed Messages API reply")
    assert not failure.retryable
    assert_private(failure)


def test_spans_never_carry_content_whatever_the_environment_says(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE", "content")
    assert anthropic.AsyncAnthropic(api_key="test-key").open_telemetry["traces"]["content_mode"] == "content"
    llm = make_llm(FakeApi())
    assert isinstance(llm, AnthropicLlm)
    assert llm._client.open_telemetry["traces"]["content_mode"] == "metadata_only"
