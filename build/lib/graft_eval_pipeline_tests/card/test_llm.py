"""LLM types, the output-schema check, and the offline clients (design 3.5, spec E18)."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from graft_eval_pipeline.card.fake_llm import (
    UnscriptedCall,
    agreeing_verifier,
    fake_usage,
    llm_for_case,
    null_llm,
    scripted_llm,
)
from graft_eval_pipeline.card.floor import compute_risk_floor
from graft_eval_pipeline.card.llm import LlmClient, LlmFailure, LlmReply, LlmRequest, Usage, check_reply
from graft_eval_pipeline.card.models import FakeScript, LlmPurpose
from graft_eval_pipeline.card.prompts import (
    VERIFIER_OUTPUT_SCHEMA,
    VERIFIER_SYSTEM_PROMPT,
    WRITER_OUTPUT_SCHEMA,
    WRITER_SYSTEM_PROMPT,
    canonical_json,
    verifier_user_prompt,
    writer_user_prompt,
)
from graft_eval_pipeline_tests.builders import make_inputs

WRITER_JSON: dict[str, Any] = {
    "goal": "Fix a typo.",
    "behavior_changes": ["The README spells 'receive' correctly."],
    "risk_class": "trivial",
    "risk_reason": "Documentation only.",
    "out_of_scope_edits": [],
    "instructions_in_data": False,
}


def _writer_request(purpose: LlmPurpose = "writer", model: str = "claude-haiku-5-5") -> LlmRequest:
    inputs = make_inputs(pr={"title": "Fix typo in README"})
    user = writer_user_prompt(inputs, compute_risk_floor(inputs), frozenset())
    return LlmRequest(purpose, model, WRITER_SYSTEM_PROMPT, user, WRITER_OUTPUT_SCHEMA, 4096, 120_000)


def _verifier_request(claims: list[str]) -> LlmRequest:
    user = verifier_user_prompt(make_inputs(), frozenset(), "goal", claims)
    return LlmRequest(
        "verifier", "claude-sonnet-5-5", VERIFIER_SYSTEM_PROMPT, user, VERIFIER_OUTPUT_SCHEMA, 4096, 120_000
    )


def _complete(llm: LlmClient, request: LlmRequest) -> LlmReply | LlmFailure:
    return asyncio.run(llm.complete(request))


def test_usage_adds_every_counter() -> None:
    total = Usage(input_tokens=1, output_tokens=2) + Usage(
        cache_read_tokens=3, cache_write_tokens=4, input_tokens=5
    )
    assert total == Usage(input_tokens=6, output_tokens=2, cache_read_tokens=3, cache_write_tokens=4)
    assert total.to_json_dict() == {
        "inputTokens": 6,
        "outputTokens": 2,
        "cacheReadTokens": 3,
        "cacheWriteTokens": 4,
    }


@pytest.mark.parametrize(
    ("kind", "retryable"),
    [
        ("unavailable", True),
        ("timeout", True),
        ("rate_limited", True),
        ("refusal", False),
        ("invalid_output", False),
    ],
)
def test_failure_kinds_are_retryable_exactly_for_the_transient_ones(kind: Any, retryable: bool) -> None:
    assert LlmFailure(kind=kind).retryable is retryable


def test_check_reply_passes_a_valid_reply_through() -> None:
    request = _writer_request()
    reply = LlmReply(json=WRITER_JSON, usage=Usage(input_tokens=3), model="claude-haiku-5-5-20261001")
    assert check_reply(request, reply) is reply


@pytest.mark.parametrize(
    "broken",
    [
        {k: v for k, v in WRITER_JSON.items() if k != "goal"},
        {**WRITER_JSON, "surprise": True},
        {**WRITER_JSON, "risk_class": "critical"},
        {**WRITER_JSON, "behavior_changes": ["x"] * 11},
        {**WRITER_JSON, "instructions_in_data": "no"},
        {**WRITER_JSON, "goal": ""},
        {**WRITER_JSON, "out_of_scope_edits": [{"path": "a.ts"}]},
        {**WRITER_JSON, "behavior_changes": [1]},
    ],
)
def test_check_reply_turns_a_schema_violation_into_invalid_output(broken: dict[str, Any]) -> None:
    reply = LlmReply(json=broken, usage=Usage(input_tokens=9, output_tokens=4), model="m-answered")
    result = check_reply(_writer_request(), reply)
    assert isinstance(result, LlmFailure)
    assert (result.kind, result.usage, result.model) == ("invalid_output", reply.usage, "m-answered")
    assert not result.retryable


def test_invalid_output_detail_never_quotes_the_reply() -> None:
    secret = "SECRET-GOAL-TEXT " * 100
    reply = LlmReply(json={**WRITER_JSON, "goal": secret, "extra_field_name": 1}, usage=Usage(), model="m")
    result = check_reply(_writer_request(), reply)
    assert isinstance(result, LlmFailure)
    assert "SECRET" not in result.detail and "extra_field_name" not in result.detail


def test_scripted_writer_answers_its_json_with_the_requested_model_and_length_usage() -> None:
    request = _writer_request()
    reply = _complete(scripted_llm(FakeScript.model_validate({"writer": {"json": WRITER_JSON}})), request)
    assert isinstance(reply, LlmReply)
    assert reply.json == WRITER_JSON and reply.model == "claude-haiku-5-5"
    assert reply.usage == Usage(
        input_tokens=math.ceil((len(request.system) + len(request.user)) / 4),
        output_tokens=math.ceil(len(canonical_json(WRITER_JSON)) / 4),
    )
    assert reply.usage == fake_usage(request, WRITER_JSON)


def test_scripted_reply_is_a_copy() -> None:
    llm = scripted_llm(FakeScript.model_validate({"writer": {"json": WRITER_JSON}}))
    first = _complete(llm, _writer_request())
    assert isinstance(first, LlmReply)
    first.json["behavior_changes"].append("mutated")
    second = _complete(llm, _writer_request())
    assert isinstance(second, LlmReply) and second.json == WRITER_JSON


def test_scripted_failure_is_a_failure_value() -> None:
    llm = scripted_llm(FakeScript.model_validate({"writer": {"failure": "rate_limited"}}))
    result = _complete(llm, _writer_request())
    assert isinstance(result, LlmFailure)
    assert result.kind == "rate_limited" and result.retryable


@pytest.mark.parametrize("purpose", ["writer", "writerEscalated"])
def test_a_purpose_without_an_entry_raises(purpose: LlmPurpose) -> None:
    with pytest.raises(UnscriptedCall, match=purpose):
        _complete(scripted_llm(FakeScript()), _writer_request(purpose))


def test_empty_script_allows_no_verifier_call_either() -> None:
    with pytest.raises(UnscriptedCall):
        _complete(llm_for_case(FakeScript()), _verifier_request(["a"]))


def test_agree_supports_every_claim_of_the_request() -> None:
    llm = scripted_llm(FakeScript.model_validate({"verifier": "agree"}))
    reply = _complete(llm, _verifier_request(["one", "two", "three"]))
    assert isinstance(reply, LlmReply)
    assert reply.json == agreeing_verifier(_verifier_request(["one", "two", "three"]))
    assert reply.json["claims"] == [{"id": f"b{i}", "status": "supported"} for i in (1, 2, 3)]
    assert reply.json["risk_class"] == "trivial"
    assert not reply.json["instructions_in_data"]
    assert reply.json["unexplained_files"] == [] and reply.json["missing_behavior_changes"] == []


def test_null_model_writes_a_trivial_card_from_the_title_and_agrees() -> None:
    llm = llm_for_case(None)
    writer = _complete(llm, _writer_request())
    assert isinstance(writer, LlmReply)
    assert writer.json["goal"] == "Fix typo in README"
    assert (writer.json["risk_class"], writer.json["out_of_scope_edits"]) == ("trivial", [])
    assert check_reply(_writer_request(), writer) is writer
    verifier = _complete(null_llm(), _verifier_request(["x"]))
    assert isinstance(verifier, LlmReply)
    assert verifier.json["claims"] == [{"id": "b1", "status": "supported"}]
