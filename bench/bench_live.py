"""Live-mode harness throughput against a loopback fake Messages API (no network, no key).

Run: .venv/bin/python bench/bench_live.py

A Starlette app on 127.0.0.1 (a free port, stopped at the end) answers every POST /v1/messages
with a real-shaped forced tool_use reply after a fixed 200 ms. The 30 synthetic seed cases are
copied to 200 cases (new ids and PR numbers, so each has its own cache key; no fakeLlm) in a
temporary set, and run live through the real `create_anthropic_llm` pointed at the loopback URL,
at concurrency 4, 8 and 16 (with --no-cache, so every case calls), then once more with the cache.

Prints wall time against the ideal (calls x latency / concurrency) and the share of the ideal
throughput (target >= 90%), then the calls of the cached run (target 0). Each case makes its
calls one after the other, so the pool cannot reach the ideal exactly: the "pool bound" is the
wall time of a zero-overhead pool over the same cases. The SDK import (once per process) is
timed apart. The fake API runs in its own process, as the real one is remote.
"""

from __future__ import annotations

import asyncio
import heapq
import multiprocessing
import socket
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from graft_eval_pipeline.evalset.budget import Estimate
from graft_eval_pipeline.evalset.case_schema import dump_case
from graft_eval_pipeline.evalset.env import EvalEnv
from graft_eval_pipeline.evalset.harness import RunOptions, anthropic_llm, run_harness
from graft_eval_pipeline.evalset.report_schema import GitInfo
from graft_eval_pipeline.evalset.store import create_set, open_set, read_cases
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


class FakeMessagesApi:
    """POST /v1/messages: a trivial card or an agreeing verifier after LATENCY_S; GET /calls
    says how many messages it answered."""

    def __init__(self) -> None:
        self.calls = 0
        self.app = Starlette(
            routes=[
                Route("/v1/messages", self.messages, methods=["POST"]),
                Route("/calls", self.count, methods=["GET"]),
            ]
        )

    async def messages(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.calls += 1
        await asyncio.sleep(LATENCY_S)
        tool = body["tool_choice"]["name"]
        answer = VERIFIER_REPLY if tool == "submit_verification" else writer_reply("trivial")
        return JSONResponse(message_json(body["model"], tool, answer))

    async def count(self, _request: Request) -> JSONResponse:
        return JSONResponse({"calls": self.calls})


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
                calls(base_url)
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


def calls(base_url: str) -> int:
    return int(httpx.get(f"{base_url}/calls", timeout=5).json()["calls"])


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


def timed_run(set_dir: Path, base_url: str, concurrency: int, use_cache: bool) -> tuple[float, list[int]]:
    """Wall time of the whole live run (plan, calls, cache writes) and the calls of each case."""
    env = EvalEnv.from_environ({"ANTHROPIC_API_KEY": "bench-not-a-key", "GRAFT_LLM_MAX_RETRIES": "0"})
    options = RunOptions(
        set=open_set(set_dir, None),
        mode="live",
        llm_factory=lambda: anthropic_llm(env, base_url=base_url),
        models=env.models(),
        concurrency=concurrency,
        max_cost_usd=1_000.0,  # a fake server bills nothing; the cap logic still runs
        max_tokens=100_000_000,
        use_cache=use_cache,
        confirm=yes,
        now=lambda: NOW,
        git=lambda: GitInfo(commit=None, dirty=None),
    )
    started = time.perf_counter()
    harness = run_harness(options)
    elapsed = time.perf_counter() - started
    unavailable = sum(r.status == "unavailable" and r.failure_reason != "too_large" for r in harness.rows)
    if unavailable:
        raise RuntimeError(f"{unavailable} case(s) failed against the fake API")
    return elapsed, [r.usage.calls for r in harness.rows if not r.cached]


def schedule_bound(case_calls: list[int], concurrency: int) -> float:
    """The best wall time of the pool with zero overhead: each case's calls run one after the
    other (writer, then verifier), so the cases pack into `concurrency` lanes, in case order."""
    lanes = [0.0] * concurrency
    for calls_of_case in case_calls:
        free = heapq.heappop(lanes)
        heapq.heappush(lanes, free + calls_of_case * LATENCY_S)
    return max(lanes)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, api_process() as base_url:
        set_dir = build_set(Path(tmp))
        started = time.perf_counter()
        import anthropic  # noqa: F401  (once per process; not part of the throughput)

        print(f"anthropic SDK import: {time.perf_counter() - started:.2f} s (excluded from the runs below)")
        print(f"{CASES} cases, {LATENCY_S * 1000:.0f} ms per call, fake Messages API on {base_url}")
        for concurrency in CONCURRENCY:
            before = calls(base_url)
            wall, case_calls = timed_run(set_dir, base_url, concurrency, use_cache=False)
            made = calls(base_url) - before
            ideal = made * LATENCY_S / concurrency
            bound = schedule_bound(case_calls, concurrency)
            share = ideal / wall
            verdict = "ok" if share >= TARGET else "BELOW TARGET"
            print(
                f"concurrency {concurrency:>2}: {made} calls, wall {wall:6.2f} s, ideal {ideal:6.2f} s, "
                f"{share:6.1%} of ideal throughput ({verdict}, target >= {TARGET:.0%}); "
                f"pool bound {bound:5.2f} s ({ideal / bound:.1%} of ideal at best)"
            )
        before = calls(base_url)
        wall, _ = timed_run(set_dir, base_url, CONCURRENCY[-1], use_cache=True)
        print(f"cached run: {calls(base_url) - before} calls (target 0), wall {wall:.2f} s")


if __name__ == "__main__":
    main()
