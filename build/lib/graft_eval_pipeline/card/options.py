"""Options of the card engine: models, efforts, input limits, timeouts.

`GenerateOptions` extends `PrepareOptions`, so the harness can hand the same object to
`prepare_card_inputs` (estimate, cache key) and to `generate_card` and never see them disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graft_eval_pipeline.card.llm import Effort

MAX_OUTPUT_TOKENS = 4096
"""max_tokens of every call; spec 8.12 prices the upper-bound estimate with it."""


@dataclass(frozen=True, slots=True)
class Models:
    fast: str = "claude-haiku-5-5"
    strong: str = "claude-sonnet-5-5"


@dataclass(frozen=True, slots=True)
class Efforts:
    """Per-model effort; None leaves the API default (and is what the input hash records)."""

    fast: Effort | None = None
    strong: Effort | None = None


@dataclass(frozen=True, slots=True)
class Limits:
    """What the models see at most; anything cut is recorded and lifts the floor (R14)."""

    max_patch_chars: int = 20_000
    max_diff_chars: int = 120_000
    max_text_chars: int = 28_000


@dataclass(frozen=True, slots=True)
class PrepareOptions:
    models: Models = field(default_factory=Models)
    efforts: Efforts = field(default_factory=Efforts)
    limits: Limits = field(default_factory=Limits)
    extra_sensitive_globs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # A list (from a case's floorConfig) would make the options unhashable; the input
        # hash caches per options object.
        object.__setattr__(self, "extra_sensitive_globs", tuple(self.extra_sensitive_globs))


@dataclass(frozen=True, slots=True)
class GenerateOptions(PrepareOptions):
    timeout_ms: int = 120_000
