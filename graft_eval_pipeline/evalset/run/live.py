"""Live mode: prices, per-case plan (cache key, estimate), confirmation, budget and the API client.

Every case is planned before any call: the run prints the upper-bound estimate for the cases
not already cached, refuses one over the cost cap, asks for confirmation, and only then builds
the client. Interactively, each case starts only if its estimate still fits both caps, and
every attempt passes the adaptive limiter (limiter.py). With `batch`, every case that fits the
caps at batch prices is decided up front and the calls go through the Message Batches API in
phases (batch.py). Both fill the same cache. A case whose prompt text the secret rules flag is
skipped, not sent (secret_check.py), unless the run allows secrets.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from graft_eval_pipeline.card.floor import FloorResult
from graft_eval_pipeline.card.generate import generate_card
from graft_eval_pipeline.card.llm import BatchLlmClient, LlmClient
from graft_eval_pipeline.card.log_guard import llm_logs_quiet
from graft_eval_pipeline.card.options import MAX_OUTPUT_TOKENS, GenerateOptions
from graft_eval_pipeline.card.prepare import prepare_card_inputs
from graft_eval_pipeline.card.prompts import prompt_fingerprint
from graft_eval_pipeline.card.result import CardResult
from graft_eval_pipeline.evalset.run.batch import BATCH_CARD_TIMEOUT_MS, BatchCounts, BatchPhases, batch_info
from graft_eval_pipeline.evalset.run.budget import Budget, Estimate, total_tokens
from graft_eval_pipeline.evalset.run.cache import CacheEntry, cache_key, is_cacheable, read_entry, write_entry
from graft_eval_pipeline.evalset.run.limiter import AdaptiveLimiter, limited
from graft_eval_pipeline.evalset.run.options import RunOptions, generate_options
from graft_eval_pipeline.evalset.run.pool import run_pool
from graft_eval_pipeline.evalset.run.progress import CaseProgress
from graft_eval_pipeline.evalset.run.secret_check import prompt_secret_kinds
from graft_eval_pipeline.evalset.scoring import (
    BatchInfo,
    CaseRow,
    LimiterInfo,
    SkipReason,
    build_row,
    case_cost,
    price_for,
    skipped_row,
    upper_bound_estimate,
)
from graft_eval_pipeline.evalset.sets import EvalAbort, EvalCase, EvalEnv, EvalError

if TYPE_CHECKING:
    import httpx2


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
    """What a live run knows about a case before any call: cache key, cached entry, estimate,
    and the secret kinds found in its prompt text (the case is skipped when there are any)."""

    case: EvalCase
    options: GenerateOptions
    floor: FloorResult
    key: str
    cached: CacheEntry | None
    estimate_usd: float
    estimate_tokens: int
    secrets: dict[str, int]


def plan_case(case: EvalCase, options: RunOptions, fingerprint: str) -> CasePlan:
    """Prepare the case (E20 key, 8.12 estimate), look for secrets in its prompt text unless the
    run allows them, and read its cache entry unless --no-cache.

    A too-large case makes no call, so its estimate is zero and its text is not checked.
    """
    opts = generate_options(case, options.models, options.timeout_ms)
    prepared = prepare_card_inputs(case.inputs, opts)
    key = cache_key(prepared.input_hash, fingerprint)
    tokens, usd = 0, 0.0
    if not case.inputs.too_large:
        tokens = prepared.estimated_tokens
        bound = upper_bound_estimate(
            prepared.floor.risk, tokens, opts.models.strong, MAX_OUTPUT_TOKENS, batch=options.batch
        )
        if bound is None:  # run_live checks the prices before planning
            raise EvalError(f"no price for model {opts.models.strong}")
        usd = bound
    check = not case.inputs.too_large and not options.allow_secrets
    return CasePlan(
        case=case,
        options=opts,
        floor=prepared.floor,
        key=key,
        cached=read_entry(options.set, key) if options.use_cache else None,
        estimate_usd=usd,
        estimate_tokens=tokens,
        secrets=prompt_secret_kinds(prepared) if check else {},
    )


def estimate_of(plans: Sequence[CasePlan], *, batch: bool = False) -> Estimate:
    """8.12 summed over the cases that are neither cached nor skipped for a secret (their
    estimates at batch prices in a batch run)."""
    checked = [p for p in plans if not p.secrets]
    to_call = [p for p in checked if p.cached is None]
    return Estimate(
        cases_to_call=len(to_call),
        cases_cached=len(checked) - len(to_call),
        estimated_tokens=sum(p.estimate_tokens for p in to_call),
        upper_bound_usd=sum(p.estimate_usd for p in to_call),
        batch=batch,
        cases_skipped_secret=len(plans) - len(checked),
    )


async def close_client(client: LlmClient) -> None:
    """A live client holds a connection pool; it closes on this run's loop (fakes have none)."""
    aclose = getattr(client, "aclose", None)
    if aclose is not None:
        await aclose()


@dataclass(frozen=True, slots=True)
class LiveOutcome:
    """One case of a live run: a result (fresh or cached), or None and why it was skipped."""

    result: CardResult | None
    cached: bool
    skipped: SkipReason | None = None


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


@dataclass(frozen=True, slots=True)
class LiveRun:
    """A live run's rows and card results, and how it paced its calls (report `run` blocks)."""

    rows: list[CaseRow]
    results: dict[str, CardResult]
    limiter: LimiterInfo | None
    batch: BatchInfo | None


async def run_live(options: RunOptions, cases: list[EvalCase]) -> LiveRun:
    """E19-E21: plan, estimate, confirm, then run under the caps and write the cache."""
    if options.llm_factory is None or options.confirm is None:
        raise EvalError("live mode needs an LLM factory and a confirmation (run with --live)")
    require_prices([options.models.fast, options.models.strong])
    fingerprint = prompt_fingerprint()
    plans = {case.id: plan_case(case, options, fingerprint) for case in cases}
    await confirm_estimate(options, estimate_of(list(plans.values()), batch=options.batch), options.confirm)
    llm = functools.cache(options.llm_factory)  # built once, and only when a case needs it
    limiter = AdaptiveLimiter(options.effective_concurrency, clock=options.clock, sleep=options.sleep)
    # every interactive attempt through the limiter (unless `adaptive` is off, to compare)
    interactive = functools.cache(lambda: limited(llm(), limiter) if options.adaptive else llm())
    admitted = limiter.admitted if options.adaptive else contextlib.nullcontext
    budget = Budget(options.max_cost_usd, options.max_tokens)

    async def finish(plan: CasePlan, result: CardResult, reserved: tuple[float, int]) -> LiveOutcome:
        cost = case_cost(result)
        # an answering model without a price (never expected) counts as its whole reservation
        await budget.settle(reserved, (reserved[0] if cost is None else cost, total_tokens(result.usage)))
        if is_cacheable(result):
            entry = CacheEntry(key=plan.key, created_at=options.now(), cost_usd=cost, result=result)
            # sealing and fsync off the event loop: the other cases' calls keep flowing
            await asyncio.to_thread(write_entry, options.set, entry)
        return LiveOutcome(result=result, cached=False)

    async def run_one(case: EvalCase) -> LiveOutcome:
        plan = plans[case.id]
        if plan.secrets:
            return LiveOutcome(result=None, cached=False, skipped="secret_detected")
        if plan.cached is not None:
            return LiveOutcome(result=plan.cached.result, cached=True)
        reserved = (plan.estimate_usd, plan.estimate_tokens)
        if not await budget.reserve(*reserved):
            return LiveOutcome(result=None, cached=False, skipped="budget")
        async with admitted():  # after a throttle, wait here rather than inside the card's timeout
            result = await generate_card(case.inputs, interactive(), plan.options)
        return await finish(plan, result, reserved)

    progress = CaseProgress(options, len(cases))

    def report_progress(case: EvalCase, outcome: LiveOutcome) -> None:
        plan = plans[case.id]
        skipped = (
            f"secret_detected: {', '.join(plan.secrets)}"
            if outcome.skipped == "secret_detected"
            else "budget"
        )
        progress.case(case.id, outcome.result, cached=outcome.cached, floor=plan.floor.risk, skipped=skipped)

    batch_info: BatchInfo | None = None
    with llm_logs_quiet():  # no prompt or reply in any log, whatever the log settings
        try:
            if options.batch:
                outcomes, batch_info = await run_batched(
                    options, cases, plans, llm, interactive, admitted, budget, finish, report_progress
                )
            else:
                outcomes = await run_pool(cases, run_one, options.effective_concurrency, report_progress)
        finally:
            if llm.cache_info().currsize:
                await close_client(llm())
    progress.finish()
    rows: list[CaseRow] = []
    results: dict[str, CardResult] = {}
    for case, outcome in zip(cases, outcomes, strict=True):
        if outcome.result is None:
            rows.append(skipped_row(case, plans[case.id].floor, outcome.skipped or "budget"))
        else:
            rows.append(build_row(case, outcome.result, cached=outcome.cached))
            results[case.id] = outcome.result
    return LiveRun(rows=rows, results=results, limiter=limiter.info(), batch=batch_info)


Finish = Callable[[CasePlan, CardResult, tuple[float, int]], Awaitable[LiveOutcome]]


async def run_batched(
    options: RunOptions,
    cases: list[EvalCase],
    plans: dict[str, CasePlan],
    llm: Callable[[], LlmClient],
    interactive: Callable[[], LlmClient],
    admitted: Callable[[], contextlib.AbstractAsyncContextManager[None]],
    budget: Budget,
    finish: Finish,
    report: Callable[[EvalCase, LiveOutcome], None],
) -> tuple[list[LiveOutcome], BatchInfo]:
    """`--batch`: every case that is neither cached nor skipped for a secret starts, in case
    order, if its estimate at batch prices fits both caps (decided up front: a phase waits for
    every running case); the others are skipped (budget). All run at once, their calls answered
    phase by phase through batches.

    An interactive retry of a missed request first widens the case's reservation by its estimate
    (at most the standard price's extra), once per case; without room, no retry.
    """
    outcomes: dict[str, LiveOutcome] = {}
    to_run: list[CasePlan] = []
    for case in cases:
        plan = plans[case.id]
        if plan.secrets:
            outcomes[case.id] = LiveOutcome(result=None, cached=False, skipped="secret_detected")
        elif plan.cached is not None:
            outcomes[case.id] = LiveOutcome(result=plan.cached.result, cached=True)
        elif budget.reserve_now(plan.estimate_usd, plan.estimate_tokens):
            to_run.append(plan)
            continue
        else:
            outcomes[case.id] = LiveOutcome(result=None, cached=False, skipped="budget")
        report(case, outcomes[case.id])
    if not to_run:
        return [outcomes[case.id] for case in cases], batch_info(BatchCounts())
    api = llm()
    if not isinstance(api, BatchLlmClient):
        raise EvalError("--batch needs a client with the Message Batches API (the Anthropic client)")
    widened: dict[str, float] = {}

    def may_retry(case_id: str) -> bool:
        if case_id in widened:
            return True
        extra = plans[case_id].estimate_usd
        if not budget.add_now(extra):
            return False
        widened[case_id] = extra
        return True

    phases = BatchPhases(
        options, api, interactive(), cases=len(to_run), may_retry=may_retry, admitted=admitted
    )

    async def run_case(plan: CasePlan) -> None:
        case_id = plan.case.id
        try:
            card_options = replace(plan.options, timeout_ms=BATCH_CARD_TIMEOUT_MS)
            result = await generate_card(plan.case.inputs, phases.client_for(case_id), card_options)
        except EvalError:
            raise
        except Exception as exc:
            raise EvalError(
                f"case {case_id}: the card engine raised {type(exc).__name__}; "
                "this is a bug, not an LLM failure (run aborted)"
            ) from exc
        finally:
            phases.case_done()
        reserved = (plan.estimate_usd + widened.get(case_id, 0.0), plan.estimate_tokens)
        outcomes[case_id] = await finish(plan, result, reserved)
        report(plan.case, outcomes[case_id])

    try:
        async with asyncio.TaskGroup() as group:
            for plan in to_run:
                group.create_task(run_case(plan))
    except BaseExceptionGroup as errors:
        first = errors.exceptions[0]
        # an abort (EvalError) or a stop (not an Exception) is the same for every case: say it once
        raise first if isinstance(first, EvalError) or not isinstance(first, Exception) else errors from None
    finally:
        await phases.aclose()
    await phases.forget_used()
    return [outcomes[case.id] for case in cases], phases.info()
