"""Live mode: prices, per-case plan (cache key, estimate), confirmation, budget and the API client.

Every case is planned before any call: the run prints the upper-bound estimate for the cases
not already cached, refuses one over the cost cap, asks for confirmation, and only then builds
the client. Interactively, the cases that can make the most calls start first (`run_order`),
each only if its estimate still fits both caps, every attempt passes the adaptive limiter
(limiter.py), and each cache entry is written in the background (`CacheWrites`). With
`batch`, every case that fits the caps at batch prices is decided up front and the calls go
through the Message Batches API in phases (batch.py). Both fill the same cache, and both hand
each case's outcome to the caller as it ends (the harness's tally and card-results file). A
case whose prompt text the secret rules flag is skipped, not sent (secret_check.py), unless the
run allows secrets.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from graft_eval_pipeline.card import (
    MAX_OUTPUT_TOKENS,
    BatchLlmClient,
    CardResult,
    FloorResult,
    GenerateOptions,
    LlmClient,
    generate_card,
    llm_logs_quiet,
    prepare_card_inputs,
    prompt_fingerprint,
)
from graft_eval_pipeline.evalset.run.batch import BATCH_CARD_TIMEOUT_MS, BatchCounts, BatchPhases, batch_info
from graft_eval_pipeline.evalset.run.budget import Budget, Estimate, total_tokens
from graft_eval_pipeline.evalset.run.cache import CacheEntry, CacheWrites, cache_key, is_cacheable, read_entry
from graft_eval_pipeline.evalset.run.limiter import AdaptiveLimiter, limited
from graft_eval_pipeline.evalset.run.options import RunOptions, generate_options
from graft_eval_pipeline.evalset.run.pool import TrialCase, collector_paused, stream_pool, trial_items
from graft_eval_pipeline.evalset.run.progress import CaseProgress
from graft_eval_pipeline.evalset.run.secret_check import prompt_secret_kinds
from graft_eval_pipeline.evalset.scoring import (
    BatchInfo,
    LimiterInfo,
    SkipReason,
    case_cost,
    most_calls,
    price_for,
    upper_bound_estimate,
)
from graft_eval_pipeline.evalset.sets import EvalAbort, EvalCase, EvalEnv, EvalError, GraftEvalError, gold

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
    """What a live run knows about a case before any call.

    Cache key, whether it is cached, the estimate, and the secret kinds found in its prompt text
    (the case is skipped when there are any). It holds neither the case nor a cached card (the run
    reads both again).
    """

    options: GenerateOptions
    floor: FloorResult
    key: str
    cached: bool
    estimate_usd: float
    estimate_tokens: int
    secrets: dict[str, int]
    key_input: str = ""  # the prepared input hash (each trial's key derives from it)
    calls: int = 0  # the most calls it can make (`most_calls`; none when too large)

    @property
    def calls_to_make(self) -> int:
        """The most calls this run makes for it: none when it is cached or skipped for a secret."""
        return 0 if self.cached or self.secrets else self.calls


def trial_plans(case: EvalCase, options: RunOptions, fingerprint: str) -> list[CasePlan]:
    """The case's plan for each trial: one preparation, a cache key (and entry) per trial."""
    plan = plan_case(case, options, fingerprint)
    plans = [plan]
    for trial in range(1, options.trials):
        key = cache_key(plan.key_input, fingerprint, trial)
        cached = options.use_cache and read_entry(options.set, key) is not None
        plans.append(replace(plan, key=key, cached=cached))
    return plans


def plan_case(case: EvalCase, options: RunOptions, fingerprint: str) -> CasePlan:
    """Prepare the case, look for secrets in its prompt text, and read its cache entry.

    Preparing gives the E20 key and the 8.12 estimate; the secret check is skipped when the run
    allows secrets, the cache read with --no-cache.

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
        options=opts,
        floor=prepared.floor,
        key=key,
        cached=options.use_cache and read_entry(options.set, key) is not None,
        estimate_usd=usd,
        estimate_tokens=tokens,
        secrets=prompt_secret_kinds(prepared) if check else {},
        key_input=prepared.input_hash,
        calls=0 if case.inputs.too_large else most_calls(prepared.floor.risk),
    )


def estimate_of(plans: Sequence[CasePlan], *, batch: bool = False) -> Estimate:
    """The 8.12 estimate summed over the cases that will make calls.

    The cases that are neither cached nor skipped for a secret; their estimates at batch prices in a
    batch run.
    """
    checked = [p for p in plans if not p.secrets]
    to_call = [p for p in checked if not p.cached]
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
    """One case of a live run.

    A result (fresh or cached), or None and why it was skipped (its row then shows the floor alone).
    """

    result: CardResult | None
    cached: bool
    floor: FloorResult
    skipped: SkipReason | None = None


def run_order(plans: Sequence[Sequence[CasePlan]]) -> list[int]:
    """The order in which a run starts its cases (indices of `plans`, one entry per case).

    Each case runs its calls one after another in its lane, so a long case started last ends
    last: cases that can make the most calls start first (three after a trivial floor, two
    otherwise; cached and skipped ones, which make none, last), in case order among equals:
    the longest-processing-time rule on what the plan knows (whether a fast writer escalates is
    only known once it answers).
    """
    most = [max((p.calls_to_make for p in trials), default=0) for trials in plans]
    return sorted(range(len(plans)), key=lambda index: -most[index])


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
    """How a live run paced its calls (report `run` blocks).

    Its rows and card results went to the caller's `on_done` as each case ended.
    """

    limiter: LimiterInfo | None
    batch: BatchInfo | None


OnDone = Callable[[int, TrialCase, LiveOutcome], None]
ReadCases = Callable[[Sequence[str]], Iterable[EvalCase]]
"""Reads the cases of the given ids afresh, one at a time, in that order."""


async def run_live(
    options: RunOptions,
    plan_pass: Iterable[EvalCase],
    cases: ReadCases,
    on_done: OnDone,
) -> LiveRun:
    """E19-E21: plan, estimate, confirm, then run under the caps and write the cache.

    `plan_pass` reads the selected cases once to plan every case (a bad case aborts before any
    call); `cases` reads the planned ones afresh to run them (in `run_order`; a batch run in case
    order), each handed to `on_done` (with its index in case order) as it ends.
    """
    if options.llm_factory is None or options.confirm is None:
        raise EvalError("live mode needs an LLM factory and a confirmation (run with --live)")
    require_prices([options.models.fast, options.models.strong])
    fingerprint = prompt_fingerprint()
    ids: list[str] = []  # the planned cases, in case order
    by_case: list[list[CasePlan]] = []
    with collector_paused():
        for case in plan_pass:
            ids.append(case.id)
            by_case.append(trial_plans(case, options, fingerprint))
    plans = {
        (case_id, t): plan
        for case_id, trials in zip(ids, by_case, strict=True)
        for t, plan in enumerate(trials)
    }
    estimate = estimate_of(list(plans.values()), batch=options.batch)
    await confirm_estimate(options, estimate, options.confirm)
    llm = functools.cache(options.llm_factory)  # built once, and only when a case needs it
    limiter = AdaptiveLimiter(options.effective_concurrency, clock=options.clock, sleep=options.sleep)
    # every interactive attempt through the limiter (unless `adaptive` is off, to compare)
    interactive = functools.cache(lambda: limited(llm(), limiter) if options.adaptive else llm())
    admitted = limiter.admitted if options.adaptive else contextlib.nullcontext
    budget = Budget(options.max_cost_usd, options.max_tokens)
    writes = CacheWrites(options.set, options.effective_concurrency)

    def plan_of(case: EvalCase, trial: int = 0) -> CasePlan:
        plan = plans.get((case.id, trial))
        if plan is None:
            raise EvalError(f"case {case.id} was added to set {options.set.set_id} during the run: run again")
        return plan

    async def finish(
        case_id: str, plan: CasePlan, result: CardResult, reserved: tuple[float, int]
    ) -> LiveOutcome:
        cost = case_cost(result)
        # an answering model without a price (never expected) counts as its whole reservation
        await budget.settle(reserved, (reserved[0] if cost is None else cost, total_tokens(result.usage)))
        if is_cacheable(result):
            entry = CacheEntry(key=plan.key, created_at=options.now(), cost_usd=cost, result=result)
            # sealed and fsynced in a worker thread while the lane takes its next case
            await writes.put(case_id, entry)
        return LiveOutcome(result=result, cached=False, floor=plan.floor)

    async def run_one(item: TrialCase) -> LiveOutcome:
        case = item.case
        plan = plan_of(case, item.trial)
        if plan.secrets:
            return LiveOutcome(result=None, cached=False, floor=plan.floor, skipped="secret_detected")
        entry = read_entry(options.set, plan.key) if plan.cached else None
        if entry is not None:
            return LiveOutcome(result=entry.result, cached=True, floor=plan.floor)
        reserved = (plan.estimate_usd, plan.estimate_tokens)
        if not await budget.reserve(*reserved):
            return LiveOutcome(result=None, cached=False, floor=plan.floor, skipped="budget")
        if building is not None:
            await building  # the client, built in a thread while the first lanes read their cases
        async with admitted():  # after a throttle, wait here rather than inside the card's timeout
            result = await generate_card(case.inputs, interactive(), plan.options)
        return await finish(case.id, plan, result, reserved)

    progress = CaseProgress(options, len(plans))

    def done(index: int, item: TrialCase, outcome: LiveOutcome) -> None:
        on_done(index, item, outcome)
        case = item.case
        plan = plans[(case.id, item.trial)]
        skipped = (
            f"secret_detected: {', '.join(plan.secrets)}"
            if outcome.skipped == "secret_detected"
            else "budget"
        )
        label = gold(case)
        progress.case(
            case.id,
            outcome.result,
            cached=outcome.cached,
            floor=plan.floor.risk,
            skipped=skipped,
            gold=label.risk if label is not None else None,
        )

    trials = options.trials
    order = run_order(by_case)

    def done_in_order(position: int, item: TrialCase, outcome: LiveOutcome) -> None:
        """`position` counts the items as the run took them: the case's index in case order instead."""
        done(order[position // trials] * trials + item.trial, item, outcome)

    batch: BatchInfo | None = None
    building: asyncio.Future[LlmClient] | None = None
    with llm_logs_quiet():  # no prompt or reply in any log, whatever the log settings
        try:
            if not options.batch and estimate.cases_to_call:
                # sends nothing; its TLS set-up (about 70 ms) overlaps with the first cases' reading
                building = asyncio.ensure_future(asyncio.to_thread(llm))
            if options.batch:
                batched = Batched(options, plan_of, llm, interactive, admitted, budget, finish, done)
                batch = await batched.run(cases(ids))
            else:
                items = trial_items(cases([ids[i] for i in order]), trials)
                await stream_pool(items, run_one, options.effective_concurrency, done_in_order)
        except BaseException:
            await writes.drain(quiet=True)  # the run's error comes first; no write outlives the run
            raise
        else:
            await writes.drain()
        finally:
            if building is not None:
                await asyncio.wait([building])  # built (or failed) before it is closed
            if llm.cache_info().currsize:
                await close_client(llm())
    progress.finish()
    return LiveRun(limiter=limiter.info(), batch=batch)


Finish = Callable[[str, CasePlan, CardResult, tuple[float, int]], Awaitable[LiveOutcome]]


@dataclass(slots=True)
class Batched:
    """`--batch`: start the cases whose estimates fit both caps, and answer their calls through batches.

    Every case that is neither cached nor skipped for a secret starts, in case order, if its
    estimate at batch prices fits both caps (decided up front: a phase waits for every running
    case); the others are skipped (budget). All run at once, their calls answered phase by phase
    through batches, so the cases that run are held until they end (a phase's requests are in
    memory); each outcome still goes to `done` as its case ends.

    An interactive retry of a missed request first widens the case's reservation by its estimate
    (at most the standard price's extra), once per case; without room, no retry.
    """

    options: RunOptions
    plan_of: Callable[[EvalCase], CasePlan]
    llm: Callable[[], LlmClient]
    interactive: Callable[[], LlmClient]
    admitted: Callable[[], contextlib.AbstractAsyncContextManager[None]]
    budget: Budget
    finish: Finish
    done: OnDone

    async def run(self, cases: Iterable[EvalCase]) -> BatchInfo:
        to_run: list[tuple[int, EvalCase, CasePlan]] = []
        for index, case in enumerate(cases):
            plan = self.plan_of(case)
            if plan.secrets:
                outcome = LiveOutcome(result=None, cached=False, floor=plan.floor, skipped="secret_detected")
            else:
                entry = read_entry(self.options.set, plan.key) if plan.cached else None
                if entry is not None:
                    outcome = LiveOutcome(result=entry.result, cached=True, floor=plan.floor)
                elif self.budget.reserve_now(plan.estimate_usd, plan.estimate_tokens):
                    to_run.append((index, case, plan))
                    continue
                else:
                    outcome = LiveOutcome(result=None, cached=False, floor=plan.floor, skipped="budget")
            self.done(index, TrialCase(case, 0), outcome)
        if not to_run:
            return batch_info(BatchCounts())
        api = self.llm()
        if not isinstance(api, BatchLlmClient):
            raise EvalError("--batch needs a client with the Message Batches API (the Anthropic client)")
        plans = {case.id: plan for _, case, plan in to_run}
        widened: dict[str, float] = {}

        def may_retry(case_id: str) -> bool:
            if case_id in widened:
                return True
            extra = plans[case_id].estimate_usd
            if not self.budget.add_now(extra):
                return False
            widened[case_id] = extra
            return True

        phases = BatchPhases(
            self.options,
            api,
            self.interactive(),
            cases=len(to_run),
            may_retry=may_retry,
            admitted=self.admitted,
        )

        async def run_case(index: int, case: EvalCase, plan: CasePlan) -> None:
            try:
                card_options = replace(plan.options, timeout_ms=BATCH_CARD_TIMEOUT_MS)
                result = await generate_card(case.inputs, phases.client_for(case.id), card_options)
            except GraftEvalError:
                raise
            except Exception as exc:
                raise EvalError(
                    f"case {case.id}: the card engine raised {type(exc).__name__}; "
                    "this is a bug, not an LLM failure (run aborted)"
                ) from exc
            finally:
                phases.case_done()
            reserved = (plan.estimate_usd + widened.get(case.id, 0.0), plan.estimate_tokens)
            self.done(index, TrialCase(case, 0), await self.finish(case.id, plan, result, reserved))

        try:
            async with asyncio.TaskGroup() as group:
                for index, case, plan in to_run:
                    group.create_task(run_case(index, case, plan))
        except BaseExceptionGroup as errors:
            first = errors.exceptions[0]
            # an abort (GraftEvalError) or a stop (not an Exception) is the same for every case: say it once
            raise (
                first if isinstance(first, GraftEvalError) or not isinstance(first, Exception) else errors
            ) from None
        finally:
            await phases.aclose()
        await phases.forget_used()
        return phases.info()
