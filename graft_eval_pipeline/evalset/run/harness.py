"""Run the card engine over a case set, fake or live, into per-case rows (spec 5.2, T13, E18-E21).

Fake mode (the default) answers every call from the case's script or the null model: it never
builds a live client and never reads or writes `cache/`. Live mode prepares every case first
(cache key and upper-bound estimate), reads the cache, refuses an estimate over the cost cap,
asks for confirmation, and only then builds the client; during the run each case starts only
if its estimate still fits both caps (E19). LLM failures are results (the card is unavailable);
any other exception is a bug and aborts the run naming the case.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

from graft_eval_pipeline.card.fake_llm import llm_for_case
from graft_eval_pipeline.card.generate import generate_card
from graft_eval_pipeline.card.options import Models
from graft_eval_pipeline.card.prompts import PROMPT_VERSION, prompt_fingerprint
from graft_eval_pipeline.card.result import CardResult
from graft_eval_pipeline.evalset.run.live import run_live
from graft_eval_pipeline.evalset.run.options import RunOptions, generate_options, select_cases
from graft_eval_pipeline.evalset.run.pool import collector_paused, run_pool, run_sync
from graft_eval_pipeline.evalset.run.progress import CaseProgress
from graft_eval_pipeline.evalset.scoring import (
    BatchInfo,
    CaseRow,
    HarnessRun,
    LimiterInfo,
    ModelPair,
    PromptInfo,
    RunInfo,
    build_row,
    set_summary,
)
from graft_eval_pipeline.evalset.sets import EvalCase, EvalError, read_cases

# --- the run ----------------------------------------------------------------------------------


def assemble_run(
    options: RunOptions,
    cases: list[EvalCase],
    rows: list[CaseRow],
    results: dict[str, CardResult],
    started_ms: int,
    *,
    limiter: LimiterInfo | None = None,
    batch: BatchInfo | None = None,
) -> HarnessRun:
    skipped = sum(r.skipped is not None for r in rows)
    return HarnessRun(
        set=set_summary(options.set.meta, cases, rows),
        prompt=PromptInfo(prompt_version=PROMPT_VERSION, prompt_fingerprint=prompt_fingerprint()),
        models=ModelPair(fast=options.models.fast, strong=options.models.strong),
        llm=options.mode,
        run=RunInfo(
            complete=skipped == 0,
            skipped_budget=sum(r.skipped == "budget" for r in rows),
            cached_results=sum(r.cached for r in rows),
            duration_ms=max(options.now_ms() - started_ms, 0),
            limiter=limiter,
            batch=batch,
        ),
        created_at=options.now(),
        git=options.git(),
        rows=rows,
        results=results,
    )


async def fake_card(case: EvalCase, models: Models, timeout_ms: int) -> CardResult:
    """The card a fake run makes: the case's script, or the null model. Deterministic."""
    return await generate_card(
        case.inputs, llm_for_case(case.fake_llm), generate_options(case, models, timeout_ms)
    )


def fake_result(case: EvalCase, models: Models, timeout_ms: int) -> CardResult:
    """The fake run's card for one case, derived again (`show --with-result` in fake mode)."""
    return run_sync(fake_card(case, models, timeout_ms))


async def _run_harness(options: RunOptions) -> HarnessRun:
    started_ms = options.now_ms()
    if options.effective_concurrency < 1:
        raise EvalError("--concurrency must be at least 1")
    with collector_paused():
        every_case = read_cases(options.set)
        if options.on_cases is not None:
            options.on_cases(every_case)
        cases = select_cases(every_case, options.case_filter)
    if options.mode == "live":
        live = await run_live(options, cases)
        return assemble_run(
            options, cases, live.rows, live.results, started_ms, limiter=live.limiter, batch=live.batch
        )

    progress = CaseProgress(options, len(cases))

    def report_progress(case: EvalCase, result: CardResult) -> None:
        progress.case(case.id, result)

    async def run_fake(case: EvalCase) -> CardResult:
        return await fake_card(case, options.models, options.timeout_ms)

    results = await run_pool(cases, run_fake, options.effective_concurrency, report_progress)
    progress.finish()
    rows = [build_row(case, result, cached=False) for case, result in zip(cases, results, strict=True)]
    by_id = {case.id: result for case, result in zip(cases, results, strict=True)}
    return assemble_run(options, cases, rows, by_id, started_ms)


def collector_policy(options: RunOptions) -> AbstractContextManager[None]:
    """A fake run keeps the collector paused end to end (each restart walks everything the run
    holds); a live run waits on the network and pauses it only while cases load."""
    return collector_paused() if options.mode == "fake" else nullcontext()


def run_harness(options: RunOptions) -> HarnessRun:
    """Load and validate every case (a bad case aborts before any call), then run each one."""
    with collector_policy(options):
        return run_sync(_run_harness(options))
