"""GitHub rate limiting around every request (spec E15), with injected `sleep` and `now`.

Injected time keeps the logic testable offline: tests pass a fake clock whose `sleep` advances
`now`. All times are seconds; `now()` is UTC epoch seconds like `x-ratelimit-reset`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import httpx

from graft_eval_pipeline.github.errors import GitHubAbort

MAX_RETRIES = 3
# GitHub: without retry-after or a zero remaining, wait at least a minute, then back off.
FALLBACK_WAIT_S = 60.0
SECONDARY_LIMIT_TEXT = "secondary rate limit"


@dataclass(frozen=True)
class RateLimitOptions:
    min_remaining: int = 50
    max_wait_s: float = 15 * 60
    max_requests: int = 5000


@dataclass
class RateLimitStats:
    """What the export prints at the end: requests sent and the waits taken."""

    requests: int = 0
    waits: int = 0
    waited_s: float = 0.0
    retries: int = 0


def _header_float(response: httpx.Response, name: str) -> float | None:
    value = response.headers.get(name)
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def is_rate_limited(response: httpx.Response) -> bool:
    """403/429 that GitHub uses for primary and secondary limits (a plain 403 is a permission error)."""
    if response.status_code == 429:
        return True
    if response.status_code != 403:
        return False
    if "retry-after" in response.headers or response.headers.get("x-ratelimit-remaining") == "0":
        return True
    return SECONDARY_LIMIT_TEXT in response.text.lower()


def retry_wait_s(response: httpx.Response, now: float, attempt: int) -> float:
    """How long to wait before retrying a rate-limited response: retry-after, else the reset."""
    retry_after = _header_float(response, "retry-after")
    if retry_after is not None:
        return max(retry_after, 0.0)
    reset = _header_float(response, "x-ratelimit-reset")
    if response.headers.get("x-ratelimit-remaining") == "0" and reset is not None:
        return max(reset + 1 - now, 0.0)
    return FALLBACK_WAIT_S * 2.0**attempt


class RateLimiter:
    """Wraps a `send()` callable: budget pause, 403/429 retries, wait and request caps."""

    def __init__(
        self,
        options: RateLimitOptions,
        *,
        sleep: Callable[[float], None],
        now: Callable[[], float],
    ) -> None:
        self.options = options
        self._sleep = sleep
        self._now = now
        self._resume_at: float | None = None
        self.stats = RateLimitStats()

    def _wait(self, seconds: float) -> None:
        if seconds > self.options.max_wait_s:
            raise GitHubAbort(
                "rate_limit_wait",
                f"GitHub rate limit needs a wait of {seconds:.0f} s, more than --max-wait "
                f"{self.options.max_wait_s:.0f} s; re-run later, the export resumes",
            )
        if seconds <= 0:
            return
        self.stats.waits += 1
        self.stats.waited_s += seconds
        self._sleep(seconds)

    def _send_counted(self, send: Callable[[], httpx.Response]) -> httpx.Response:
        if self._resume_at is not None:
            wait = self._resume_at - self._now()
            self._resume_at = None
            self._wait(wait)
        if self.stats.requests >= self.options.max_requests:
            raise GitHubAbort(
                "max_requests",
                f"reached --max-requests {self.options.max_requests}; re-run to resume the export",
            )
        self.stats.requests += 1
        return send()

    def call(self, send: Callable[[], httpx.Response]) -> httpx.Response:
        """Send with retries; the last rate-limited response is returned for the caller to raise."""
        attempt = 0
        while True:
            response = self._send_counted(send)
            if is_rate_limited(response) and attempt < MAX_RETRIES:
                wait = retry_wait_s(response, self._now(), attempt)
                attempt += 1
                self.stats.retries += 1
                self._wait(wait)
                continue
            self._note_budget(response)
            return response

    def _note_budget(self, response: httpx.Response) -> None:
        remaining = _header_float(response, "x-ratelimit-remaining")
        reset = _header_float(response, "x-ratelimit-reset")
        if remaining is not None and reset is not None and remaining <= self.options.min_remaining:
            self._resume_at = reset + 1
