"""Live safety (spec E19): the upper-bound estimate shown before any call, and the two caps.

Kept apart from the harness so the CLI can name the defaults without importing the engine.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from graft_eval_pipeline.card import Usage

DEFAULT_MAX_COST_USD = 10.0
DEFAULT_MAX_TOKENS = 5_000_000


@dataclass(frozen=True)
class Estimate:
    """What a live run would cost at most (8.12); shown before the confirmation."""

    cases_to_call: int
    cases_cached: int
    estimated_tokens: int
    upper_bound_usd: float
    batch: bool = False
    cases_skipped_secret: int = 0
    """Cases left out because the secret rules found a secret in their prompt text."""

    def summary(self) -> str:
        skipped = (
            f", {self.cases_skipped_secret} skipped (secret detected)" if self.cases_skipped_secret else ""
        )
        prices = ", at batch prices: half of standard" if self.batch else ""
        return (
            f"estimate: {self.cases_to_call} case(s) to call, {self.cases_cached} cached{skipped}; at most "
            f"{self.estimated_tokens:,} tokens and ${self.upper_bound_usd:.2f} (upper bound{prices})"
        )


def total_tokens(usage: Usage) -> int:
    return usage.input_tokens + usage.output_tokens + usage.cache_read_tokens + usage.cache_write_tokens


class Budget:
    """The two hard caps during a run.

    A case starts only if spent + reserved + its estimate fits the cost cap and the same holds
    for tokens. Its estimate is reserved while it runs and replaced by the real cost and tokens
    when it ends. A case that does not fit waits while other cases are in flight (their real
    cost is usually far below the estimate) and is skipped when nothing is left in flight.
    """

    def __init__(self, max_cost_usd: float, max_tokens: int) -> None:
        self.max_cost_usd = max_cost_usd
        self.max_tokens = max_tokens
        self.spent_usd = 0.0
        self.tokens = 0
        self.in_flight = 0
        self._changed = asyncio.Condition()

    def fits(self, usd: float, tokens: int) -> bool:
        return self.spent_usd + usd <= self.max_cost_usd and self.tokens + tokens <= self.max_tokens

    def reserve_now(self, usd: float, tokens: int) -> bool:
        """Reserve without waiting (a batch run decides every case before its first phase)."""
        if not self.fits(usd, tokens):
            return False
        self.spent_usd += usd
        self.tokens += tokens
        self.in_flight += 1
        return True

    def add_now(self, usd: float) -> bool:
        """Widen a running case's reservation by `usd` if it still fits.

        An interactive retry of a batch request costs up to twice its batch price.
        """
        if not self.fits(usd, 0):
            return False
        self.spent_usd += usd
        return True

    async def reserve(self, usd: float, tokens: int) -> bool:
        async with self._changed:
            while not self.fits(usd, tokens):
                if self.in_flight == 0:
                    return False
                await self._changed.wait()
            self.spent_usd += usd
            self.tokens += tokens
            self.in_flight += 1
            return True

    async def settle(self, reserved: tuple[float, int], spent: tuple[float, int]) -> None:
        async with self._changed:
            self.spent_usd += spent[0] - reserved[0]
            self.tokens += spent[1] - reserved[1]
            self.in_flight -= 1
            self._changed.notify_all()
