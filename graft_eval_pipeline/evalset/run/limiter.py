"""Adaptive concurrency for live calls (issue 16): one limiter every attempt passes through.

A fixed concurrency keeps pushing through a 429 or 529 storm, and each call retries on its own.
The limiter keeps the number of attempts in flight under a limit that moves between 1 and the
run's `--concurrency`:

- multiplicative decrease: a 429/529 halves it, once per congestion event (an attempt that
  started before the last decrease does not lower it again, so a burst of replies to the same
  overload counts once);
- retry-after: the throttled request is sent again only after its reply's `retry-after` (else
  the reset of the exhausted limit, else an exponential backoff), and its case leaves its slot
  to another meanwhile; when throttles come in a row (no success between them: an outage, not
  a limit just touched) the next event also pauses every new attempt that long;
- rate-limit headers: a success that says a limit is exhausted (`anthropic-ratelimit-*-
  remaining: 0`) or leaves fewer requests than the limit holds it (no pause: the bucket refills
  continuously, and its reset is when it is full again; a 429 without retry-after waits for it);
- additive increase: each other successful attempt adds 1/limit, so the limit grows by one per
  round of successes.

Cases are admitted by the same limit (`admitted()`): a case starts only while fewer cases run
than the limit, so after a decrease the extra cases wait before their card starts, not inside
it, where the wait would count against the card's timeout. Each case makes one call at a time,
so its attempts then rarely wait for anything but a pause.

Clocks and sleep are injected (tests drive it in virtual time). It records what the report's
`run.limiter` block shows: min, max and final concurrency, attempts, throttles, the time
attempts spent waiting, and the changes over time.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from graft_eval_pipeline.card import (
    CallGate,
    GatedLlmClient,
    LlmClient,
    LlmFailure,
    LlmReply,
    LlmRequest,
    RateSignal,
)
from graft_eval_pipeline.evalset.scoring import ConcurrencyPoint, LimiterInfo

DECREASE = 0.5
THROTTLE_BACKOFF_S = 1.0  # a 429/529 without retry-after: 1 s, doubling per consecutive throttle
TRANSIENT_BACKOFF_S = 0.5  # a 5xx or connection error: 0.5 s, doubling per attempt, with jitter
MAX_BACKOFF_S = 30.0
MAX_PAUSE_S = 120.0  # a retry-after or reset further away is capped (the card's timeout bounds it anyway)
TIMELINE_POINTS = 64

Sleep = Callable[[float], Awaitable[None]]


@dataclass
class LimiterStats:
    attempts: int = 0
    throttled: int = 0
    waiting_s: float = 0.0
    paused_s: float = 0.0


class AdaptiveLimiter(CallGate):
    """AIMD limit on attempts in flight, pauses on throttles and exhausted rate limits."""

    def __init__(
        self,
        ceiling: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        if ceiling < 1:
            raise ValueError("the concurrency ceiling must be at least 1")
        self.ceiling = ceiling
        self.limit = float(ceiling)
        self.in_flight = 0
        self.stats = LimiterStats()
        self._clock = clock
        self._sleep = sleep
        self._jitter = jitter
        self._epoch = 0  # bumped at each decrease; an attempt's ticket is the epoch it started in
        self._paused_until = 0.0
        self._consecutive_throttles = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self.cases = 0
        self._retrying = 0
        self._case_waiters: deque[asyncio.Future[None]] = deque()
        self._started: float | None = None
        self._seen = {ceiling}
        self._timeline: list[tuple[float, int]] = []

    @property
    def concurrency(self) -> int:
        return max(1, int(self.limit))

    # --- the gate -----------------------------------------------------------------------------

    async def enter(self) -> int:
        """Wait for a slot and for any pause; returns the ticket `leave` wants back."""
        started = self._clock()
        if self._started is None:
            self._started = started
            self._timeline.append((0.0, self.concurrency))
        while True:
            pause = self._paused_until - self._clock()
            if pause > 0:
                await self._sleep(pause)
                continue
            if self.in_flight < self.concurrency:
                break
            await self._wait_in(self._waiters)
        self.in_flight += 1
        self.stats.attempts += 1
        self.stats.waiting_s += max(self._clock() - started, 0.0)
        return self._epoch

    def leave(self, ticket: int, signal: RateSignal) -> None:
        """Record an attempt's answer: lower, pause or raise; then wake whoever now fits."""
        self.in_flight -= 1
        if signal.throttled:
            self._throttled(ticket, signal)
        elif signal.ok:
            self._consecutive_throttles = 0
            self._succeeded(signal)
        self._wake()

    async def _wait_in(self, queue: deque[asyncio.Future[None]]) -> None:
        waiter = asyncio.get_running_loop().create_future()
        queue.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter in queue:
                queue.remove(waiter)
            else:
                self._wake()  # woken, then cancelled: pass the slot on
            raise

    @asynccontextmanager
    async def admitted(self) -> AsyncIterator[None]:
        """A case runs while fewer cases run than the limit (the wait is outside its card).

        A case waiting out its own retry-after does not count.
        """
        while self.cases - self._retrying >= self.concurrency:
            await self._wait_in(self._case_waiters)
        self.cases += 1
        try:
            yield
        finally:
            self.cases -= 1
            self._wake()

    async def before_retry(self, signal: RateSignal, attempt: int) -> None:
        """This request's own wait before it goes again.

        After a throttle what the reply asked for (retry-after, else the reset of an exhausted
        limit, else 1 s doubling per throttle in a row); after a transient failure an exponential
        backoff with jitter. Others keep going.
        """
        if signal.throttled:
            delay = min(max(self._throttle_wait(signal, attempt), 0.0), MAX_PAUSE_S)
        else:
            delay = min(TRANSIENT_BACKOFF_S * 2 ** (attempt - 1), MAX_BACKOFF_S)
            delay *= 0.75 + 0.25 * self._jitter()
        if delay > 0:
            self._retrying += 1  # its case leaves its admission slot to another while it waits
            self._wake()
            try:
                await self._sleep(delay)
            finally:
                self._retrying -= 1

    # --- the rules ----------------------------------------------------------------------------

    def _throttle_wait(self, signal: RateSignal, streak: int) -> float:
        if signal.retry_after_s is not None:
            return signal.retry_after_s
        if signal.reset_after_s is not None:
            return signal.reset_after_s
        return min(THROTTLE_BACKOFF_S * 2.0 ** (streak - 1), MAX_BACKOFF_S)

    def _throttled(self, ticket: int, signal: RateSignal) -> None:
        self.stats.throttled += 1
        self._consecutive_throttles += 1
        if ticket == self._epoch:  # the first throttle of this congestion event
            self._epoch += 1
            self._set_limit(max(1.0, self.limit * DECREASE))
            if self._consecutive_throttles > 1:  # no success since the last one: everyone waits
                self._pause(self._throttle_wait(signal, self._consecutive_throttles))

    def _succeeded(self, signal: RateSignal) -> None:
        if signal.reset_after_s is not None:
            # A limit is exhausted. Its reset is when the bucket is full again, far later than
            # the next request's room (it refills continuously): hold, neither pause nor lower
            # (lowering to the attempts in flight ratchets down at every such reply); if the
            # next request finds no room, its 429 lowers the limit and says how long to wait.
            return
        remaining = signal.requests_remaining
        if remaining is not None and remaining < self.concurrency:
            return  # hold: raising now would only run into the requests limit
        self._set_limit(min(float(self.ceiling), self.limit + 1.0 / self.concurrency))

    def _pause(self, seconds: float) -> None:
        """No attempt starts before now + seconds (capped); `paused_s` counts wall time paused."""
        now = self._clock()
        until = now + min(max(seconds, 0.0), MAX_PAUSE_S)
        if until > self._paused_until:
            self.stats.paused_s += until - max(self._paused_until, now)
            self._paused_until = until

    def _set_limit(self, limit: float) -> None:
        before = self.concurrency
        self.limit = limit
        after = self.concurrency
        if after != before:
            self._seen.add(after)
            at = self._clock() - (self._started if self._started is not None else self._clock())
            self._timeline.append((max(at, 0.0), after))

    def _wake(self) -> None:
        running = self.cases - self._retrying
        for queue, busy in ((self._waiters, self.in_flight), (self._case_waiters, running)):
            free = self.concurrency - busy
            while free > 0 and queue:
                waiter = queue.popleft()
                if not waiter.done():
                    waiter.set_result(None)
                    free -= 1

    # --- the report -----------------------------------------------------------------------------

    def info(self) -> LimiterInfo | None:
        """The report's `run.limiter` block; None when no attempt went through the limiter."""
        if self.stats.attempts == 0:
            return None
        return LimiterInfo(
            ceiling=self.ceiling,
            min_concurrency=min(self._seen),
            max_concurrency=max(self._seen),
            final_concurrency=self.concurrency,
            attempts=self.stats.attempts,
            throttled=self.stats.throttled,
            waiting_ms=round(self.stats.waiting_s * 1000),
            paused_ms=round(self.stats.paused_s * 1000),
            timeline=[
                ConcurrencyPoint(at_ms=round(at * 1000), concurrency=c) for at, c in thin(self._timeline)
            ],
        )


def thin(points: list[tuple[float, int]], most: int = TIMELINE_POINTS) -> list[tuple[float, int]]:
    """At most `most` points: evenly spaced ones, always the first and the last."""
    if len(points) <= most:
        return points
    step = (len(points) - 1) / (most - 1)
    return [points[round(i * step)] for i in range(most)]


class LimitedLlm:
    """Any `LlmClient` paced by the limiter, one attempt per call (the client retries itself).

    For clients that cannot be gated attempt by attempt (the in-process fakes): a rate_limited
    failure still lowers the limit, with no pause, since the client has already waited.
    """

    def __init__(self, inner: LlmClient, gate: CallGate) -> None:
        self.inner = inner
        self.gate = gate

    async def complete(self, request: LlmRequest) -> LlmReply | LlmFailure:
        ticket = await self.gate.enter()
        signal = RateSignal()
        try:
            outcome = await self.inner.complete(request)
            if isinstance(outcome, LlmReply):
                signal = RateSignal(status=200)
            elif outcome.kind == "rate_limited":
                signal = RateSignal(status=429, retry_after_s=0.0)
            return outcome
        finally:
            self.gate.leave(ticket, signal)


def limited(client: LlmClient, gate: CallGate) -> LlmClient:
    """The client with every attempt through `gate`: gated attempt by attempt when it can be."""
    if isinstance(client, GatedLlmClient):
        return client.gated(gate)
    return LimitedLlm(client, gate)
