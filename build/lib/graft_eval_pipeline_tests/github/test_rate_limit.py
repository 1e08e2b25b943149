"""GitHub rate limiting (spec E15, U-RL-1..5) with an injected clock; no network, no real sleep."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from graft_eval_pipeline.github.errors import GitHubAbort, GitHubError
from graft_eval_pipeline.github.rate_limit import RateLimiter, RateLimitOptions
from graft_eval_pipeline_tests.fake_github import FakeClock

T = 1_800_000_000.0


def response(status: int = 200, headers: dict[str, str] | None = None, message: str = "ok") -> httpx.Response:
    return httpx.Response(status, headers=headers or {}, json={"message": message})


def sender(responses: list[httpx.Response]) -> tuple[Callable[[], httpx.Response], list[int]]:
    """A send() that answers the given responses in order and counts calls."""
    it: Iterator[httpx.Response] = iter(responses)
    calls: list[int] = []

    def send() -> httpx.Response:
        calls.append(1)
        return next(it)

    return send, calls


def limiter(clock: FakeClock, **options: Any) -> RateLimiter:
    return RateLimiter(RateLimitOptions(**options), sleep=clock.sleep, now=clock.now)


def budget(remaining: int, reset: float) -> dict[str, str]:
    return {"x-ratelimit-remaining": str(remaining), "x-ratelimit-reset": str(int(reset))}


def test_U_RL_1_low_remaining_waits_until_reset_plus_one_second_before_the_next_request() -> None:
    clock = FakeClock(T)
    rl = limiter(clock, min_remaining=50)
    send, _ = sender([response(headers=budget(10, T + 120)), response(headers=budget(4999, T + 3600))])
    rl.call(send)
    assert clock.sleeps == []  # nothing is due until another request is made
    rl.call(send)
    assert clock.sleeps == [121.0]
    assert rl.stats.waits == 1 and rl.stats.requests == 2


def test_U_RL_1_remaining_above_the_minimum_never_waits() -> None:
    clock = FakeClock(T)
    rl = limiter(clock, min_remaining=50)
    send, _ = sender([response(headers=budget(51, T + 120)), response(headers=budget(50, T + 120))])
    rl.call(send)
    rl.call(send)
    assert clock.sleeps == []


def test_U_RL_2_429_with_retry_after_sleeps_and_retries() -> None:
    clock = FakeClock(T)
    rl = limiter(clock)
    send, calls = sender([response(429, {"retry-after": "3"}), response(200)])
    assert rl.call(send).status_code == 200
    assert clock.sleeps == [3.0]
    assert len(calls) == 2


def test_U_RL_2_secondary_limit_403_with_retry_after_is_honoured() -> None:
    clock = FakeClock(T)
    rl = limiter(clock)
    secondary = response(
        403, {"retry-after": "60"}, message="You have exceeded a secondary rate limit. Please wait."
    )
    send, _ = sender([secondary, response(200)])
    assert rl.call(send).status_code == 200
    assert clock.sleeps == [60.0]


def test_U_RL_2_a_plain_403_is_not_retried() -> None:
    clock = FakeClock(T)
    rl = limiter(clock)
    send, calls = sender([response(403, message="Resource not accessible by integration")])
    assert rl.call(send).status_code == 403
    assert clock.sleeps == [] and len(calls) == 1


def test_U_RL_3_four_403s_at_zero_remaining_retry_three_times_then_propagate_as_rate_limited() -> None:
    from graft_eval_pipeline.github.auth import TokenAuth
    from graft_eval_pipeline.github.client import GitHubClient

    clock = FakeClock(T)
    rl = limiter(clock)

    def handler(request: httpx.Request) -> httpx.Response:
        # the reset is always 30 s ahead of the injected clock: the limit never lifts
        return response(403, budget(0, clock.now() + 30), message="API rate limit exceeded")

    gh = GitHubClient(auth=TokenAuth("t"), limiter=rl, transport=httpx.MockTransport(handler))
    with pytest.raises(GitHubError) as err:
        gh.get_json("/repos/o/r/pulls/1")
    assert err.value.kind == "rate_limited" and err.value.status == 403
    assert clock.sleeps == [31.0, 31.0, 31.0]
    assert rl.stats.requests == 4


def test_U_RL_4_a_wait_over_max_wait_aborts_without_sleeping() -> None:
    clock = FakeClock(T)
    rl = limiter(clock, max_wait_s=15 * 60)
    send, calls = sender([response(429, {"retry-after": "3600"})])
    with pytest.raises(GitHubAbort) as err:
        rl.call(send)
    assert err.value.reason == "rate_limit_wait"
    assert clock.sleeps == [] and len(calls) == 1


def test_U_RL_4_budget_pause_over_max_wait_aborts_before_the_next_request() -> None:
    clock = FakeClock(T)
    rl = limiter(clock, max_wait_s=60, min_remaining=50)
    send, calls = sender([response(headers=budget(0, T + 3000))])
    rl.call(send)
    with pytest.raises(GitHubAbort) as err:
        rl.call(send)
    assert err.value.reason == "rate_limit_wait"
    assert clock.sleeps == [] and len(calls) == 1


def test_U_RL_5_max_requests_caps_the_run() -> None:
    clock = FakeClock(T)
    rl = limiter(clock, max_requests=3)
    send, calls = sender([response() for _ in range(4)])
    for _ in range(3):
        rl.call(send)
    with pytest.raises(GitHubAbort) as err:
        rl.call(send)
    assert err.value.reason == "max_requests"
    assert len(calls) == 3


def test_U_RL_5_retries_count_against_max_requests() -> None:
    clock = FakeClock(T)
    rl = limiter(clock, max_requests=2)
    send, calls = sender([response(429, {"retry-after": "1"})] * 3)
    with pytest.raises(GitHubAbort) as err:
        rl.call(send)
    assert err.value.reason == "max_requests" and len(calls) == 2


# --- transient failures and secondary limits (issue 10, item 4) ----------------------------------


def steps(answers: list[httpx.Response | Exception]) -> tuple[Callable[[], httpx.Response], list[int]]:
    """A send() that answers (or raises) the given items in order and counts calls."""
    it = iter(answers)
    calls: list[int] = []

    def send() -> httpx.Response:
        calls.append(1)
        item = next(it)
        if isinstance(item, Exception):
            raise item
        return item

    return send, calls


def test_5xx_and_connection_errors_back_off_exponentially_with_jitter_then_succeed() -> None:
    clock = FakeClock(T)
    rl = RateLimiter(RateLimitOptions(), sleep=clock.sleep, now=clock.now, rand=lambda: 0.5)
    refused, slow = httpx.ConnectError("refused"), httpx.ReadTimeout("slow")
    send, calls = steps([response(502), response(503), refused, slow, response(504), response(200)])
    assert rl.call(send).status_code == 200
    # 2 s doubling, times the jitter factor 0.5 + rand / 2 = 0.75
    assert clock.sleeps == [1.5, 3.0, 6.0, 12.0, 24.0]
    assert rl.stats.transient_retries == 5 and rl.stats.transient_wait_s == 46.5
    assert rl.stats.waits == 0 and rl.stats.requests == len(calls) == 6


def test_the_jitter_comes_from_the_injected_random_source() -> None:
    waits = []
    for rand in (0.0, 0.999):
        clock = FakeClock(T)
        rl = RateLimiter(
            RateLimitOptions(), sleep=clock.sleep, now=clock.now, rand=functools.partial(float, rand)
        )
        rl.call(steps([response(503), response(503), response(200)])[0])
        waits.append(clock.sleeps)
    assert waits[0] == [1.0, 2.0]
    assert waits[1][0] == pytest.approx(1.999) and waits[1][1] == pytest.approx(3.998)


def test_a_persistent_5xx_is_retried_five_times_then_returned_for_the_caller_to_raise() -> None:
    clock = FakeClock(T)
    rl = RateLimiter(RateLimitOptions(), sleep=clock.sleep, now=clock.now, rand=lambda: 0.0)
    send, calls = steps([response(503)] * 6)
    assert rl.call(send).status_code == 503
    assert clock.sleeps == [1.0, 2.0, 4.0, 8.0, 16.0] and len(calls) == 6
    assert rl.last_transient_retries == 5


def test_transient_backoff_stays_within_max_wait() -> None:
    clock = FakeClock(T)
    rl = RateLimiter(RateLimitOptions(max_wait_s=10), sleep=clock.sleep, now=clock.now, rand=lambda: 0.5)
    send, calls = steps([response(502)] * 6)
    assert rl.call(send).status_code == 502
    assert clock.sleeps == [1.5, 3.0]  # the next, 6 s, would bring the total past 10 s
    assert len(calls) == 3 and rl.last_transient_retries == 2


def test_a_connection_error_that_outlasts_the_retries_is_raised_and_a_config_error_at_once() -> None:
    clock = FakeClock(T)
    rl = RateLimiter(RateLimitOptions(), sleep=clock.sleep, now=clock.now, rand=lambda: 0.0)
    send, calls = steps([httpx.ConnectError("refused")] * 6)
    with pytest.raises(httpx.ConnectError):
        rl.call(send)
    assert len(calls) == 6 and len(clock.sleeps) == 5
    send, calls = steps([httpx.UnsupportedProtocol("ftp://")])
    with pytest.raises(httpx.UnsupportedProtocol):
        rl.call(send)
    assert len(calls) == 1 and len(clock.sleeps) == 5


def test_a_5xx_retry_after_is_a_floor_for_the_backoff() -> None:
    clock = FakeClock(T)
    rl = RateLimiter(RateLimitOptions(), sleep=clock.sleep, now=clock.now, rand=lambda: 0.0)
    rl.call(steps([response(503, {"retry-after": "30"}), response(200)])[0])
    assert clock.sleeps == [30.0]


SECONDARY_WORDINGS = [
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
    # GitHub Enterprise Server (and GitHub before 2022) words the same limit this way
    "You have triggered an abuse detection mechanism. Please wait a few minutes before you try again.",
]


@pytest.mark.parametrize("message", SECONDARY_WORDINGS)
def test_secondary_limit_403_without_retry_after_waits_a_minute_and_backs_off(message: str) -> None:
    clock = FakeClock(T)
    rl = limiter(clock)
    headers = budget(4990, T + 3000)  # the primary budget is not spent: GitHub names no wait
    send, calls = steps([response(403, headers, message), response(403, headers, message), response(200)])
    assert rl.call(send).status_code == 200
    assert clock.sleeps == [60.0, 120.0]
    assert len(calls) == 3 and rl.stats.waits == 2


@pytest.mark.parametrize("message", SECONDARY_WORDINGS)
def test_a_secondary_limit_that_persists_is_rate_limited_not_an_auth_error(message: str) -> None:
    from graft_eval_pipeline.github.auth import TokenAuth
    from graft_eval_pipeline.github.client import GitHubClient

    clock = FakeClock(T)
    rl = limiter(clock)

    def handler(request: httpx.Request) -> httpx.Response:
        return response(403, budget(4990, clock.now() + 3000), message=message)

    gh = GitHubClient(auth=TokenAuth("t"), limiter=rl, transport=httpx.MockTransport(handler))
    with pytest.raises(GitHubError) as err:
        gh.get_json("/repos/o/r/pulls/1")
    assert err.value.kind == "rate_limited" and err.value.status == 403
    assert clock.sleeps == [60.0, 120.0, 240.0]
