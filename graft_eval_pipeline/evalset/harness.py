"""Run the card engine over a case set and build the report (spec 5.2, T13, E18-E21).

Fake mode (the default) answers every call from the case's script or the null model: it never
builds a live client and never reads or writes `cache/`. LLM failures are results (the card is
unavailable); any other exception is a bug and aborts the run naming the case.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from graft_eval_pipeline.card.fake_llm import llm_for_case
from graft_eval_pipeline.card.generate import generate_card
from graft_eval_pipeline.card.llm import LlmClient
from graft_eval_pipeline.card.options import GenerateOptions, Models
from graft_eval_pipeline.card.prompts import PROMPT_VERSION, prompt_fingerprint
from graft_eval_pipeline.card.result import CardResult
from graft_eval_pipeline.evalset.case_schema import EvalCase
from graft_eval_pipeline.evalset.errors import EvalError
from graft_eval_pipeline.evalset.metrics import compute_metrics
from graft_eval_pipeline.evalset.report import build_report, git_info, set_summary
from graft_eval_pipeline.evalset.report_schema import EvalReport, GitInfo, ModelPair, PromptInfo, RunInfo
from graft_eval_pipeline.evalset.rows import HarnessRun, build_row
from graft_eval_pipeline.evalset.store import CaseSet, list_case_ids, read_cases

DEFAULT_CONCURRENCY = {"fake": 8, "live": 4}
DEFAULT_TIMEOUT_MS = 120_000
DEFAULT_MAX_COST_USD = 10.0
DEFAULT_MAX_TOKENS = 5_000_000
CODE_DIR = Path(__file__).resolve().parent
T = TypeVar("T")


@dataclass(frozen=True)
class Estimate:
    """What a live run would cost at most (8.12); shown before the confirmation (E19)."""

    cases_to_call: int
    cases_cached: int
    estimated_tokens: int
    upper_bound_usd: float


@dataclass(frozen=True)
class RunOptions:
    """Everything a run needs; clocks, the live client and the confirmation are injected.

    `progress` receives one line per case holding its id and classes only (E8).
    """

    set: CaseSet
    mode: Literal["fake", "live"] = "fake"
    llm_factory: Callable[[], LlmClient] | None = None
    models: Models = field(default_factory=Models)
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    concurrency: int | None = None
    max_cost_usd: float = DEFAULT_MAX_COST_USD
    max_tokens: int = DEFAULT_MAX_TOKENS
    use_cache: bool = True
    case_filter: Callable[[str, list[str]], bool] | None = None
    confirm: Callable[[Estimate], Awaitable[bool]] | None = None
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    now_ms: Callable[[], int] = field(default=lambda: time.monotonic_ns() // 1_000_000)
    progress: Callable[[str], None] | None = None
    git: Callable[[], GitInfo] = field(default=lambda: git_info(CODE_DIR))

    @property
    def effective_concurrency(self) -> int:
        return self.concurrency if self.concurrency is not None else DEFAULT_CONCURRENCY[self.mode]


def select_cases(
    cases: list[EvalCase], case_filter: Callable[[str, list[str]], bool] | None
) -> list[EvalCase]:
    return [c for c in cases if case_filter is None or case_filter(c.id, list(c.tags))]


def generate_options(case: EvalCase, options: RunOptions) -> GenerateOptions:
    """The case's floorConfig reaches the floor through the configured sensitive globs."""
    return GenerateOptions(
        models=options.models,
        extra_sensitive_globs=tuple(case.floor_config.extra_sensitive_globs),
        timeout_ms=options.timeout_ms,
    )


def progress_line(case_id: str, result: CardResult) -> str:
    """Ids and classes only (E8)."""
    line = f"{case_id} floor {result.risk.floor} final {result.risk.final} {result.status}"
    return line + (f" ({result.failure_reason})" if result.failure_reason else "")


async def run_pool(
    cases: list[EvalCase],
    run_one: Callable[[EvalCase], Awaitable[CardResult]],
    concurrency: int,
    on_done: Callable[[EvalCase, CardResult], None],
) -> list[CardResult]:
    """At most `concurrency` cases in flight; results in case order.

    An exception from one case is a bug (LLM failures are results): the pool stops and the
    error names the case id, never its content.
    """
    results: list[CardResult | None] = [None] * len(cases)
    pending = iter(enumerate(cases))

    async def worker() -> None:
        for index, case in pending:  # one shared iterator: each case is taken once
            try:
                result = await run_one(case)
            except Exception as exc:
                raise EvalError(
                    f"case {case.id}: the card engine raised {type(exc).__name__}; "
                    "this is a bug, not an LLM failure (run aborted)"
                ) from exc
            results[index] = result
            on_done(case, result)

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(min(concurrency, len(cases))):
                group.create_task(worker())
    except BaseExceptionGroup as errors:
        first = errors.exceptions[0]
        raise first if isinstance(first, EvalError) else errors from None
    return [r for r in results if r is not None]


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while cases load and while a fake run goes on.

    Both allocate fast but make no garbage that needs the cycle collector (peak memory is the
    same without it), while every automatic full collection walks all cases loaded so far:
    on 10,000 cases that is about a quarter of the run time and makes it grow faster than
    the set. Live runs wait on the network and keep the collector on.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


async def _run_harness(options: RunOptions) -> HarnessRun:
    started_ms = options.now_ms()
    if options.effective_concurrency < 1:
        raise EvalError("--concurrency must be at least 1")
    with collector_paused():
        cases = select_cases(read_cases(options.set), options.case_filter)
    if options.mode == "live":
        # Seam for live mode (T13, E19, E20): prepare each case for the cache key and the
        # estimate, read the cache, confirm, then run with the budget caps.
        raise EvalError("live mode is not available yet: run without --live (fake mode)")

    def report_progress(case: EvalCase, result: CardResult) -> None:
        if options.progress is not None:
            options.progress(progress_line(case.id, result))

    async def run_fake(case: EvalCase) -> CardResult:
        return await generate_card(case.inputs, llm_for_case(case.fake_llm), generate_options(case, options))

    with collector_paused():
        results = await run_pool(cases, run_fake, options.effective_concurrency, report_progress)
        rows = [build_row(case, result, cached=False) for case, result in zip(cases, results, strict=True)]
        return HarnessRun(
            set=set_summary(options.set.meta, cases, rows),
            prompt=PromptInfo(prompt_version=PROMPT_VERSION, prompt_fingerprint=prompt_fingerprint()),
            models=ModelPair(fast=options.models.fast, strong=options.models.strong),
            llm=options.mode,
            run=RunInfo(
                complete=True,
                skipped_budget=0,
                cached_results=0,
                duration_ms=max(options.now_ms() - started_ms, 0),
            ),
            created_at=options.now(),
            git=options.git(),
            rows=rows,
            results={case.id: result for case, result in zip(cases, results, strict=True)},
        )


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """asyncio.run, returning through a box: asyncio formats its finished task's result on the
    way out, and a whole run's repr costs seconds on a large set."""
    box: list[T] = []

    async def main() -> None:
        box.append(await coroutine)

    asyncio.run(main())
    return box[0]


def run_harness(options: RunOptions) -> HarnessRun:
    """Load and validate every case (a bad case aborts before any call), then run each one."""
    return run_sync(_run_harness(options))


def run_eval(options: RunOptions) -> EvalReport:
    """Harness, metrics and report in one call: what `graft-eval run` does before checking."""
    harness = run_harness(options)
    return build_report(harness, compute_metrics(harness.rows))


def case_filter_for(
    cs: CaseSet, case_ids: Sequence[str], tag: str | None
) -> Callable[[str, list[str]], bool] | None:
    """--cases and --tag; an unknown id is a usage error, not an empty run."""
    wanted = set(case_ids)
    unknown = sorted(wanted - set(list_case_ids(cs)))
    if unknown:
        raise EvalError(f"--cases: {len(unknown)} id(s) not in set {cs.set_id}: {', '.join(unknown)}")
    if not wanted and tag is None:
        return None
    return lambda case_id, tags: (not wanted or case_id in wanted) and (tag is None or tag in tags)
