"""Live mode: prices, per-case plan (cache key, estimate), confirmation, budget and the API client.

Every case is planned before any call: the run prints the upper-bound estimate for the cases
not already cached, refuses one over the cost cap, asks for confirmation, and only then builds
the client; during the run each case starts only if its estimate still fits both caps. A case
whose prompt text the secret rules flag is skipped, not sent (secret_check.py), unless the run
allows secrets.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graft_eval_pipeline.card.floor import FloorResult
from graft_eval_pipeline.card.generate import generate_card
from graft_eval_pipeline.card.llm import LlmClient
from graft_eval_pipeline.card.log_guard import llm_logs_quiet
from graft_eval_pipeline.card.options import MAX_OUTPUT_TOKENS, GenerateOptions
from graft_eval_pipeline.card.prepare import prepare_card_inputs
from graft_eval_pipeline.card.prompts import prompt_fingerprint
from graft_eval_pipeline.card.result import CardResult
from graft_eval_pipeline.evalset.run.budget import Budget, Estimate, total_tokens
from graft_eval_pipeline.evalset.run.cache import CacheEntry, cache_key, is_cacheable, read_entry, write_entry
from graft_eval_pipeline.evalset.run.options import RunOptions, generate_options
from graft_eval_pipeline.evalset.run.pool import collector_paused, stream_pool
from graft_eval_pipeline.evalset.run.progress import CaseProgress
from graft_eval_pipeline.evalset.run.secret_check import prompt_secret_kinds
from graft_eval_pipeline.evalset.scoring import SkipReason, case_cost, price_for, upper_bound_estimate
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
    """What a live run knows about a case before any call: cache key, whether it is cached, the
    estimate, and the secret kinds found in its prompt text (the case is skipped when there are
    any). It holds neither the case nor a cached card (the run reads both again)."""

    options: GenerateOptions
    floor: FloorResult
    key: str
    cached: bool
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
        bound = upper_bound_estimate(prepared.floor.risk, tokens, opts.models.strong, MAX_OUTPUT_TOKENS)
        if bound is None:  # run_live checks the prices before planning
            raise EvalError(f"no price for model {opts.models.strong}")
        usd = bound
    check = not case.inputs.too_large and not options.allow_secrets
    return CasePlan(
        options=opts,
        floor=prepared.floor,
        key=key,
        cached=options.use_cache and read_entry(options.set, key) is not None,
        estimate_usd=usd,
        estimate_tokens=tokens,
        secrets=prompt_secret_kinds(prepared) if check else {},
    )


def estimate_of(plans: Sequence[CasePlan]) -> Estimate:
    """8.12 summed over the cases that are neither cached nor skipped for a secret."""
    checked = [p for p in plans if not p.secrets]
    to_call = [p for p in checked if not p.cached]
    return Estimate(
        cases_to_call=len(to_call),
        cases_cached=len(checked) - len(to_call),
        estimated_tokens=sum(p.estimate_tokens for p in to_call),
        upper_bound_usd=sum(p.estimate_usd for p in to_call),
        cases_skipped_secret=len(plans) - len(checked),
    )


async def close_client(client: LlmClient) -> None:
    """A live client holds a connection pool; it closes on this run's loop (fakes have none)."""
    aclose = getattr(client, "aclose", None)
    if aclose is not None:
        await aclose()


@dataclass(frozen=True, slots=True)
class LiveOutcome:
    """One case of a live run: a result (fresh or cached), or None and why it was skipped (its
    row then shows the floor alone)."""

    result: CardResult | None
    cached: bool
    floor: FloorResult
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


async def run_live(
    options: RunOptions,
    plan_pass: Iterable[EvalCase],
    cases: Callable[[], Iterable[EvalCase]],
    on_done: Callable[[int, EvalCase, LiveOutcome], None],
) -> None:
    """E19-E21: plan, estimate, confirm, then run under the caps and write the cache.

    `plan_pass` reads the selected cases once to plan every case (a bad case aborts before any
    call); `cases` reads them afresh to run them, each handed to `on_done` as it ends.
    """
    if options.llm_factory is None or options.confirm is None:
        raise EvalError("live mode needs an LLM factory and a confirmation (run with --live)")
    require_prices([options.models.fast, options.models.strong])
    fingerprint = prompt_fingerprint()
    with collector_paused():
        plans = {case.id: plan_case(case, options, fingerprint) for case in plan_pass}
    await confirm_estimate(options, estimate_of(list(plans.values())), options.confirm)
    llm = functools.cache(options.llm_factory)  # built once, and only when a case needs it
    budget = Budget(options.max_cost_usd, options.max_tokens)

    def plan_of(case: EvalCase) -> CasePlan:
        plan = plans.get(case.id)
        if plan is None:
            raise EvalError(f"case {case.id} was added to set {options.set.set_id} during the run: run again")
        return plan

    async def run_one(case: EvalCase) -> LiveOutcome:
        plan = plan_of(case)
        if plan.secrets:
            return LiveOutcome(result=None, cached=False, floor=plan.floor, skipped="secret_detected")
        entry = read_entry(options.set, plan.key) if plan.cached else None
        if entry is not None:
            return LiveOutcome(result=entry.result, cached=True, floor=plan.floor)
        reserved = (plan.estimate_usd, plan.estimate_tokens)
        if not await budget.reserve(*reserved):
            return LiveOutcome(result=None, cached=False, floor=plan.floor, skipped="budget")
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
        return LiveOutcome(result=result, cached=False, floor=plan.floor)

    progress = CaseProgress(options, len(plans))

    def done(index: int, case: EvalCase, outcome: LiveOutcome) -> None:
        on_done(index, case, outcome)
        plan = plans[case.id]
        skipped = (
            f"secret_detected: {', '.join(plan.secrets)}"
            if outcome.skipped == "secret_detected"
            else "budget"
        )
        progress.case(case.id, outcome.result, cached=outcome.cached, floor=plan.floor.risk, skipped=skipped)

    with llm_logs_quiet():  # no prompt or reply in any log, whatever the log settings
        try:
            await stream_pool(cases(), run_one, options.effective_concurrency, done)
        finally:
            if llm.cache_info().currsize:
                await close_client(llm())
    progress.finish()
