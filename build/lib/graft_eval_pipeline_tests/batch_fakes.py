"""A fake Message Batches API on `httpx2.MockTransport` (no network), with real-shaped answers.

`BatchesApi` answers the routes the SDK uses: POST /v1/messages/batches (create),
GET /v1/messages/batches/{id} (retrieve: `in_progress` for `polls_before_end` polls, then
`ended` with request counts and a `results_url`), GET .../results (JSONL, one line per request,
out of order) and POST /v1/messages (the interactive retries, answered by `MessagesApi`).
`miss(params)` chooses a request's result: None (succeeded) or "expired", "canceled",
"errored:<error type>"; `refuse(params)` makes a succeeded one a refusal; `hold` keeps every
batch in progress.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import httpx2

from graft_eval_pipeline.card.llm import LlmClient
from graft_eval_pipeline.evalset.run.live import anthropic_llm
from graft_eval_pipeline.evalset.sets.env import EvalEnv
from graft_eval_pipeline_tests.live_fakes import MessagesApi

BASE_URL = "http://anthropic.invalid"
BATCHES = "/v1/messages/batches"
CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
Miss = Callable[[dict[str, Any]], str | None]


def prompt_of(params: dict[str, Any]) -> str:
    return str(params["messages"][0]["content"])


def is_fast_writer(params: dict[str, Any]) -> bool:
    return bool(params["tool_choice"]["name"] == "submit_card" and params["model"] == "claude-haiku-5-5")


def is_verifier(params: dict[str, Any]) -> bool:
    return bool(params["tool_choice"]["name"] == "submit_verification")


class BatchesApi:
    def __init__(
        self,
        *,
        writer_risk: str = "trivial",
        polls_before_end: int = 1,
        miss: Miss | None = None,
        refuse: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:
        self.messages = MessagesApi(writer_risk=writer_risk)  # type: ignore[arg-type]
        self.polls_before_end = polls_before_end
        self.miss = miss or (lambda _params: None)
        self.refuse = refuse or (lambda _params: False)
        self.hold = False
        self.batches: dict[str, dict[str, Any]] = {}
        self.created: list[str] = []
        self.retrieved: list[str] = []
        self.results_read: list[str] = []
        self.interactive: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if request.method == "POST" and path == "/v1/messages":
            self.interactive.append(json.loads(request.content))
            return self.messages(request)
        if request.method == "POST" and path == BATCHES:
            return self.create(json.loads(request.content))
        match = re.fullmatch(rf"{BATCHES}/([^/]+)(/results)?", path)
        assert request.method == "GET" and match and match.group(1) in self.batches, request.url
        batch_id = match.group(1)
        if match.group(2):
            return self.results(batch_id)
        self.retrieved.append(batch_id)
        self.batches[batch_id]["polls"] += 1
        return httpx2.Response(200, json=self.batch_json(batch_id))

    def create(self, body: dict[str, Any]) -> httpx2.Response:
        requests = body["requests"]
        ids = [r["custom_id"] for r in requests]
        assert all(CUSTOM_ID.match(i) for i in ids) and len(set(ids)) == len(ids)
        assert all(set(r) == {"custom_id", "params"} for r in requests)
        batch_id = f"msgbatch_{len(self.created) + 1:02d}"
        self.created.append(batch_id)
        self.batches[batch_id] = {"requests": requests, "polls": 0}
        return httpx2.Response(200, json=self.batch_json(batch_id))

    def ended(self, batch_id: str) -> bool:
        return not self.hold and self.batches[batch_id]["polls"] > self.polls_before_end

    def outcome(self, params: dict[str, Any]) -> str:
        return self.miss(params) or "succeeded"

    def batch_json(self, batch_id: str) -> dict[str, Any]:
        requests = self.batches[batch_id]["requests"]
        ended = self.ended(batch_id)
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for r in requests:
            kind = self.outcome(r["params"]).split(":")[0] if ended else "processing"
            counts[kind] += 1
        return {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": "2026-10-15T10:00:00Z",
            "expires_at": "2026-10-16T10:00:00Z",
            "ended_at": "2026-10-15T11:00:00Z" if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{BASE_URL}{BATCHES}/{batch_id}/results" if ended else None,
        }

    def results(self, batch_id: str) -> httpx2.Response:
        assert self.ended(batch_id)
        self.results_read.append(batch_id)
        lines = []
        for r in reversed(self.batches[batch_id]["requests"]):  # the API gives no order
            kind = self.outcome(r["params"])
            if kind == "succeeded":
                reply = self.messages(httpx2.Request("POST", f"{BASE_URL}/v1/messages", json=r["params"]))
                message = json.loads(reply.content)
                if self.refuse(r["params"]):
                    message |= {"content": [], "stop_reason": "refusal"}
                result: dict[str, Any] = {"type": "succeeded", "message": message}
            elif kind.startswith("errored:"):
                error = {"type": kind.split(":", 1)[1], "message": "request failed"}
                result = {"type": "errored", "error": {"type": "error", "error": error}}
            else:
                result = {"type": kind}
            lines.append(json.dumps({"custom_id": r["custom_id"], "result": result}))
        return httpx2.Response(200, content="\n".join(lines).encode() + b"\n")

    def requests_of(self, batch_id: str) -> list[dict[str, Any]]:
        return [r["params"] for r in self.batches[batch_id]["requests"]]


def batch_client(api: BatchesApi, env: EvalEnv | None = None) -> LlmClient:
    """The real Anthropic client (as the harness builds it) on the fake API."""
    env = env or EvalEnv.from_environ({"ANTHROPIC_API_KEY": "test-key", "GRAFT_LLM_MAX_RETRIES": "0"})
    pool = httpx2.AsyncClient(transport=httpx2.MockTransport(api))
    return anthropic_llm(env, http_client=pool, base_url=BASE_URL)
