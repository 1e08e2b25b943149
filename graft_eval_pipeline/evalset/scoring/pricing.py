"""Model prices and cost (spec T12, E21, 8.11, 8.12).

Prices are per model, not per run: Haiku and Sonnet differ 20x, so a summed usage cannot be
priced. A model id matches by longest prefix because the API answers with dated ids. A call the
Message Batches API answered (`--batch`) costs BATCH_PRICE_FACTOR of the standard price, on
every counter (prompt-cache reads and writes included).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

PRICING_VERIFIED_AT = "2026-10-06"
BATCH_PRICE_FACTOR = 0.5
"""The Message Batches API bills half of the standard price (checked with PRICING_VERIFIED_AT)."""


@dataclass(frozen=True)
class Price:
    """USD per million tokens for each usage counter."""

    input: float
    output: float
    cache_read: float
    cache_write: float


# Haiku's higher rate above 100K prompt tokens is not modelled: Graft prompts stay below 60K.
PRICES: dict[str, Price] = {
    "claude-haiku-5-5": Price(input=0.10, output=0.50, cache_read=0.01, cache_write=0.125),
    "claude-sonnet-5-5": Price(input=2.00, output=10.00, cache_read=0.20, cache_write=2.50),
}


class UsageLike(Protocol):
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int


def price_for(model: str) -> Price | None:
    """Longest table key that prefixes the id (`claude-sonnet-5-5-20260901` is Sonnet)."""
    matches = [key for key in PRICES if model.startswith(key)]
    return PRICES[max(matches, key=len)] if matches else None


def cost(model: str, usage: UsageLike, *, batch: bool = False) -> float | None:
    """USD for one call's usage (at batch prices when the Batches API answered it).

    None when the model has no price.
    """
    price = price_for(model)
    if price is None:
        return None
    standard = (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_write_tokens * price.cache_write
    ) / 1e6
    return standard * BATCH_PRICE_FACTOR if batch else standard


def most_calls(floor: str) -> int:
    """The calls a case makes at most after its floor, as 8.12 counts them.

    Fast writer, escalation and verifier after a trivial floor; strong writer and verifier
    otherwise (a refused call's one retry with the fallback model aside).
    """
    return 3 if floor == "trivial" else 2


def upper_bound_estimate(
    floor: str, estimated_tokens: int, strong_model: str, max_output_tokens: int, *, batch: bool = False
) -> float | None:
    """The 8.12 cost estimate of a case: every token at the strong model's rates.

    Three calls' worth of output after a trivial floor (fast writer, escalation, verifier), two
    otherwise; caching ignored. At batch prices for a `--batch` run.
    """
    price = price_for(strong_model)
    if price is None:
        return None
    out = max_output_tokens * most_calls(floor)
    inp = max(estimated_tokens - out, 0)
    standard = (inp * price.input + out * price.output) / 1e6
    return standard * BATCH_PRICE_FACTOR if batch else standard
