"""GitHub rate limiting and transient-failure retries around every request (spec E15).

`sleep`, `now` and the jitter's `rand` are injected so the logic is testable offline: tests pass a
fake clock whose `sleep` advances `now`, and a fixed `rand`. All times are seconds; `now()` is UTC
epoch seconds like `x-ratelimit-reset`.

Rate limits follow GitHub's documented rules: honour `retry-after`; else, at
`x-ratelimit-remaining: 0`, wait until `x-ratelimit-reset`; else (a secondary limit that names no
wait) wait at least a minute and back off exponentially. 5xx answers and connection errors are
transient: they are retried with exponential backoff and jitter while the waits for one request
stay within `--max-wait`; the caller then stops the run (resumable) instead of failing it.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from graft_eval_pipeline.github.errors import GitHubAbort
from graft_eval_pipeline.github.limits import DEFAULT_MAX_REQUESTS, DEFAULT_MAX_WAIT_S, DEFAULT_MIN_REMAINING

MAX_RETRIES = 3
# GitHub: without retry-after or a zero remaining, wait at least a minute, then back off.
FALLBACK_WAIT_S = 60.0
# A secondary (or, on older GitHub Enterprise Server, "abuse") limit names itself in the body only.
_SECONDARY_LIMIT = re.compile(r"secondary rate[ -]?limit|abuse detection", re.IGNORECASE)

# 5xx and connection errors: 2, 4, 8, 16, 32 s, each scaled by a random factor in [0.5, 1).
TRANSIENT_RETRIES = 5
TRANSIENT_BASE_WAIT_S = 2.0
# Connection failures worth another try; UnsupportedProtocol, ProxyError, LocalProtocolError
# and the like are configuration errors and fail at once.
RETRYABLE_TRANSPORT_ERRORS: tuple[type[httpx.TransportError], ...] = (
    httpx.TimeoutException,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
)


# The defaults of --min-remaining, --max-wait and --max-requests and of Dagster's GitHubResource.


@dataclass(frozen=True)
class RateLimitOptions:
    min_remaining: int = DEFAULT_MIN_REMAINING
    max_wait_s: float = DEFAULT_MAX_WAIT_S
    max_requests: int = DEFAULT_MAX_REQUESTS


@dataclass
class RateLimitStats:
    """What the export prints at the end: requests sent and the waits taken."""

    requests: int = 0
    waits: int = 0
    waited_s: float = 0.0
    retries: int = 0
    # 5xx / connection-error retries and their backoff (not counted in waits / waited_s)
    transient_retries: int = 0
    transient_wait_s: float = 0.0


def _header_float(response: httpx.Response, name: str) -> float | None:
    value = response.headers.get(name)
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def is_secondary_limit(response: httpx.Response) -> bool:
    return response.status_code in (403, 429) and _SECONDARY_LIMIT.search(response.text) is not None


def is_rate_limited(response: httpx.Response) -> bool:
    """403/429 that GitHub uses for primary and secondary limits (a plain 403 is a permission error)."""
    if response.status_code == 429:
        return True
    if response.status_code != 403:
        return False
    if "retry-after" in response.headers or response.headers.get("x-ratelimit-remaining") == "0":
        return True
    return is_secondary_limit(response)


def retry_wait_s(response: httpx.Response, now: float, attempt: int) -> float:
    """How long to wait before retrying a rate-limited response (GitHub's documented order)."""
    retry_after = _header_float(response, "retry-after")
    if retry_after is not None:
        return max(retry_after, 0.0)
    reset = _header_float(response, "x-ratelimit-reset")
    if response.headers.get("x-ratelimit-remaining") == "0" and reset is not None:
        return max(reset + 1 - now, 0.0)
    return FALLBACK_WAIT_S * 2.0**attempt


def is_transient(response: httpx.Response) -> bool:
    return response.status_code >= 500


def transient_wait_s(attempt: int, rand: float, retry_after: float | None = None) -> float:
    """Exponential backoff with jitter; a server's retry-after is a floor."""
    wait = TRANSIENT_BASE_WAIT_S * 2.0**attempt * (0.5 + rand / 2)
    return max(wait, retry_after) if retry_after is not None else wait


class RateLimiter:
    """Wraps a `send()` callable.

    Budget pause, 403/429 retries, 5xx / connection-error retries, wait and request caps.
    """

    def __init__(
        self,
        options: RateLimitOptions,
        *,
        sleep: Callable[[float], None],
        now: Callable[[], float],
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.options = options
        self._sleep = sleep
        self._now = now
        self._rand = rand
        self._resume_at: float | None = None
        self.stats = RateLimitStats()
        self.last_transient_retries = 0  # 5xx / connection-error retries of the last call

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
        response = send()
        self.stats.requests += len(response.history)  # each redirect hop was a request too
        return response

    def _transient_backoff(self, attempt: int, waited: float, retry_after: float | None) -> float | None:
        """The next backoff wait, or None when the retries or --max-wait are used up."""
        if attempt >= TRANSIENT_RETRIES:
            return None
        wait = transient_wait_s(attempt, self._rand(), retry_after)
        if waited + wait > self.options.max_wait_s:
            return None
        self.stats.transient_retries += 1
        self.stats.transient_wait_s += wait
        self._sleep(wait)
        return wait

    def call(self, send: Callable[[], httpx.Response]) -> httpx.Response:
        """Send with retries.

        The last rate-limited or 5xx response is returned for the caller to raise; the last
        retryable connection error is re-raised.
        """
        attempt = 0
        transient_attempt = self.last_transient_retries = 0
        transient_waited = 0.0
        while True:
            try:
                response = self._send_counted(send)
            except RETRYABLE_TRANSPORT_ERRORS:
                wait = self._transient_backoff(transient_attempt, transient_waited, None)
                if wait is None:
                    raise
                transient_attempt = self.last_transient_retries = transient_attempt + 1
                transient_waited += wait
                continue
            if is_rate_limited(response) and attempt < MAX_RETRIES:
                wait = retry_wait_s(response, self._now(), attempt)
                attempt += 1
                self.stats.retries += 1
                self._wait(wait)
                continue
            if is_transient(response):
                retry_after = _header_float(response, "retry-after")
                backoff = self._transient_backoff(transient_attempt, transient_waited, retry_after)
                if backoff is not None:
                    transient_attempt = self.last_transient_retries = transient_attempt + 1
                    transient_waited += backoff
                    continue
            self._note_budget(response)
            return response

    def _note_budget(self, response: httpx.Response) -> None:
        remaining = _header_float(response, "x-ratelimit-remaining")
        reset = _header_float(response, "x-ratelimit-reset")
        if remaining is not None and reset is not None and remaining <= self.options.min_remaining:
            self._resume_at = reset + 1
