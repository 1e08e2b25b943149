"""Price table and cost (U-PRICE-1, U-PRICE-2) and the upper-bound estimate of spec 8.12."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from graft_eval_pipeline.evalset.scoring.pricing import (
    PRICING_VERIFIED_AT,
    cost,
    price_for,
    upper_bound_estimate,
)


@dataclass
class U:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


MILLION = U(1_000_000, 1_000_000, 1_000_000, 1_000_000)


def test_U_PRICE_1_sonnet_million_of_each_counter() -> None:
    assert cost("claude-sonnet-5-5", MILLION) == pytest.approx(2 + 10 + 0.20 + 2.50)
    assert cost("claude-haiku-5-5", MILLION) == pytest.approx(0.10 + 0.50 + 0.01 + 0.125)
    assert cost("claude-haiku-5-5", U(input_tokens=2000, output_tokens=200)) == pytest.approx(0.0003)
    assert PRICING_VERIFIED_AT == "2026-10-06"


def test_U_PRICE_2_dated_id_by_longest_prefix_and_unknown_is_none() -> None:
    assert cost("claude-sonnet-5-5-20260901", MILLION) == pytest.approx(14.7)
    assert price_for("claude-sonnet-5-5-20260901") == price_for("claude-sonnet-5-5")
    assert cost("claude-opus-9", MILLION) is None
    assert cost("sonnet", MILLION) is None
    assert price_for("claude-sonnet") is None


def test_upper_bound_estimate_prices_everything_at_the_strong_model() -> None:
    # trivial floor: 3 calls' output (3 x 2,000), the rest input: 4,000 x $2 + 6,000 x $10 per M
    assert upper_bound_estimate("trivial", 10_000, "claude-sonnet-5-5", 2_000) == pytest.approx(0.068)
    # logic floor: 2 calls' output: 6,000 x $2 + 4,000 x $10 per M
    assert upper_bound_estimate("logic", 10_000, "claude-sonnet-5-5", 2_000) == pytest.approx(0.052)
    assert upper_bound_estimate("logic", 10_000, "unknown-model", 2_000) is None
