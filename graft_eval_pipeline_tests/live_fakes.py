"""Fakes for live-mode tests: an injected `LlmClient`, small case sets, and a fake Messages API.

Nothing here reaches the network: `FakeLive` answers in process, and `MessagesApi` is an
`httpx2.MockTransport` handler that answers the real client with real-shaped tool_use replies.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2

from graft_eval_pipeline.card.fake_llm import agreeing_verifier, null_writer
from graft_eval_pipeline.card.llm import LlmFailure, LlmReply, LlmRequest, Usage
from graft_eval_pipeline.card.models import RiskClass
from graft_eval_pipeline.evalset.run.budget import Estimate
from graft_eval_pipeline.evalset.run.options import RunOptions
from graft_eval_pipeline.evalset.sets.store import CaseSet, write_case
from graft_eval_pipeline_tests.builders import (
    make_case,
    make_inputs,
    make_label,
    make_pilot_case,
    make_pilot_set,
    make_synthetic_set,
    run_options,
)

GOAL_MARK = "GOALTEXT-4b1e"
"""Every fake PR title (and so every null-writer goal) holds it: it must never leave a sealed file."""
CALL_USAGE = Usage(input_tokens=1000, output_tokens=200)
Answer = Callable[[LlmRequest], LlmReply | LlmFailure]


class NetworkForbidden(BaseException):
    """Raised on any request that no test transport answers; see the `no_network` fixture.

    Raised on any request that no test transport answers (a BaseException, so neither the SDK's
    retry loop nor our error mapping can swallow it); see the `no_network` fixture.
    """


def default_answer(request: LlmRequest) -> LlmReply:
    """The null writer (trivial) and an agreeing verifier, answered with a dated model id."""
    body = agreeing_verifier(request) if request.purpose == "verifier" else null_writer(request)
    return LlmReply(json=body, usage=CALL_USAGE, model=f"{request.model}-20261001")


class FakeLive:
    """An injected live client.

    Records requests, tracks calls in flight, optional delay; counts `aclose` calls (the harness
    closes a live client's pool on the run's loop).
    """

    def __init__(self, answer: Answer = default_answer, delay_s: float = 0.0) -> None:
        self.answer = answer
        self.delay_s = delay_s
        self.requests: list[LlmRequest] = []
        self.in_flight = 0
        self.peak = 0
        self.closed = 0

    async def aclose(self) -> None:
        self.closed += 1

    async def complete(self, request: LlmRequest) -> LlmReply | LlmFailure:
        self.requests.append(request)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.delay_s)
            return self.answer(request)
        finally:
            self.in_flight -= 1


class Factory:
    """`llm_factory` that counts how often the harness built the client."""

    def __init__(self, client: FakeLive) -> None:
        self.client = client
        self.built = 0

    def __call__(self) -> FakeLive:
        self.built += 1
        return self.client


class Confirm:
    """`confirm` that records each estimate it was shown and answers `answer`."""

    def __init__(self, answer: bool = True) -> None:
        self.answer = answer
        self.seen: list[Estimate] = []

    async def __call__(self, estimate: Estimate) -> bool:
        self.seen.append(estimate)
        return self.answer


def case_ids(n: int) -> list[str]:
    return [f"syn-{900 + i:03d}-live" for i in range(n)]


def live_set(root: Path, n: int, *, key: bytes | None = None, **case_over: Any) -> CaseSet:
    """`n` labeled cases, PR numbers 101.., each title holding GOAL_MARK; pilot when a key is given."""
    set_id = "pilot-live" if key is not None else "live-demo"
    if key is not None:
        cs = make_pilot_set(root / set_id, key=key)
    else:
        cs = make_synthetic_set(root / set_id, set_id=set_id)
    for i in range(n):
        inputs = make_inputs(pr={"number": 101 + i, "title": f"{GOAL_MARK} change {i}"})
        over = {"inputs": inputs, "labels": [make_label(risk="trivial")], **case_over}
        if key is not None:
            write_case(cs, make_pilot_case(set_id, 101 + i, **over))
        else:
            write_case(cs, make_case(case_ids(n)[i], **over))
    return cs


def live_options(cs: CaseSet, factory: Factory, confirm: Confirm | None = None, **over: Any) -> RunOptions:
    fields: dict[str, Any] = {"mode": "live", "llm_factory": factory, "confirm": confirm or Confirm()}
    fields.update(over)
    return run_options(cs, **fields)


def writer_reply(risk: RiskClass, goal: str = "Adjust a helper") -> dict[str, Any]:
    return {
        "goal": goal,
        "behavior_changes": ["Changes a constant"],
        "risk_class": risk,
        "risk_reason": "A small change.",
        "out_of_scope_edits": [],
        "instructions_in_data": False,
    }


class MessagesApi:
    """A MockTransport handler for POST /v1/messages: real-shaped forced tool_use replies.

    The writer tool answers `writer_risk` with the PR title as the goal; the verifier tool
    supports every claim. Records each request body.
    """

    def __init__(self, writer_risk: RiskClass = "trivial") -> None:
        self.writer_risk = writer_risk
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        assert request.method == "POST" and request.url.path == "/v1/messages", request.url
        body = json.loads(request.content)
        self.bodies.append(body)
        tool = body["tool_choice"]["name"]
        user = body["messages"][0]["content"]
        fake = LlmRequest(
            purpose="verifier" if tool == "submit_verification" else "writer",
            model=body["model"],
            system="",
            user=user,
            output_schema={},
            max_tokens=body["max_tokens"],
            timeout_ms=1000,
        )
        answer = agreeing_verifier(fake) if tool == "submit_verification" else null_writer(fake)
        if tool == "submit_card":
            answer["risk_class"] = self.writer_risk
        return httpx2.Response(200, json=message_json(body["model"], tool, answer))


def message_json(
    model: str,
    tool: str,
    tool_input: object,
    *,
    stop_reason: str = "tool_use",
    content: list[dict[str, Any]] | None = None,
    stop_details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A real-shaped Messages API reply body.

    Forced use of `tool`, prompt-cache counters, and the dated snapshot of the requested `model`;
    `content` replaces the one tool_use block.
    """
    blocks = [{"type": "tool_use", "id": "toolu_01", "name": tool, "input": tool_input}]
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": f"{model}-20261001",
        "content": blocks if content is None else content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "stop_details": stop_details,
        "usage": {
            "input_tokens": 1200,
            "output_tokens": 310,
            "cache_creation_input_tokens": 900,
            "cache_read_input_tokens": 4000,
            "cache_creation": {"ephemeral_5m_input_tokens": 900, "ephemeral_1h_input_tokens": 0},
            "service_tier": "standard",
        },
    }
