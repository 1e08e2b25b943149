"""Live-mode harness throughput against a loopback fake Messages API (no network, no key).

Run: .venv/bin/python bench/bench_live.py

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
"""

from __future__ import annotations

import asyncio
import copy
import heapq
import multiprocessing
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from graft_eval_pipeline.card.llm import LlmClient, LlmReply, LlmRequest, Usage
from graft_eval_pipeline.evalset.run.budget import Estimate
from graft_eval_pipeline.evalset.run.harness import run_harness
from graft_eval_pipeline.evalset.run.live import anthropic_llm
from graft_eval_pipeline.evalset.run.options import RunOptions
from graft_eval_pipeline.evalset.scoring.report_schema import GitInfo
from graft_eval_pipeline.evalset.sets.case_schema import dump_case
from graft_eval_pipeline.evalset.sets.env import EvalEnv
from graft_eval_pipeline.evalset.sets.store import create_set, open_set, read_cases
from graft_eval_pipeline_tests.live_fakes import message_json, writer_reply

SYNTHETIC = Path(__file__).resolve().parent.parent / "eval" / "synthetic"
CASES = 200
LATENCY_S = 0.2
CONCURRENCY = (4, 8, 16)
TARGET = 0.90
NOW = datetime(2026, 10, 15, tzinfo=UTC)
VERIFIER_REPLY = {
    "claims": [{"id": "b1", "status": "supported"}],
    "unexplained_files": [],
    "missing_behavior_changes": [],
    "risk_class": "trivial",
    "instructions_in_data": False,
}


def answer_for(tool: str) -> dict[str, object]:
    return copy.deepcopy(VERIFIER_REPLY) if tool == "submit_verification" else writer_reply("trivial")


class FakeMessagesApi:
    """POST /v1/messages: a trivial card or an agreeing verifier after LATENCY_S; GET /calls
    says how many messages it answered, and on how many distinct connections."""

    def __init__(self) -> None:
        self.calls = 0
        self.peers: set[tuple[str, int]] = set()
        self.app = Starlette(
            routes=[
                Route("/v1/messages", self.messages, methods=["POST"]),
                Route("/calls", self.count, methods=["GET"]),
            ]
        )

    async def messages(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.calls += 1
        if request.client is not None:
            self.peers.add((request.client.host, request.client.port))
        await asyncio.sleep(LATENCY_S)
        tool = body["tool_choice"]["name"]
        return JSONResponse(message_json(body["model"], tool, answer_for(tool)))

    async def count(self, _request: Request) -> JSONResponse:
        return JSONResponse({"calls": self.calls, "connections": len(self.peers)})


class NoHttpLlm:
    """The "no HTTP" bound's client: what the fake API answers, after LATENCY_S, in process."""

    async def complete(self, request: LlmRequest) -> LlmReply:
        await asyncio.sleep(LATENCY_S)
        tool = "submit_verification" if request.purpose == "verifier" else "submit_card"
        message = message_json(request.model, tool, answer_for(tool))
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
    """The fake API in its own process, as the real one is remote: its CPU does not compete
    with the harness for the GIL. Yields the base URL; the process is stopped at the end."""
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


def build_set(root: Path) -> Path:
    """CASES copies of the seed cases under new ids and PR numbers, without fake scripts."""
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
    for n in range(CASES):
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


def timed_run(
    set_dir: Path, llm_factory: Callable[[], LlmClient], concurrency: int, use_cache: bool
) -> tuple[float, float, list[int]]:
    """Wall time and process CPU of the whole live run (plan, calls, cache writes, report) and
    the calls of each case that was not cached."""
    env = EvalEnv.from_environ({"ANTHROPIC_API_KEY": "bench-not-a-key", "GRAFT_LLM_MAX_RETRIES": "0"})
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
    )
    started, cpu_started = time.perf_counter(), time.process_time()
    harness = run_harness(options)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    unavailable = sum(r.status == "unavailable" and r.failure_reason != "too_large" for r in harness.rows)
    if unavailable:
        raise RuntimeError(f"{unavailable} case(s) failed")
    return elapsed, cpu, [r.usage.calls for r in harness.rows if not r.cached]


def live_factory(base_url: str) -> Callable[[], LlmClient]:
    """The real client (`create_anthropic_llm` through the harness) pointed at the fake API."""
    env = EvalEnv.from_environ({"ANTHROPIC_API_KEY": "bench-not-a-key", "GRAFT_LLM_MAX_RETRIES": "0"})
    return lambda: anthropic_llm(env, base_url=base_url)


def schedule_bound(case_calls: list[int], concurrency: int) -> float:
    """The best wall time of the pool with zero overhead: each case's calls run one after the
    other (writer, then verifier), so the cases pack into `concurrency` lanes, in case order."""
    lanes = [0.0] * concurrency
    for calls_of_case in case_calls:
        free = heapq.heappop(lanes)
        heapq.heappush(lanes, free + calls_of_case * LATENCY_S)
    return max(lanes)


def share(ideal: float, wall: float) -> str:
    return f"{ideal / wall:.1%}"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, api_process() as base_url:
        set_dir = build_set(Path(tmp))
        started = time.perf_counter()
        import anthropic  # noqa: F401  (once per process; not part of the throughput)

        print(f"anthropic SDK import: {time.perf_counter() - started:.2f} s (excluded from the runs below)")
        print(f"{CASES} cases, {LATENCY_S * 1000:.0f} ms per call, fake Messages API on {base_url}")
        for concurrency in CONCURRENCY:
            before, connections_before = api_stats(base_url)
            wall, cpu, case_calls = timed_run(set_dir, live_factory(base_url), concurrency, use_cache=False)
            after, connections_after = api_stats(base_url)
            made = after - before
            no_http_wall, no_http_cpu, _ = timed_run(set_dir, NoHttpLlm, concurrency, use_cache=False)
            ideal = made * LATENCY_S / concurrency
            pool = schedule_bound(case_calls, concurrency)
            verdict = "ok" if ideal / wall >= TARGET else "BELOW TARGET"
            print(
                f"concurrency {concurrency:>2}: {made} calls, wall {wall:6.2f} s, ideal {ideal:6.2f} s, "
                f"{share(ideal, wall):>6} of ideal throughput ({verdict}, target >= {TARGET:.0%})"
            )
            print(
                f"  lower bounds: pool {pool:5.2f} s ({share(ideal, pool)} of ideal at best), "
                f"no HTTP {no_http_wall:5.2f} s ({share(ideal, no_http_wall)}); "
                f"client CPU {(cpu - no_http_cpu) / made * 1000:.1f} ms per call "
                f"({cpu / made * 1000:.1f} ms with the harness); "
                f"{connections_after - connections_before} connection(s)"
            )
            if ideal / no_http_wall < TARGET:
                print(
                    f"  the target cannot hold at {concurrency} here: the harness with a client that "
                    f"costs nothing reaches {share(ideal, no_http_wall)} of the ideal"
                )
        before, _ = api_stats(base_url)
        wall, _, _ = timed_run(set_dir, live_factory(base_url), CONCURRENCY[-1], use_cache=True)
        print(f"cached run: {api_stats(base_url)[0] - before} calls (target 0), wall {wall:.2f} s")


if __name__ == "__main__":
    main()
