"""The adaptive limiter (issue 16 item 2): AIMD concurrency, pauses, and what the report keeps.

Unit tests drive `AdaptiveLimiter` in virtual time; the client tests send the real Anthropic
client through a gate on an `httpx2.MockTransport`; the harness tests run a whole live run whose
mock API answers a burst of 429s with retry-after. Nothing waits on the real clock.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest

from graft_eval_pipeline.card.anthropic_llm import create_anthropic_llm, rate_signal
from graft_eval_pipeline.card.llm import LlmFailure, LlmReply, LlmRequest, RateSignal
from graft_eval_pipeline.evalset.evaluate import run_eval
from graft_eval_pipeline.evalset.run.limiter import AdaptiveLimiter, LimitedLlm, limited, thin
from graft_eval_pipeline.evalset.run.live import anthropic_llm
from graft_eval_pipeline.evalset.sets.env import EvalEnv
from graft_eval_pipeline_tests.live_fakes import (
    Factory,
    FakeLive,
    MessagesApi,
    default_answer,
    live_options,
    live_set,
)
from graft_eval_pipeline_tests.pacing_fakes import VirtualTime

BASE_URL = "http://anthropic.invalid"
OK = RateSignal(status=200)
THROTTLED = RateSignal(status=429, retry_after_s=2.0)


pytestmark = pytest.mark.usefixtures("no_network")


def limiter(ceiling: int = 8, vt: VirtualTime | None = None) -> tuple[AdaptiveLimiter, VirtualTime]:
    vt = vt or VirtualTime()
    return AdaptiveLimiter(ceiling, clock=vt.clock, sleep=vt.sleep, jitter=lambda: 1.0), vt


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


# --- the rules, in virtual time --------------------------------------------------------------


def test_a_throttle_halves_the_limit_once_per_congestion_event() -> None:
    async def scenario() -> list[int]:
        lim, _ = limiter(8)
        tickets = [await lim.enter() for _ in range(3)]  # three attempts in flight
        seen = []
        lim.leave(tickets[0], THROTTLED)
        seen.append(lim.concurrency)  # halved
        lim.leave(tickets[1], THROTTLED)  # started before the decrease: the same event
        seen.append(lim.concurrency)
        later = await lim.enter()  # waits out the 2 s pause, then a new event may lower it
        lim.leave(later, RateSignal(status=529))
        seen.append(lim.concurrency)
        lim.leave(tickets[2], OK)
        return seen

    assert run(scenario()) == [4, 4, 2]


def test_the_limit_never_drops_below_one_nor_rises_above_the_ceiling() -> None:
    async def scenario() -> tuple[int, int]:
        lim, _ = limiter(3)
        for _ in range(5):
            lim.leave(await lim.enter(), RateSignal(status=429, retry_after_s=0.0))
        lowest = lim.concurrency
        for _ in range(50):
            lim.leave(await lim.enter(), OK)
        return lowest, lim.concurrency

    assert run(scenario()) == (1, 3)


def test_successes_raise_the_limit_by_one_per_round() -> None:
    async def scenario() -> list[int]:
        lim, _ = limiter(8)
        lim.leave(await lim.enter(), RateSignal(status=429, retry_after_s=0.0))  # 8 -> 4
        lim.leave(await lim.enter(), RateSignal(status=429, retry_after_s=0.0))  # 4 -> 2
        assert lim.concurrency == 2
        steps = []
        for _ in range(2 + 3 + 4):  # a round at 2, at 3 and at 4 successes
            lim.leave(await lim.enter(), OK)
            steps.append(lim.concurrency)
        return steps

    assert run(scenario()) == [2, 3, 3, 3, 4, 4, 4, 4, 5]


def test_throttles_in_a_row_pause_every_new_attempt_and_the_wait_is_counted() -> None:
    async def scenario() -> tuple[float, float, float, Any]:
        lim, vt = limiter(8)  # two decreases: 8 -> 4 -> 2, room for the two attempts below
        lim.leave(await lim.enter(), RateSignal(status=429, retry_after_s=3.0))
        alone = vt.now + lim.stats.paused_s  # one throttle after successes: no pause for all
        lim.leave(await lim.enter(), RateSignal(status=429, retry_after_s=3.0))  # again, no success
        await asyncio.gather(lim.enter(), lim.enter())  # both wait the same 3 s, not 6
        return alone, vt.now, lim.stats.paused_s, lim.info()

    alone, now, paused, info = run(scenario())
    assert alone == 0.0 and now == pytest.approx(3.0) and paused == pytest.approx(3.0)
    assert info.paused_ms == 3000 and info.waiting_ms == 6000  # two attempts waited 3 s each
    assert info.throttled == 2 and info.attempts == 4


def test_a_success_ends_the_streak_so_the_next_throttle_pauses_no_one() -> None:
    async def scenario() -> list[float]:
        lim, _ = limiter(4)
        paused = []
        for signal in (RateSignal(status=529), RateSignal(status=529), OK, RateSignal(status=529)):
            lim.leave(await lim.enter(), signal)
            paused.append(lim.stats.paused_s)
        return paused

    # the second 529 in a row pauses all for 2 s (no retry-after: 1 s doubling), the one after
    # the success does not
    assert run(scenario()) == [0.0, pytest.approx(2.0), pytest.approx(2.0), pytest.approx(2.0)]


def test_a_throttled_request_waits_its_own_retry_after_or_a_backoff() -> None:
    async def scenario() -> list[float]:
        lim, vt = limiter(8)
        waits = []
        for signal, attempt in (
            (RateSignal(status=429, retry_after_s=5.0), 1),  # what the reply asked
            (RateSignal(status=429, reset_after_s=7.0), 1),  # no retry-after: the reset
            (RateSignal(status=529), 1),  # neither: 1 s, doubling per attempt
            (RateSignal(status=529), 3),
            (RateSignal(status=500), 2),  # transient: 0.5 s doubling, with jitter (1.0 here)
            (RateSignal(status=429, retry_after_s=600.0), 1),  # capped
        ):
            before = vt.now
            await lim.before_retry(signal, attempt)
            waits.append(vt.now - before)
        return waits

    assert run(scenario()) == [5.0, 7.0, 1.0, 4.0, 1.0, 120.0]


def test_an_exhausted_rate_limit_holds_the_limit_without_a_pause() -> None:
    async def scenario() -> tuple[float, int, int]:
        lim, vt = limiter(8)
        lim.leave(await lim.enter(), RateSignal(status=429, retry_after_s=0.0))  # 8 -> 4
        exhausted = RateSignal(status=200, requests_remaining=0, reset_after_s=30.0)
        for _ in range(20):
            lim.leave(await lim.enter(), exhausted)
        held = lim.concurrency
        for _ in range(4):
            lim.leave(await lim.enter(), OK)
        return vt.now, held, lim.concurrency

    assert run(scenario()) == (0.0, 4, 5)  # neither lowered nor paused; raised again once room is back


def test_few_requests_remaining_hold_the_limit() -> None:
    async def scenario() -> int:
        lim, _ = limiter(8)
        lim.leave(await lim.enter(), RateSignal(status=429, retry_after_s=0.0))  # 8 -> 4
        for _ in range(20):
            lim.leave(await lim.enter(), RateSignal(status=200, requests_remaining=3))
        return lim.concurrency

    assert run(scenario()) == 4


def test_attempts_beyond_the_limit_wait_for_a_slot() -> None:
    async def scenario() -> list[str]:
        lim, _ = limiter(2)
        events: list[str] = []
        a, b = await lim.enter(), await lim.enter()

        async def third() -> None:
            ticket = await lim.enter()
            events.append("third in")
            lim.leave(ticket, OK)

        task = asyncio.create_task(third())
        await asyncio.sleep(0)
        events.append(f"in flight {lim.in_flight}")
        lim.leave(a, OK)
        await task
        lim.leave(b, OK)
        return events

    assert run(scenario()) == ["in flight 2", "third in"]


def test_a_cancelled_waiter_does_not_hold_a_slot() -> None:
    async def scenario() -> int:
        lim, _ = limiter(1)
        ticket = await lim.enter()
        waiting = asyncio.create_task(lim.enter())
        await asyncio.sleep(0)
        waiting.cancel()
        lim.leave(ticket, OK)
        await asyncio.gather(waiting, return_exceptions=True)
        lim.leave(await asyncio.wait_for(lim.enter(), 1), OK)
        return lim.in_flight

    assert run(scenario()) == 0


def test_cases_are_admitted_under_the_limit_and_wait_after_a_decrease() -> None:
    async def scenario() -> list[str]:
        lim, _ = limiter(4)
        events: list[str] = []
        held = [lim.admitted() for _ in range(3)]
        for case in held:
            await case.__aenter__()
        lim.leave(await lim.enter(), RateSignal(status=429, retry_after_s=0.0))  # 4 -> 2, 3 running

        async def fourth() -> None:
            async with lim.admitted():
                events.append(f"fourth admitted with {lim.cases - 1} running")

        task = asyncio.create_task(fourth())
        await asyncio.sleep(0)
        events.append(f"waiting, {lim.cases} running")
        await held[0].__aexit__(None, None, None)  # 2 running: still not under the limit
        await asyncio.sleep(0)
        await held[1].__aexit__(None, None, None)  # 1 running: admitted
        await task
        await held[2].__aexit__(None, None, None)
        return events

    assert run(scenario()) == ["waiting, 3 running", "fourth admitted with 1 running"]


def test_info_is_none_without_attempts_and_the_timeline_is_thinned() -> None:
    lim, _ = limiter(4)
    assert lim.info() is None
    points = [(float(i), 1 + i % 3) for i in range(200)]
    thinned = thin(points, 64)
    assert len(thinned) == 64 and thinned[0] == points[0] and thinned[-1] == points[-1]
    assert thin(points[:10], 64) == points[:10]


# --- the Anthropic client through a gate -------------------------------------------------------

REQUEST = LlmRequest(
    purpose="writer",
    model="claude-haiku-5-5",
    system="sys",
    user="user",
    output_schema={"type": "object"},
    max_tokens=100,
    timeout_ms=30_000,
)


def reply(headers: dict[str, str] | None = None) -> httpx2.Response:
    body = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-5-5-20261001",
        "content": [{"type": "tool_use", "id": "t", "name": "submit_card", "input": {"goal": "x"}}],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    return httpx2.Response(200, json=body, headers=headers)


def throttle(status: int = 429, **headers: str) -> httpx2.Response:
    kind = "rate_limit_error" if status == 429 else "overloaded_error"
    body = {"type": "error", "error": {"type": kind, "message": "slow"}}
    return httpx2.Response(status, json=body, headers=headers)


class RecordingGate:
    """A gate that lets everything through and records what it was told."""

    def __init__(self) -> None:
        self.signals: list[RateSignal] = []
        self.retries: list[tuple[int | None, int]] = []

    async def enter(self) -> int:
        return 0

    def leave(self, ticket: int, signal: RateSignal) -> None:
        self.signals.append(signal)

    async def before_retry(self, signal: RateSignal, attempt: int) -> None:
        self.retries.append((signal.status, attempt))


def scripted_client(*answers: httpx2.Response, max_retries: int = 2) -> tuple[Any, list[httpx2.Request]]:
    queue, seen = list(answers), []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return queue.pop(0)

    llm = create_anthropic_llm(
        api_key="test-key",
        max_retries=max_retries,
        timeout_ms=30_000,
        refusal_fallback=None,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
        base_url=BASE_URL,
    )
    return llm, seen


def test_a_gated_client_retries_throttles_itself_and_the_gate_sees_each_one() -> None:
    llm, seen = scripted_client(
        throttle(429, **{"retry-after": "2"}), throttle(529, **{"retry-after-ms": "1500"}), reply()
    )
    gate = RecordingGate()
    outcome = run(limited(llm, gate).complete(REQUEST))
    assert isinstance(outcome, LlmReply) and len(seen) == 3
    assert [(s.status, s.retry_after_s) for s in gate.signals] == [(429, 2.0), (529, 1.5), (200, None)]
    assert gate.retries == [(429, 1), (529, 2)]  # each retry waited as the gate said


def test_a_gated_client_backs_off_on_server_errors_up_to_max_retries() -> None:
    llm, seen = scripted_client(throttle(500), throttle(503), throttle(500), max_retries=2)
    gate = RecordingGate()
    outcome = run(llm.gated(gate).complete(REQUEST))
    assert isinstance(outcome, LlmFailure) and outcome.kind == "unavailable"
    assert len(seen) == 3 and gate.retries == [(500, 1), (503, 2)]


def test_the_ungated_client_keeps_the_sdk_retries() -> None:
    llm, seen = scripted_client(throttle(429, **{"retry-after-ms": "1"}), reply(), max_retries=2)
    assert isinstance(run(llm.complete(REQUEST)), LlmReply) and len(seen) == 2


def test_rate_limit_headers_are_read_into_the_signal() -> None:
    headers = httpx2.Headers(
        {
            "anthropic-ratelimit-requests-remaining": "0",
            "anthropic-ratelimit-requests-reset": "2026-10-15T10:00:07Z",
            "anthropic-ratelimit-tokens-remaining": "4000",
            "anthropic-ratelimit-input-tokens-remaining": "0",
            "anthropic-ratelimit-input-tokens-reset": "2026-10-15T10:00:09Z",
            "anthropic-ratelimit-output-tokens-remaining": "nonsense",
            "retry-after": "4",
            "date": "Thu, 15 Oct 2026 10:00:01 GMT",  # the server's clock, whatever the local one says
        }
    )
    signal = rate_signal(200, headers)
    assert signal.requests_remaining == 0 and signal.tokens_remaining == 0
    assert signal.reset_after_s == 8.0  # the later exhausted limit, 10:00:09 against the Date
    assert signal.retry_after_s == 4.0 and signal.ok and not signal.throttled
    assert rate_signal(429, httpx2.Headers({})).throttled
    plenty = rate_signal(200, httpx2.Headers({"anthropic-ratelimit-requests-remaining": "50"}))
    assert plenty.reset_after_s is None and plenty.requests_remaining == 50
    soon = (datetime.now(UTC) + timedelta(seconds=30)).isoformat()
    undated = rate_signal(
        429,
        httpx2.Headers(
            {"anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": soon}
        ),
    )
    assert undated.reset_after_s is not None and 28 < undated.reset_after_s <= 30  # no Date: the local clock


def test_limited_wraps_a_fake_client_and_a_rate_limited_failure_lowers_the_limit() -> None:
    lim, vt = limiter(4)

    def rate_limited(request: LlmRequest) -> LlmFailure:
        return LlmFailure(kind="rate_limited", detail="HTTP 429 rate_limit_error")

    client = limited(FakeLive(rate_limited), lim)
    assert isinstance(client, LimitedLlm)
    run(client.complete(REQUEST))
    assert lim.concurrency == 2 and vt.now == 0.0  # lowered, no pause: the client already waited


# --- a whole live run through a 429 burst -------------------------------------------------------


class BurstApi:
    """The Messages API behind a rate limit.

    Requests number `burst` answer 429 with retry-after (counted in arrival order); the rest answer
    like `MessagesApi`. Records the most requests it ever had in flight at once.
    """

    def __init__(self, burst: range, retry_after: str = "2") -> None:
        self.burst = burst
        self.retry_after = retry_after
        self.inner = MessagesApi()
        self.seen = 0
        self.in_flight = 0
        self.peak = 0
        self.statuses: list[int] = []

    async def __call__(self, request: httpx2.Request) -> httpx2.Response:
        number = self.seen
        self.seen += 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(0.001)
            if number in self.burst:
                self.statuses.append(429)
                return throttle(429, **{"retry-after": self.retry_after})
            self.statuses.append(200)
            return self.inner(request)
        finally:
            self.in_flight -= 1


def burst_run(
    tmp_path: Any, api: BurstApi, *, adaptive: bool, max_retries: str = "2"
) -> tuple[Any, VirtualTime]:
    cs = live_set(tmp_path, 12)
    env = EvalEnv.from_environ({"ANTHROPIC_API_KEY": "test-key", "GRAFT_LLM_MAX_RETRIES": max_retries})
    vt = VirtualTime()
    pool = httpx2.AsyncClient(transport=httpx2.MockTransport(api))
    factory = Factory(FakeLive())
    factory.client = anthropic_llm(env, http_client=pool, base_url=BASE_URL)  # type: ignore[assignment]
    options = live_options(
        cs, factory, concurrency=4, adaptive=adaptive, clock=vt.clock, sleep=vt.sleep, use_cache=False
    )
    return run_eval(options), vt


def test_a_429_burst_slows_the_run_without_failing_cases_and_recovery_raises_concurrency(
    tmp_path: Path,
) -> None:
    api = BurstApi(burst=range(4, 10))
    report, vt = burst_run(tmp_path, api, adaptive=True)
    assert [r.status for r in report.cases] == ["ok"] * 12 and report.run.complete
    assert api.statuses.count(429) == 6 and api.statuses.count(200) == 24
    limiter_info = report.run.limiter
    assert limiter_info is not None
    assert limiter_info.ceiling == 4 and limiter_info.throttled == 6 and limiter_info.attempts == 30
    assert limiter_info.min_concurrency < 4 and limiter_info.max_concurrency == 4
    assert limiter_info.paused_ms >= 2000 and vt.now >= 2.0  # the retry-after was waited out
    levels = [p.concurrency for p in limiter_info.timeline]
    lowest = levels.index(min(levels))
    assert levels[0] == 4 and max(levels[lowest:]) > min(levels)  # lowered, then raised again
    assert report.metrics.unavailable_rate.k == 0


def test_the_same_burst_without_the_limiter_fails_cases(tmp_path: Path) -> None:
    api = BurstApi(burst=range(4, 10))
    report, _ = burst_run(tmp_path, api, adaptive=False, max_retries="0")
    failed = [r.failure_reason for r in report.cases if r.status == "unavailable"]
    assert failed and set(failed) == {"llm_rate_limited"}
    assert report.run.limiter is None  # nothing went through a limiter


def test_the_report_json_holds_the_limiter_block_and_no_content(tmp_path: Path) -> None:
    api = BurstApi(burst=range(2, 4))
    report, _ = burst_run(tmp_path, api, adaptive=True)
    dumped = json.dumps(report.to_json_dict())
    block = report.to_json_dict()["run"]["limiter"]
    assert set(block) >= {"minConcurrency", "maxConcurrency", "waitingMs", "pausedMs", "timeline"}
    assert "GOALTEXT" not in dumped


def test_fake_clients_are_paced_by_the_limiter_too(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 6)
    client = FakeLive(default_answer, delay_s=0.001)
    report = run_eval(live_options(cs, Factory(client), concurrency=2))
    assert client.peak == 2 and report.run.limiter is not None and report.run.limiter.attempts == 12
