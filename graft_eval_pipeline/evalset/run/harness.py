"""Run the card engine over a case set, fake or live, into per-case rows (spec 5.2, T13, E18-E21).

Streamed, holding one case (or one per lane) at a time. A fake run (the default) over the whole
set reads each case once: the case is read and validated when a lane of the pool is free, run,
reduced to its report row and its two digests for the set hash, its card result written out
(when the run keeps them) and dropped. A bad case aborts the run naming it, and nothing of the
run is written (the card-results file is only renamed into place at the end), so scripted
replies made for the cases before it cost nothing. A fake run that selects cases (--cases,
--tag) first reads and validates every case (its progress needs the count) and then reads the
selected ones again. A live run always reads twice: the first pass validates every case and
plans each selected one (cache key, upper-bound estimate), so a bad case aborts before any call
(U-HAR-9), then the run refuses an estimate over the cost cap and asks for confirmation (E19);
the second reads each selected case again when a lane is free. No step holds every case's
inputs, prompts or cards. Fake mode answers every call from the case's script or the null model:
it never builds a live client and never reads or writes `cache/`. LLM failures are results (the
card is unavailable); any other exception is a bug and aborts the run naming the case.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

from graft_eval_pipeline.card import (
    PROMPT_VERSION,
    CardResult,
    Models,
    engine_fingerprint,
    generate_card,
    llm_for_case,
    prompt_fingerprint,
)
from graft_eval_pipeline.evalset.run.options import RunOptions, generate_options
from graft_eval_pipeline.evalset.run.pool import (
    TrialCase,
    collector_paused,
    run_sync,
    stream_pool,
    trial_items,
)
from graft_eval_pipeline.evalset.run.progress import CaseProgress
from graft_eval_pipeline.evalset.run.results import CardResultWriter
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
    skipped_row,
)
from graft_eval_pipeline.evalset.sets import (
    CaseTally,
    EvalCase,
    EvalError,
    iter_cases,
    list_case_ids,
    read_case,
)

if TYPE_CHECKING:
    from graft_eval_pipeline.evalset.run.live import LiveOutcome

# --- the run ----------------------------------------------------------------------------------


def selected_cases(options: RunOptions) -> Iterator[EvalCase]:
    """Every case of the set read and validated in id order, one at a time.

    Those that --cases and --tag select are yielded (so a bad case fails the pass even when it is
    not selected).
    """
    keep = options.case_filter
    return (c for c in iter_cases(options.set) if keep is None or keep(c.id, list(c.tags)))


def first_pass(options: RunOptions) -> Iterator[EvalCase]:
    """`selected_cases` that first shows every case of the set to `options.on_case`.

    Selected or not; the evaluation keeps what it needs of each: its labels, a title.
    """
    keep, seen = options.case_filter, options.on_case
    for case in iter_cases(options.set):
        if seen is not None:
            seen(case)
        if keep is None or keep(case.id, list(case.tags)):
            yield case


def check_every_case(options: RunOptions) -> int:
    """The first pass of a fake run that selects cases: read and validate every case, keep none.

    Returns how many are selected (the progress summaries need the total).
    """
    with collector_paused():
        return sum(1 for _case in first_pass(options))


class RunTally:
    """What a run keeps of each case: its row (in case order) and its digests for the set hash."""

    def __init__(self) -> None:
        self.cases = CaseTally()
        self._rows: list[tuple[int, CaseRow]] = []

    def add(self, index: int, case: EvalCase, row: CaseRow) -> None:
        if row.trial == 0:  # a case counts once for the set hash, whatever its trials
            self.cases.add(case)
        self._rows.append((index, row))

    def all_rows(self) -> list[CaseRow]:
        return [row for _, row in sorted(self._rows, key=lambda pair: pair[0])]

    def rows(self) -> list[CaseRow]:
        """Trial 0's rows: the report's cases and standard metrics."""
        return [row for row in self.all_rows() if row.trial == 0]

    def trial_rows(self) -> list[CaseRow]:
        """The rows of trials 1 to N-1 (none for a single trial)."""
        return [row for row in self.all_rows() if row.trial > 0]


def assemble_run(
    options: RunOptions,
    tally: RunTally,
    started_ms: int,
    *,
    limiter: LimiterInfo | None = None,
    batch: BatchInfo | None = None,
) -> HarnessRun:
    rows = tally.rows()
    skipped = sum(r.skipped is not None for r in rows)
    return HarnessRun(
        set=set_summary(options.set.meta, tally.cases, rows),
        prompt=PromptInfo(
            prompt_version=PROMPT_VERSION,
            prompt_fingerprint=prompt_fingerprint(),
            engine_fingerprint=engine_fingerprint(),
        ),
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
        card_results=options.card_results,
        trials=options.trials,
        trial_rows=tally.trial_rows(),
    )


async def fake_card(case: EvalCase, models: Models, timeout_ms: int) -> CardResult:
    """The card a fake run makes: the case's script, or the null model. Deterministic."""
    return await generate_card(
        case.inputs, llm_for_case(case.fake_llm), generate_options(case, models, timeout_ms)
    )


def fake_result(case: EvalCase, models: Models, timeout_ms: int) -> CardResult:
    """The fake run's card for one case, derived again (`show --with-result` in fake mode)."""
    return run_sync(fake_card(case, models, timeout_ms))


def trial_row(item: TrialCase, row: CaseRow) -> CaseRow:
    return row if item.trial == 0 else row.model_copy(update={"trial": item.trial})


async def _run_fake(options: RunOptions, tally: RunTally, results: CardResultWriter) -> None:
    if options.case_filter is None:  # the whole set: each case read once, the count from its ids
        total, cases = len(list_case_ids(options.set)), first_pass(options)
    else:
        total, cases = check_every_case(options), selected_cases(options)
    progress = CaseProgress(options, total * options.trials)

    async def run_one(item: TrialCase) -> CardResult:
        return await fake_card(item.case, options.models, options.timeout_ms)

    def done(index: int, item: TrialCase, result: CardResult) -> None:
        case = item.case
        row = build_row(case, result, cached=False, label_key=options.set.key)
        tally.add(index, case, trial_row(item, row))
        if item.trial == 0:  # the card results file keeps trial 0's cards
            results.add(case, result)
        progress.case(case.id, result, gold=row.gold.risk if row.gold is not None else None)

    items = trial_items(cases, options.trials)
    await stream_pool(items, run_one, options.effective_concurrency, done)
    progress.finish()


async def _run_harness(options: RunOptions) -> HarnessRun:
    started_ms = options.now_ms()
    if options.effective_concurrency < 1:
        raise EvalError("--concurrency must be at least 1")
    if options.trials < 1:
        raise EvalError("--trials must be at least 1")
    tally = RunTally()
    limiter: LimiterInfo | None = None
    batch: BatchInfo | None = None
    with CardResultWriter(options.set, options.card_results, options.on_result) as results:
        if options.mode == "live":
            from graft_eval_pipeline.evalset.run.live import run_live  # the SDK: live runs only

            def done(index: int, item: TrialCase, outcome: LiveOutcome) -> None:
                case = item.case
                if outcome.result is None:
                    reason = outcome.skipped or "budget"
                    row = skipped_row(case, outcome.floor, reason, label_key=options.set.key)
                    tally.add(index, case, trial_row(item, row))
                else:
                    row = build_row(case, outcome.result, cached=outcome.cached, label_key=options.set.key)
                    tally.add(index, case, trial_row(item, row))
                    if item.trial == 0:
                        results.add(case, outcome.result)

            def read(ids: Sequence[str]) -> Iterator[EvalCase]:
                return (read_case(options.set, case_id) for case_id in ids)

            live = await run_live(options, first_pass(options), read, done)
            limiter, batch = live.limiter, live.batch
        else:
            await _run_fake(options, tally, results)
    return assemble_run(options, tally, started_ms, limiter=limiter, batch=batch)


def collector_policy(options: RunOptions) -> AbstractContextManager[None]:
    """A fake run keeps the collector paused end to end (each restart walks everything the run holds).

    A live run waits on the network and pauses it only while it plans.
    """
    return collector_paused() if options.mode == "fake" else nullcontext()


def run_harness(options: RunOptions) -> HarnessRun:
    """Run every selected case, streamed; the card results go to `options.card_results`, if set."""
    with collector_policy(options):
        return run_sync(_run_harness(options))
