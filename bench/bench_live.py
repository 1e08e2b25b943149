"""Live-mode harness throughput against a loopback fake Messages API (no network, no key).

Run: .venv/bin/python bench/bench_live.py [--lanes]   (--lanes: the lane bound alone)

A Starlette app on 127.0.0.1 (a free port, stopped at the end) answers every POST /v1/messages
with a real-shaped forced tool_use reply after a fixed 200 ms. The 30 synthetic seed cases are
copied to 200 cases (new ids and PR numbers, so each has its own cache key; no fakeLlm) in a
temporary set, and run live through the real `create_anthropic_llm` pointed at the loopback URL,
at concurrency 4, 8 and 16 (with --no-cache, so every case calls), then once more with the cache.

Prints wall time against the ideal (calls x latency / concurrency) and the share of the ideal
throughput (target >= 90%), then the calls of the cached run (target 0). The SDK import (once
per process) is timed apart. The fake API runs in its own process, as the real one is remote.

Two lower bounds are printed next to the ideal, since the ideal is out of reach by design:
- "pool": each case makes its calls one after the other (writer, then verifier), so even a
  zero-overhead pool packs whole cases into lanes (computed, no run);
- "no HTTP": the same harness run at the same concurrency with an in-process client that only
  waits the latency and answers what the fake API answers (no SDK, no sockets). It measures what
  the harness itself costs on this machine: loading and planning every case before the first
  call (the estimate must be confirmed before any call), each case's own work (prepare, prompts,
  rows) and its cache write (two fsyncs) in its lane, and the report after the last call. When
  that share is under the target, no client can reach it here.
"client CPU" is the process CPU of the live run minus that of the no-HTTP run, per call: what
the SDK and the HTTP stack cost. "connections" is how many TCP connections the fake API saw
(the one client's pool is reused, so at most the concurrency).

The lane bound (issue 27), at concurrency 16 and 32, LANE_ROUNDS rounds each: LANE_CASES cases
where the fake API escalates every fast writer whose PR number is even (so a trivial-floor case
makes three calls or two, and the harness, which starts the cases that can make three first,
does not know which). Each case's calls depend on one another (writer, escalation, verifier), so
no scheduler beats max(longest case, total call time / concurrency): the lane bound, printed
with the share of it each run reaches (target >= 95 %, i.e. within 5 %). LANE_CASES is chosen so
the calls divide evenly over 16 and 32 lanes, where that bound is also the best whole-call
packing (the integer bound, printed beside it, says so). Next to it, zero-overhead packings of
the same calls: in case order and in the harness's order (longest first by what the plan
knows). Each run's figures: wall, share of the bound, the planning before the first call
(the estimate covers every case, so no call may start before it ends: E19), and the tail after
the last answer; min / median / max over the rounds, for the live client and the no-HTTP one,
with the load average.

Two more scenarios (issue 16):
- 429 storm, two kinds: a sustained rate limit (the fake API admits STORM_RPS requests per
  second, says how many are left in `anthropic-ratelimit-requests-remaining` and answers the
  rest 429 with `retry-after: 1`), and an outage (every request answered 429, `retry-after: 1`,
  for the first OUTAGE_S seconds, then no limit). STORM_CASES cases run at concurrency 16 in
  each, with the adaptive limiter and without it (fixed concurrency, the SDK's own retries,
  GRAFT_LLM_MAX_RETRIES=2). Prints wall time, cases/s, 429s, failed cases and the limiter's
  concurrency range and pause.
- batch: the same cases through the fake Message Batches API (each batch ends BATCH_LATENCY_S
  after it is created; the fast writer says logic, so every trivial case escalates: three
  phases), polling scaled down POLL_SCALE times; then interactively on a copy of the set.
  Prints calls and requests (identical requests are sent once), phases, batches, wall time,
  and the cost at batch prices next to the interactive cost of the same answers.
"""

from __future__ import annotations

import asyncio
import copy
import heapq
import json
import multiprocessing
import os
import re
import shutil
import socket
import statistics
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from graft_eval_pipeline.card.llm import LlmClient, LlmReply, LlmRequest, Usage
from graft_eval_pipeline.evalset.evaluate import KeptDetails
from graft_eval_pipeline.evalset.report import build_report, load_thresholds, publish_run, read_prior
from graft_eval_pipeline.evalset.run.budget import Estimate
from graft_eval_pipeline.evalset.run.harness import run_harness
from graft_eval_pipeline.evalset.run.live import anthropic_llm
from graft_eval_pipeline.evalset.run.options import RunOptions
from graft_eval_pipeline.evalset.scoring import compute_metrics
from graft_eval_pipeline.evalset.scoring.pricing import most_calls
from graft_eval_pipeline.evalset.scoring.report_schema import GitInfo
from graft_eval_pipeline.evalset.scoring.rows import HarnessRun
from graft_eval_pipeline.evalset.sets.case_schema import dump_case
from graft_eval_pipeline.evalset.sets.env import EvalEnv
from graft_eval_pipeline.evalset.sets.paths import THRESHOLDS_FILE
from graft_eval_pipeline.evalset.sets.store import create_set, open_set, read_cases
from graft_eval_pipeline_tests.live_fakes import message_json, writer_reply

SYNTHETIC = Path(__file__).resolve().parent.parent / "eval" / "synthetic"
CASES = 200
LATENCY_S = 0.2
CONCURRENCY = (4, 8, 16)
TARGET = 0.90
LANE_CASES = 216  # 448 calls: 28 a lane at 16, 14 at 32 (checked at run time)
LANE_CONCURRENCY = (16, 32)
LANE_ROUNDS = 3
LANE_TARGET = 0.95  # within 5 % of the lane bound
NOW = datetime(2026, 10, 15, tzinfo=UTC)
STORM_CASES = 120
STORM_CONCURRENCY = 16
STORM_RPS = 30  # the fake API's requests-per-second limit in the rate-limit storm
OUTAGE_S = 3.0  # how long every request is answered 429 in the outage storm
BATCH_LATENCY_S = 1.0
POLL_SCALE = 50  # batch polling waits 5 s -> 0.1 s against the fake API
VERIFIER_REPLY = {
    "claims": [{"id": "b1", "status": "supported"}],
    "unexplained_files": [],
    "missing_behavior_changes": [],
    "risk_class": "trivial",
    "instructions_in_data": False,
}


PR_NUMBER = re.compile(r'<pull_request number="(\d+)"')


def answer_for(tool: str, model: str = "", escalate: bool = False) -> dict[str, object]:
    """An agreeing verifier, or a trivial card (logic from the fast model when `escalate`)."""
    if tool == "submit_verification":
        return copy.deepcopy(VERIFIER_REPLY)
    return writer_reply("logic" if escalate and model.startswith("claude-haiku") else "trivial")


def escalates(mode: str, body: dict[str, Any]) -> bool:
    """`all` escalates every fast writer, `even` those of an even PR number, `none` none."""
    if mode != "even":
        return mode == "all"
    found = PR_NUMBER.search(str(body["messages"][0]["content"]))
    return found is not None and int(found.group(1)) % 2 == 0


class FakeMessagesApi:
    """POST /v1/messages: a trivial card or an agreeing verifier after LATENCY_S.

    GET /calls says how many messages it answered, on how many distinct connections, and how many it
    throttled. POST /config sets the storm (requests per second) and the escalation; the Message
    Batches routes answer batches that end BATCH_LATENCY_S after creation.
    """

    def __init__(self) -> None:
        self.calls = 0
        self.throttled = 0
        self.peers: set[tuple[str, int]] = set()
        self.rps: float | None = None
        self.outage_until = 0.0
        self.escalate = "none"
        self.window: deque[float] = deque()
        self.batches: dict[str, tuple[float, list[dict[str, Any]]]] = {}
        self.app = Starlette(
            routes=[
                Route("/v1/messages", self.messages, methods=["POST"]),
                Route("/v1/messages/batches", self.create_batch, methods=["POST"]),
                Route("/v1/messages/batches/{batch_id}", self.retrieve_batch, methods=["GET"]),
                Route("/v1/messages/batches/{batch_id}/results", self.batch_results, methods=["GET"]),
                Route("/calls", self.count, methods=["GET"]),
                Route("/config", self.configure, methods=["POST"]),
            ]
        )

    def over_limit(self) -> bool:
        now = time.monotonic()
        if now < self.outage_until:
            return True
        if self.rps is None:
            return False
        while self.window and self.window[0] <= now - 1.0:
            self.window.popleft()
        if len(self.window) >= self.rps:
            return True
        self.window.append(now)
        return False

    def limit_headers(self) -> dict[str, str]:
        """`anthropic-ratelimit-requests-*` as the real API sends them (under a limit only)."""
        if self.rps is None:
            return {}
        reset = datetime.now(UTC) + timedelta(seconds=1)
        return {
            "anthropic-ratelimit-requests-limit": str(int(self.rps)),
            "anthropic-ratelimit-requests-remaining": str(max(int(self.rps) - len(self.window), 0)),
            "anthropic-ratelimit-requests-reset": reset.isoformat(),
        }

    async def messages(self, request: Request) -> JSONResponse:
        body = await request.json()
        if request.client is not None:
            self.peers.add((request.client.host, request.client.port))
        if self.over_limit():
            self.throttled += 1
            error = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
            return JSONResponse(error, status_code=429, headers={"retry-after": "1", **self.limit_headers()})
        self.calls += 1
        headers = self.limit_headers()  # as the request was admitted
        await asyncio.sleep(LATENCY_S)
        tool = body["tool_choice"]["name"]
        answer = answer_for(tool, body["model"], escalates(self.escalate, body))
        return JSONResponse(message_json(body["model"], tool, answer), headers=headers)

    def batch_json(self, batch_id: str, base: str) -> dict[str, Any]:
        created, requests = self.batches[batch_id]
        ended = time.monotonic() - created >= BATCH_LATENCY_S
        n = len(requests)
        return {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else n,
                "succeeded": n if ended else 0,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
            "created_at": "2026-10-15T10:00:00Z",
            "expires_at": "2026-10-16T10:00:00Z",
            "ended_at": "2026-10-15T10:01:00Z" if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{base}/v1/messages/batches/{batch_id}/results" if ended else None,
        }

    async def create_batch(self, request: Request) -> JSONResponse:
        requests = (await request.json())["requests"]
        batch_id = f"msgbatch_{len(self.batches) + 1:04d}"
        self.batches[batch_id] = (time.monotonic(), requests)
        return JSONResponse(self.batch_json(batch_id, str(request.base_url).rstrip("/")))

    async def retrieve_batch(self, request: Request) -> JSONResponse:
        batch_id = request.path_params["batch_id"]
        return JSONResponse(self.batch_json(batch_id, str(request.base_url).rstrip("/")))

    async def batch_results(self, request: Request) -> Response:
        _, requests = self.batches[request.path_params["batch_id"]]
        lines = []
        for item in requests:
            params = item["params"]
            tool = params["tool_choice"]["name"]
            answer = answer_for(tool, params["model"], escalates(self.escalate, params))
            result = {"type": "succeeded", "message": message_json(params["model"], tool, answer)}
            lines.append(json.dumps({"custom_id": item["custom_id"], "result": result}))
        return Response("\n".join(lines) + "\n", media_type="application/binary")

    async def count(self, _request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "calls": self.calls,
                "connections": len(self.peers),
                "throttled": self.throttled,
                "batch_requests": sum(len(r) for _, r in self.batches.values()),
            }
        )

    async def configure(self, request: Request) -> JSONResponse:
        config = await request.json()
        self.rps = config.get("rps")
        self.outage_until = time.monotonic() + float(config.get("outage_s", 0.0))
        self.escalate = str(config.get("escalate", "none"))
        self.window.clear()
        return JSONResponse({"ok": True})


class NoHttpLlm:
    """The "no HTTP" bound's client: what the fake API answers, after LATENCY_S, in process."""

    escalate = "none"

    async def complete(self, request: LlmRequest) -> LlmReply:
        await asyncio.sleep(LATENCY_S)
        tool = "submit_verification" if request.purpose == "verifier" else "submit_card"
        escalate = escalates(self.escalate, {"messages": [{"content": request.user}]})
        message = message_json(request.model, tool, answer_for(tool, request.model, escalate))
        counters = message["usage"]
        usage = Usage(
            input_tokens=counters["input_tokens"],
            output_tokens=counters["output_tokens"],
            cache_read_tokens=counters["cache_read_input_tokens"],
            cache_write_tokens=counters["cache_creation_input_tokens"],
        )
        return LlmReply(json=message["content"][0]["input"], usage=usage, model=message["model"])


def serve_api(sock: socket.socket) -> None:
    """The server process: uvicorn on the socket the parent bound (127.0.0.1, a free port)."""
    uvicorn.Server(uvicorn.Config(FakeMessagesApi().app, log_level="error", lifespan="off")).run(
        sockets=[sock]
    )


@contextmanager
def api_process() -> Iterator[str]:
    """The fake API in its own process, as the real one is remote.

    Its CPU does not compete with the harness for the GIL. Yields the base URL; the process is
    stopped at the end.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    process = multiprocessing.get_context("spawn").Process(target=serve_api, args=(sock,), daemon=True)
    process.start()
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                api_stats(base_url)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or not process.is_alive():
                    raise RuntimeError("the fake Messages API did not start") from None
                time.sleep(0.05)
        yield base_url
    finally:
        process.terminate()
        process.join(timeout=10)
        sock.close()


def api_stats(base_url: str) -> tuple[int, int]:
    """Messages answered so far, and distinct client connections seen so far."""
    stats = httpx.get(f"{base_url}/calls", timeout=5).json()
    return int(stats["calls"]), int(stats["connections"])


def api_counts(base_url: str) -> dict[str, int]:
    return {k: int(v) for k, v in httpx.get(f"{base_url}/calls", timeout=5).json().items()}


def configure_api(base_url: str, **config: object) -> None:
    httpx.post(f"{base_url}/config", json=config, timeout=5).raise_for_status()


def build_set(root: Path, cases: int = CASES) -> Path:
    """`cases` copies of the seed cases under new ids and PR numbers, without fake scripts."""
    seeds = read_cases(open_set(SYNTHETIC, None))
    set_dir = root / "bench-live"
    create_set(
        set_dir,
        set_id="bench-live",
        kind="synthetic",
        description="live harness benchmark",
        consent_ref=None,
        default_floor_config=None,
        key=None,
        now=NOW,
    )
    for n in range(cases):
        seed = seeds[n % len(seeds)]
        pr = seed.inputs.pr.model_copy(update={"number": 1000 + n})
        case = seed.model_copy(
            update={
                "id": f"syn-{n:05d}-{seed.id.removeprefix('syn-')[4:]}",
                "fake_llm": None,
                "inputs": seed.inputs.model_copy(update={"pr": pr}),
            }
        )
        (set_dir / "cases" / f"{case.id}.case.json").write_text(dump_case(case), encoding="utf-8")
    return set_dir


async def yes(_estimate: Estimate) -> bool:
    return True


@dataclass
class Timed:
    """One whole live run: wall and process CPU, when planning ended and the last case ended.

    Also the calls of each case that was not cached and its floor, in case order.
    """

    wall: float
    cpu: float
    plan_s: float
    tail_s: float
    report_s: float
    calls: list[int]
    floors: list[str]


def timed_run(
    set_dir: Path, llm_factory: Callable[[], LlmClient], concurrency: int, use_cache: bool
) -> Timed:
    """The whole live run (plan, calls, cache writes, report rows), timed; then its report, timed apart.

    The report as `graft-eval run` writes it: the baseline and history read before the first case
    (`read_prior`), then metrics, diff, thresholds, rendering and the four files after the last.
    """
    env = EvalEnv.from_environ({"ANTHROPIC_API_KEY": "bench-not-a-key", "GRAFT_LLM_MAX_RETRIES": "0"})
    marks: dict[str, float] = {}

    def planned(_estimate: Estimate) -> None:
        marks["planned"] = time.perf_counter()

    def case_line(_line: str) -> None:  # one line a case (ids and classes): the last is the last case
        marks["last_case"] = time.perf_counter()

    options = RunOptions(
        set=open_set(set_dir, None),
        mode="live",
        llm_factory=llm_factory,
        models=env.models(),
        concurrency=concurrency,
        max_cost_usd=1_000.0,  # a fake server bills nothing; the cap logic still runs
        max_tokens=100_000_000,
        use_cache=use_cache,
        confirm=yes,
        now=lambda: NOW,
        git=lambda: GitInfo(commit=None, dirty=None),
        on_estimate=planned,
        progress=case_line,
    )
    prior = read_prior(options.set, warm=True)  # as `graft-eval run --live` does
    kept = KeptDetails(content=True)  # what `evaluate_then` keeps of each case for report.html
    started, cpu_started = time.perf_counter(), time.process_time()
    harness = run_harness(replace(options, on_case=kept.seen, on_result=kept.ended))
    ended, cpu = time.perf_counter(), time.process_time() - cpu_started
    report = build_report(harness, compute_metrics(harness.rows))
    thresholds = load_thresholds(THRESHOLDS_FILE)
    publish_run(options.set, report, thresholds=thresholds, strict=False, details=kept.details, prior=prior)
    reported = time.perf_counter()
    unavailable = sum(r.status == "unavailable" and r.failure_reason != "too_large" for r in harness.rows)
    if unavailable:
        raise RuntimeError(f"{unavailable} case(s) failed")
    fresh = [r for r in harness.rows if not r.cached]
    return Timed(
        wall=ended - started,
        cpu=cpu,
        plan_s=marks["planned"] - started,
        tail_s=ended - marks.get("last_case", ended),
        report_s=reported - ended,
        calls=[r.usage.calls for r in fresh],
        floors=[r.floor for r in fresh],
    )


def live_factory(base_url: str, max_retries: int = 0) -> Callable[[], LlmClient]:
    """The real client (`create_anthropic_llm` through the harness) pointed at the fake API."""
    env = EvalEnv.from_environ(
        {"ANTHROPIC_API_KEY": "bench-not-a-key", "GRAFT_LLM_MAX_RETRIES": str(max_retries)}
    )
    return lambda: anthropic_llm(env, base_url=base_url)


def scenario_run(set_dir: Path, base_url: str, concurrency: int, **over: Any) -> tuple[float, HarnessRun]:
    """One whole live run (no cache reads) with the real client; wall time and what it returned."""
    max_retries = over.pop("max_retries", 2)
    options = RunOptions(
        set=open_set(set_dir, None),
        mode="live",
        llm_factory=live_factory(base_url, max_retries),
        concurrency=concurrency,
        max_cost_usd=1_000.0,
        max_tokens=100_000_000,
        use_cache=False,
        confirm=yes,
        now=lambda: NOW,
        git=lambda: GitInfo(commit=None, dirty=None),
        **over,
    )
    started = time.perf_counter()
    harness = run_harness(options)
    return time.perf_counter() - started, harness


def failed_cases(harness: HarnessRun) -> int:
    return sum(r.status == "unavailable" and r.failure_reason != "too_large" for r in harness.rows)


def storm(root: Path, base_url: str) -> None:
    """Runs through a sustained rate limit and through an outage, with and without the limiter."""
    set_dir = build_set(root / "storm", STORM_CASES)
    print(
        f"\n429 storm: {STORM_CASES} cases at concurrency {STORM_CONCURRENCY}, "
        f"{LATENCY_S * 1000:.0f} ms per answered call, every 429 says retry-after 1 s"
    )
    scenarios: list[tuple[str, dict[str, Any]]] = [
        (f"rate limit {STORM_RPS} requests/s", {"rps": STORM_RPS}),
        (f"outage: all 429 for {OUTAGE_S:.0f} s", {"outage_s": OUTAGE_S}),
    ]
    for title, config in scenarios:
        print(f"  {title}:")
        for adaptive in (True, False):
            configure_api(base_url, **config)  # the outage starts with each run
            before = api_counts(base_url)
            wall, harness = scenario_run(set_dir, base_url, STORM_CONCURRENCY, adaptive=adaptive)
            after = api_counts(base_url)
            answered, throttled = after["calls"] - before["calls"], after["throttled"] - before["throttled"]
            label = "adaptive limiter" if adaptive else "fixed, SDK retries"
            line = (
                f"    {label:<18}: wall {wall:6.2f} s, {STORM_CASES / wall:5.1f} cases/s, "
                f"{answered} calls answered, {throttled} answered 429, "
                f"{failed_cases(harness)} case(s) failed"
            )
            limiter = harness.run.limiter
            if limiter is not None:
                line += (
                    f"; concurrency {limiter.min_concurrency}-{limiter.max_concurrency} "
                    f"(final {limiter.final_concurrency}), paused {limiter.paused_ms / 1000:.1f} s"
                )
            print(line)
    configure_api(base_url)


def batch(root: Path, base_url: str) -> None:
    """The same cases through the fake Batches API, then interactively: calls, wall, cost."""
    set_dir = build_set(root / "batch", STORM_CASES)
    copy_dir = root / "batch-interactive"
    shutil.copytree(set_dir, copy_dir)
    configure_api(base_url, escalate="all")

    async def scaled_sleep(seconds: float) -> None:
        await asyncio.sleep(seconds / POLL_SCALE)

    print(
        f"\nbatch: {STORM_CASES} cases, each batch ends {BATCH_LATENCY_S:.1f} s after creation, "
        f"polling scaled 1/{POLL_SCALE}; the fast writer says logic (escalations)"
    )
    before = api_counts(base_url)
    wall, batched = scenario_run(set_dir, base_url, STORM_CONCURRENCY, batch=True, sleep=scaled_sleep)
    after = api_counts(base_url)
    info = batched.run.batch
    assert info is not None
    if failed_cases(batched):
        raise RuntimeError(f"{failed_cases(batched)} batch case(s) failed")
    batch_cost = sum(r.cost_usd or 0.0 for r in batched.rows)
    calls = sum(r.usage.calls for r in batched.rows)
    print(
        f"  batch      : {calls} calls as {after['batch_requests'] - before['batch_requests']} requests "
        f"(the copies of a seed share prompts: sent once, each case still priced) in "
        f"{info.batches} batches over {info.phases} phases, "
        f"{after['calls'] - before['calls']} interactive calls, wall {wall:5.2f} s "
        f"(batch wait {info.wait_ms / 1000:.2f} s), cost ${batch_cost:.4f} at batch prices"
    )
    wall, interactive = scenario_run(copy_dir, base_url, STORM_CONCURRENCY)
    live_cost = sum(r.cost_usd or 0.0 for r in interactive.rows)
    calls = sum(r.usage.calls for r in interactive.rows)
    print(
        f"  interactive: {calls} calls, wall {wall:5.2f} s at concurrency {STORM_CONCURRENCY}, "
        f"cost ${live_cost:.4f}; batch / interactive = {batch_cost / live_cost:.2f}"
    )
    configure_api(base_url, escalate="none")


def schedule_bound(case_calls: list[int], concurrency: int, order: list[int] | None = None) -> float:
    """The wall time of the pool with zero overhead, taking the cases in `order` (default: case order).

    Each case's calls run one after the other (writer, then verifier), so the cases pack into
    `concurrency` lanes, each case into the lane that frees first.
    """
    lanes = [0.0] * concurrency
    for index in order if order is not None else range(len(case_calls)):
        free = heapq.heappop(lanes)
        heapq.heappush(lanes, free + case_calls[index] * LATENCY_S)
    return max(lanes)


def lane_bound(case_calls: list[int], concurrency: int) -> float:
    """No scheduler beats this: the longest case's calls back to back, or all calls over the lanes."""
    return max(max(case_calls, default=0), sum(case_calls) / concurrency) * LATENCY_S


def integer_bound(case_calls: list[int], concurrency: int) -> float:
    """`lane_bound` in whole calls: some lane makes at least ceil(calls / concurrency) of them."""
    return max(max(case_calls, default=0), -(-sum(case_calls) // concurrency)) * LATENCY_S


def harness_order(case_calls: list[int], floors: list[str]) -> list[int]:
    """What the harness's `run_order` does with what the plan knows: most possible calls first."""
    most = [0 if calls == 0 else most_calls(floor) for calls, floor in zip(case_calls, floors, strict=True)]
    return sorted(range(len(most)), key=lambda index: -most[index])


def spread(values: list[float], fmt: str) -> str:
    """The smallest, the median and the largest value."""
    return " / ".join(format(v, fmt) for v in (min(values), statistics.median(values), max(values)))


def load() -> str:
    return " ".join(f"{v:.1f}" for v in os.getloadavg())


def lanes(root: Path, base_url: str) -> None:
    """Concurrency 16 and 32 against the lane bound, LANE_ROUNDS rounds of both clients each."""
    set_dir = build_set(root / "lanes", LANE_CASES)
    configure_api(base_url, escalate="even")
    NoHttpLlm.escalate = "even"
    print(
        f"\nlane bound: {LANE_CASES} cases, fast writers of even PR numbers escalate (3 calls), "
        f"{LANE_ROUNDS} rounds, load average {load()} (1, 5, 15 min)"
    )
    try:
        for concurrency in LANE_CONCURRENCY:
            runs: dict[str, list[Timed]] = {"live client": [], "no HTTP": []}
            for _ in range(LANE_ROUNDS):  # the two clients alternate, so both see the same load
                runs["live client"].append(timed_run(set_dir, live_factory(base_url), concurrency, False))
                runs["no HTTP"].append(timed_run(set_dir, NoHttpLlm, concurrency, False))
            first = runs["live client"][0]
            calls, floors = first.calls, first.floors
            if any(r.calls != calls for rs in runs.values() for r in rs):
                raise RuntimeError("the runs made different calls: the workload is not deterministic")
            bound = lane_bound(calls, concurrency)
            exact = integer_bound(calls, concurrency)
            in_order = schedule_bound(calls, concurrency)
            longest = schedule_bound(calls, concurrency, harness_order(calls, floors))
            print(
                f"concurrency {concurrency}: {sum(calls)} calls in {sum(c > 0 for c in calls)} calling cases "
                f"(longest {max(calls)}), lane bound {bound:.2f} s (integer bound {exact:.2f} s); "
                f"zero-overhead packing: case order {in_order:.2f} s ({share(bound, in_order)}), "
                f"longest first {longest:.2f} s ({share(bound, longest)})"
            )
            for label, timed in runs.items():
                shares = [bound / r.wall for r in timed]
                met = sum(x >= LANE_TARGET for x in shares)
                after_plan = [bound / (r.wall - r.plan_s) for r in timed]
                print(
                    f"  {label:<11}: wall {spread([r.wall for r in timed], '.2f')} s (min / median / max), "
                    f"{spread([x * 100 for x in shares], '.1f')} % of the bound "
                    f"(target >= {LANE_TARGET:.0%}: met in {met} of {len(timed)}); "
                    f"planning {spread([r.plan_s for r in timed], '.3f')} s, "
                    f"tail {spread([r.tail_s for r in timed], '.3f')} s, "
                    f"then the report {spread([r.report_s for r in timed], '.3f')} s, "
                    f"{spread([x * 100 for x in after_plan], '.1f')} % from the first call; "
                    f"CPU {spread([r.cpu for r in timed], '.2f')} s"
                )
    finally:
        configure_api(base_url, escalate="none")
        NoHttpLlm.escalate = "none"
    print(f"  load average after: {load()}")


def share(ideal: float, wall: float) -> str:
    return f"{ideal / wall:.1%}"


def ideal(set_dir: Path, base_url: str) -> None:
    """Concurrency 4, 8 and 16 against the ideal (calls x latency / concurrency), then the cached run."""
    print(f"{CASES} cases, {LATENCY_S * 1000:.0f} ms per call, fake Messages API on {base_url}")
    for concurrency in CONCURRENCY:
        before, connections_before = api_stats(base_url)
        live = timed_run(set_dir, live_factory(base_url), concurrency, use_cache=False)
        after, connections_after = api_stats(base_url)
        made = after - before
        no_http = timed_run(set_dir, NoHttpLlm, concurrency, use_cache=False)
        best = made * LATENCY_S / concurrency
        pool = schedule_bound(live.calls, concurrency)
        verdict = "ok" if best / live.wall >= TARGET else "BELOW TARGET"
        print(
            f"concurrency {concurrency:>2}: {made} calls, wall {live.wall:6.2f} s, ideal {best:6.2f} s, "
            f"{share(best, live.wall):>6} of ideal throughput ({verdict}, target >= {TARGET:.0%})"
        )
        print(
            f"  lower bounds: pool {pool:5.2f} s ({share(best, pool)} of ideal at best), "
            f"no HTTP {no_http.wall:5.2f} s ({share(best, no_http.wall)}); "
            f"client CPU {(live.cpu - no_http.cpu) / made * 1000:.1f} ms per call "
            f"({live.cpu / made * 1000:.1f} ms with the harness); "
            f"{connections_after - connections_before} connection(s)"
        )
        if best / no_http.wall < TARGET:
            print(
                f"  the target cannot hold at {concurrency} here: the harness with a client that "
                f"costs nothing reaches {share(best, no_http.wall)} of the ideal"
            )
    before, _ = api_stats(base_url)
    cached = timed_run(set_dir, live_factory(base_url), CONCURRENCY[-1], use_cache=True)
    print(f"cached run: {api_stats(base_url)[0] - before} calls (target 0), wall {cached.wall:.2f} s")


def main(argv: list[str]) -> None:
    """Every scenario; `--lanes` runs the lane bound alone."""
    with tempfile.TemporaryDirectory() as tmp, api_process() as base_url:
        set_dir = build_set(Path(tmp))
        started = time.perf_counter()
        import anthropic  # noqa: F401  (once per process; not part of the throughput)

        print(f"anthropic SDK import: {time.perf_counter() - started:.2f} s (excluded from the runs below)")
        # one untimed run first: what the first run of a process loads lazily lands on no figure
        timed_run(set_dir, live_factory(base_url), CONCURRENCY[-1], use_cache=False)
        if "--lanes" not in argv:
            ideal(set_dir, base_url)
        lanes(Path(tmp), base_url)
        if "--lanes" not in argv:
            storm(Path(tmp), base_url)
            batch(Path(tmp), base_url)


if __name__ == "__main__":
    main(sys.argv[1:])
