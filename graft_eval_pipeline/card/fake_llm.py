"""Offline LLM clients: a case's scripted replies, and the null model (spec E18).

Fake usage is a pure function of prompt and reply lengths, so fake runs (and their fictional
costs) repeat exactly.
"""

from __future__ import annotations

import math
from typing import Any

from graft_eval_pipeline.card.llm import LlmClient, LlmFailure, LlmReply, LlmRequest, Usage
from graft_eval_pipeline.card.models import FakeFailure, FakeScript
from graft_eval_pipeline.card.prompts import canonical_json, claim_ids, pr_title

FAKE_CHARS_PER_TOKEN = 4


class UnscriptedCall(RuntimeError):
    """The engine called a purpose the case's script has no entry for.

    A bug in the case or the engine, never an LLM failure.
    """


def fake_usage(request: LlmRequest, reply: dict[str, Any]) -> Usage:
    prompt_chars = len(request.system) + len(request.user)
    return Usage(
        input_tokens=math.ceil(prompt_chars / FAKE_CHARS_PER_TOKEN),
        output_tokens=math.ceil(len(canonical_json(reply)) / FAKE_CHARS_PER_TOKEN),
    )


def agreeing_verifier(request: LlmRequest) -> dict[str, Any]:
    """Every claim of the card supported, nothing unexplained or missing, risk trivial."""
    return {
        "claims": [{"id": claim, "status": "supported"} for claim in claim_ids(request.user)],
        "unexplained_files": [],
        "missing_behavior_changes": [],
        "risk_class": "trivial",
        "instructions_in_data": False,
    }


def null_writer(request: LlmRequest) -> dict[str, Any]:
    """A writer that always says trivial: fake mode then measures the floor alone."""
    return {
        "goal": pr_title(request.user) or "No title.",
        "behavior_changes": [],
        "risk_class": "trivial",
        "risk_reason": "The null model answers trivial for every pull request.",
        "out_of_scope_edits": [],
        "instructions_in_data": False,
    }


def _reply(request: LlmRequest, json: dict[str, Any]) -> LlmReply:
    return LlmReply(json=json, usage=fake_usage(request, json), model=request.model)


def _copied(value: Any) -> Any:
    """A deep copy of a JSON value (dicts, lists, scalars).

    What copy.deepcopy gives, without its memo bookkeeping (a fifth of a fake call).
    """
    if type(value) is dict:
        return {key: _copied(item) for key, item in value.items()}
    if type(value) is list:
        return [_copied(item) for item in value]
    return value


class _ScriptedLlm:
    def __init__(self, script: FakeScript) -> None:
        self._entries = {
            "writer": script.writer,
            "writerEscalated": script.writer_escalated,
            "verifier": script.verifier,
        }

    async def complete(self, request: LlmRequest) -> LlmReply | LlmFailure:
        entry = self._entries[request.purpose]
        if entry is None:
            raise UnscriptedCall(f"the fake LLM script has no '{request.purpose}' entry")
        if entry == "agree":
            return _reply(request, agreeing_verifier(request))
        if isinstance(entry, FakeFailure):
            return LlmFailure(kind=entry.failure, detail="scripted failure")
        return _reply(request, _copied(entry.json_))


class _NullLlm:
    async def complete(self, request: LlmRequest) -> LlmReply | LlmFailure:
        if request.purpose == "verifier":
            return _reply(request, agreeing_verifier(request))
        return _reply(request, null_writer(request))


def scripted_llm(script: FakeScript) -> LlmClient:
    return _ScriptedLlm(script)


def null_llm() -> LlmClient:
    return _NullLlm()


def llm_for_case(fake_script: FakeScript | None) -> LlmClient:
    """The case's script when it has one (an empty script allows no call), else the null model."""
    return null_llm() if fake_script is None else scripted_llm(fake_script)
