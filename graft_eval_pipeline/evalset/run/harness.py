"""Run the card engine over a case set and build the report (spec 5.2, T13, E18-E21).

Fake mode (the default) answers every call from the case's script or the null model: it never
builds a live client and never reads or writes `cache/`. Live mode prepares every case first
(cache key and upper-bound estimate), reads the cache, refuses an estimate over the cost cap,
asks for confirmation, and only then builds the client; during the run each case starts only
if its estimate still fits both caps (E19). LLM failures are results (the card is unavailable);
any other exception is a bug and aborts the run naming the case.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from graft_eval_pipeline.card.fake_llm import llm_for_case
from graft_eval_pipeline.card.floor import FloorResult
from graft_eval_pipeline.card.generate import generate_card
from graft_eval_pipeline.card.llm import LlmClient
from graft_eval_pipeline.card.options import MAX_OUTPUT_TOKENS, GenerateOptions, Models
from graft_eval_pipeline.card.prepare import prepare_card_inputs
from graft_eval_pipeline.card.prompts import PROMPT_VERSION, prompt_fingerprint
from graft_eval_pipeline.card.result import CardResult
from graft_eval_pipeline.evalset.report.publish import build_report
from graft_eval_pipeline.evalset.run.budget import (
    DEFAULT_MAX_COST_USD,
    DEFAULT_MAX_TOKENS,
    Budget,
    Estimate,
    total_tokens,
)
from graft_eval_pipeline.evalset.run.cache import CacheEntry, cache_key, is_cacheable, read_entry, write_entry
from graft_eval_pipeline.evalset.scoring.metrics import compute_metrics
from graft_eval_pipeline.evalset.scoring.pricing import price_for, upper_bound_estimate
from graft_eval_pipeline.evalset.scoring.report_schema import (
    CaseRow,
    EvalReport,
    GitInfo,
    ModelPair,
    PromptInfo,
    RunInfo,
)
from graft_eval_pipeline.evalset.scoring.rows import (
    HarnessRun,
    build_row,
    case_cost,
    git_info,
    set_summary,
    skipped_row,
)
from graft_eval_pipeline.evalset.sets.case_schema import EvalCase
from graft_eval_pipeline.evalset.sets.env import EvalEnv
from graft_eval_pipeline.evalset.sets.errors import EvalAbort, EvalError
from graft_eval_pipeline.evalset.sets.store import CaseSet, list_case_ids, read_cases

if TYPE_CHECKING:
    import httpx2

DEFAULT_CONCURRENCY = {"fake": 8, "live": 4}
DEFAULT_TIMEOUT_MS = 120_000
CODE_DIR = Path(__file__).resolve().parent
SDK_LOGGER = "anthropic"
T = TypeVar("T")


@dataclass(frozen=True)
class RunOptions:
    """Everything a run needs; clocks, the live client and the confirmation are injected.

    `progress` receives the live estimate and then one line per case holding its id and
    classes only. `on_estimate` sees the live estimate before the confirmation and before
    any call (Dagster records it as metadata). `confirm` is required in live mode.
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
    on_estimate: Callable[[Estimate], None] | None = None
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


def generate_options(case: EvalCase, models: Models, timeout_ms: int) -> GenerateOptions:
    """The case's floorConfig reaches the floor through the configured sensitive globs."""
    return GenerateOptions(
        models=models,
        extra_sensitive_globs=tuple(case.floor_config.extra_sensitive_globs),
        timeout_ms=timeout_ms,
    )


def progress_line(case_id: str, result: CardResult, *, cached: bool = False) -> str:
    """Ids and classes only."""
    line = f"{case_id} floor {result.risk.floor} final {result.risk.final} {result.status}"
    line += f" ({result.failure_reason})" if result.failure_reason else ""
    return line + (" cached" if cached else "")


async def run_pool(
    cases: list[EvalCase],
    run_one: Callable[[EvalCase], Awaitable[T]],
    concurrency: int,
    on_done: Callable[[EvalCase, T], None],
) -> list[T]:
    """At most `concurrency` cases in flight; results in case order.

    An exception from one case is a bug (LLM failures are results): the pool stops and the
    error names the case id, never its content.
    """
    results: list[T | None] = [None] * len(cases)
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
    return cast(list[T], results)  # every slot is filled once the pool ends without an error


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while cases load and while a fake run goes on (nestable).

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


@contextmanager
def sdk_debug_log_off() -> Iterator[None]:
    """The anthropic SDK logs every request's options, prompt text included, at DEBUG (with
    ANTHROPIC_LOG=debug or a DEBUG root logger): a live run keeps its logger at INFO or above."""
    logger = logging.getLogger(SDK_LOGGER)
    level = logger.level
    if logger.getEffectiveLevel() < logging.INFO:
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.setLevel(level)


# --- live mode: prices, plan, estimate, budget (E19-E21) ------------------------------------


def require_prices(models: Sequence[str | None]) -> None:
    """A live run refuses to start when a model it may call has no price."""
    unpriced = sorted({m for m in models if m and price_for(m) is None})
    if unpriced:
        raise EvalError(
            f"no price for model(s) {', '.join(unpriced)}: add them to evalset/scoring/pricing.py "
            "(with PRICING_VERIFIED_AT) or choose priced models"
        )


def require_live_env(env: EvalEnv) -> str:
    """The API key and a price for every model the live client may answer with."""
    if env.anthropic_api_key is None:
        raise EvalError("ANTHROPIC_API_KEY is not set: --live needs it (fake mode needs none)")
    require_prices([env.model_fast, env.model_strong, env.refusal_fallback])
    return env.anthropic_api_key


def anthropic_llm(
    env: EvalEnv, *, http_client: httpx2.AsyncClient | None = None, base_url: str | None = None
) -> LlmClient:
    """The live client from the environment; the only way this project reaches the API.

    `http_client` and `base_url` serve tests and the loopback benchmark, never production.
    """
    from graft_eval_pipeline.card.anthropic_llm import create_anthropic_llm

    return create_anthropic_llm(
        api_key=require_live_env(env),
        max_retries=env.max_retries,
        timeout_ms=env.timeout_ms,
        refusal_fallback=env.refusal_fallback,
        http_client=http_client,
        base_url=base_url,
    )


@dataclass(frozen=True, slots=True)
class CasePlan:
    """What a live run knows about a case before any call: cache key, cached entry, estimate."""

    case: EvalCase
    options: GenerateOptions
    floor: FloorResult
    key: str
    cached: CacheEntry | None
    estimate_usd: float
    estimate_tokens: int


def plan_case(case: EvalCase, options: RunOptions, fingerprint: str) -> CasePlan:
    """Prepare the case (E20 key, 8.12 estimate) and read its cache entry unless --no-cache.

    A too-large case makes no call, so its estimate is zero.
    """
    opts = generate_options(case, options.models, options.timeout_ms)
    prepared = prepare_card_inputs(case.inputs, opts)
    key = cache_key(prepared.input_hash, fingerprint)
    tokens, usd = 0, 0.0
    if not case.inputs.too_large:
        tokens = prepared.estimated_tokens
        bound = upper_bound_estimate(prepared.floor.risk, tokens, opts.models.strong, MAX_OUTPUT_TOKENS)
        if bound is None:  # run_live checks the prices before planning
            raise EvalError(f"no price for model {opts.models.strong}")
        usd = bound
    return CasePlan(
        case=case,
        options=opts,
        floor=prepared.floor,
        key=key,
        cached=read_entry(options.set, key) if options.use_cache else None,
        estimate_usd=usd,
        estimate_tokens=tokens,
    )


def estimate_of(plans: Sequence[CasePlan]) -> Estimate:
    """8.12 summed over the cases that are not cached."""
    to_call = [p for p in plans if p.cached is None]
    return Estimate(
        cases_to_call=len(to_call),
        cases_cached=len(plans) - len(to_call),
        estimated_tokens=sum(p.estimate_tokens for p in to_call),
        upper_bound_usd=sum(p.estimate_usd for p in to_call),
    )


async def close_client(client: LlmClient) -> None:
    """A live client holds a connection pool; it closes on this run's loop (fakes have none)."""
    aclose = getattr(client, "aclose", None)
    if aclose is not None:
        await aclose()


@dataclass(frozen=True, slots=True)
class LiveOutcome:
    """One case of a live run: a result (fresh or cached), or None when the budget skipped it."""

    result: CardResult | None
    cached: bool


async def confirm_estimate(
    options: RunOptions, estimate: Estimate, confirm: Callable[[Estimate], Awaitable[bool]]
) -> None:
    """Show the estimate, refuse one over the cost cap, then ask; nothing is called yet."""
    if options.progress is not None:
        options.progress(estimate.summary())
    if options.on_estimate is not None:
        options.on_estimate(estimate)
    if estimate.upper_bound_usd > options.max_cost_usd:
        raise EvalAbort(
            "over_budget",
            f"the upper-bound estimate ${estimate.upper_bound_usd:.2f} is over the cost cap "
            f"${options.max_cost_usd:.2f}: raise --max-cost-usd or narrow the run (--cases, --tag)",
        )
    if estimate.cases_to_call == 0:
        return  # every result is cached: nothing to pay for, nothing to confirm
    if not await confirm(estimate):
        raise EvalAbort("declined", "declined at the cost confirmation: no model was called")


async def run_live(options: RunOptions, cases: list[EvalCase]) -> tuple[list[CaseRow], dict[str, CardResult]]:
    """E19-E21: plan, estimate, confirm, then run under the caps and write the cache."""
    if options.llm_factory is None or options.confirm is None:
        raise EvalError("live mode needs an LLM factory and a confirmation (run with --live)")
    require_prices([options.models.fast, options.models.strong])
    fingerprint = prompt_fingerprint()
    plans = {case.id: plan_case(case, options, fingerprint) for case in cases}
    await confirm_estimate(options, estimate_of(list(plans.values())), options.confirm)
    llm = functools.cache(options.llm_factory)  # built once, and only when a case needs it
    budget = Budget(options.max_cost_usd, options.max_tokens)

    async def run_one(case: EvalCase) -> LiveOutcome:
        plan = plans[case.id]
        if plan.cached is not None:
            return LiveOutcome(result=plan.cached.result, cached=True)
        reserved = (plan.estimate_usd, plan.estimate_tokens)
        if not await budget.reserve(*reserved):
            return LiveOutcome(result=None, cached=False)
        result = await generate_card(case.inputs, llm(), plan.options)
        cost = case_cost(result)
        # an answering model without a price (never expected) counts as its whole estimate
        await budget.settle(
            reserved, (plan.estimate_usd if cost is None else cost, total_tokens(result.usage))
        )
        if is_cacheable(result):
            entry = CacheEntry(key=plan.key, created_at=options.now(), cost_usd=cost, result=result)
            # sealing and fsync off the event loop: the other cases' calls keep flowing
            await asyncio.to_thread(write_entry, options.set, entry)
        return LiveOutcome(result=result, cached=False)

    def report_progress(case: EvalCase, outcome: LiveOutcome) -> None:
        if options.progress is None:
            return
        if outcome.result is None:
            options.progress(f"{case.id} floor {plans[case.id].floor.risk} skipped (budget)")
        else:
            options.progress(progress_line(case.id, outcome.result, cached=outcome.cached))

    with sdk_debug_log_off():
        try:
            outcomes = await run_pool(cases, run_one, options.effective_concurrency, report_progress)
        finally:
            if llm.cache_info().currsize:
                await close_client(llm())
    rows: list[CaseRow] = []
    results: dict[str, CardResult] = {}
    for case, outcome in zip(cases, outcomes, strict=True):
        if outcome.result is None:
            rows.append(skipped_row(case, plans[case.id].floor))
        else:
            rows.append(build_row(case, outcome.result, cached=outcome.cached))
            results[case.id] = outcome.result
    return rows, results


# --- the run ----------------------------------------------------------------------------------


def assemble_run(
    options: RunOptions,
    cases: list[EvalCase],
    rows: list[CaseRow],
    results: dict[str, CardResult],
    started_ms: int,
) -> HarnessRun:
    skipped = sum(r.skipped is not None for r in rows)
    return HarnessRun(
        set=set_summary(options.set.meta, cases, rows),
        prompt=PromptInfo(prompt_version=PROMPT_VERSION, prompt_fingerprint=prompt_fingerprint()),
        models=ModelPair(fast=options.models.fast, strong=options.models.strong),
        llm=options.mode,
        run=RunInfo(
            complete=skipped == 0,
            skipped_budget=skipped,
            cached_results=sum(r.cached for r in rows),
            duration_ms=max(options.now_ms() - started_ms, 0),
        ),
        created_at=options.now(),
        git=options.git(),
        rows=rows,
        results=results,
    )


async def _run_harness(options: RunOptions) -> HarnessRun:
    started_ms = options.now_ms()
    if options.effective_concurrency < 1:
        raise EvalError("--concurrency must be at least 1")
    with collector_paused():
        cases = select_cases(read_cases(options.set), options.case_filter)
    if options.mode == "live":
        return assemble_run(options, cases, *await run_live(options, cases), started_ms)

    def report_progress(case: EvalCase, result: CardResult) -> None:
        if options.progress is not None:
            options.progress(progress_line(case.id, result))

    async def run_fake(case: EvalCase) -> CardResult:
        return await generate_card(
            case.inputs,
            llm_for_case(case.fake_llm),
            generate_options(case, options.models, options.timeout_ms),
        )

    results = await run_pool(cases, run_fake, options.effective_concurrency, report_progress)
    rows = [build_row(case, result, cached=False) for case, result in zip(cases, results, strict=True)]
    by_id = {case.id: result for case, result in zip(cases, results, strict=True)}
    return assemble_run(options, cases, rows, by_id, started_ms)


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """asyncio.run, returning through a box: asyncio formats its finished task's result on the
    way out, and a whole run's repr costs seconds on a large set."""
    box: list[T] = []

    async def main() -> None:
        box.append(await coroutine)

    asyncio.run(main())
    return box[0]


def _collector_policy(options: RunOptions) -> AbstractContextManager[None]:
    """A fake run keeps the collector paused end to end (each restart walks everything the run
    holds); a live run waits on the network and pauses it only while cases load."""
    return collector_paused() if options.mode == "fake" else nullcontext()


def run_harness(options: RunOptions) -> HarnessRun:
    """Load and validate every case (a bad case aborts before any call), then run each one."""
    with _collector_policy(options):
        return run_sync(_run_harness(options))


def run_eval(options: RunOptions) -> EvalReport:
    """Harness, metrics and report in one call: what `graft-eval run` does before checking."""
    with _collector_policy(options):
        harness = run_sync(_run_harness(options))
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
