"""The case pool: at most N cases in flight, and the event loop around it.

Each case is read only when a lane is free and handed on as it ends.

Shared by fake and live runs; it knows nothing of models or budgets.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

from graft_eval_pipeline.evalset.sets import EvalCase, EvalError, GraftEvalError

T = TypeVar("T")


class HasId(Protocol):
    @property
    def id(self) -> str: ...


C = TypeVar("C", bound=HasId)


@dataclass(frozen=True, slots=True)
class TrialCase:
    """One run of a case (--trials N runs each case N times; trial 0 is the usual run)."""

    case: EvalCase
    trial: int

    @property
    def id(self) -> str:
        return self.case.id


def trial_items(cases: Iterable[EvalCase], trials: int) -> Iterator[TrialCase]:
    """Each case's trials one after another, the case read once."""
    for case in cases:
        for trial in range(trials):
            yield TrialCase(case, trial)


async def run_pool(
    cases: list[EvalCase],
    run_one: Callable[[EvalCase], Awaitable[T]],
    concurrency: int,
    on_done: Callable[[EvalCase, T], None],
) -> list[T]:
    """At most `concurrency` cases in flight; results in case order (held: small runs, tests)."""
    results: list[T | None] = [None] * len(cases)

    def keep(index: int, case: EvalCase, result: T) -> None:
        results[index] = result
        on_done(case, result)

    await stream_pool(cases, run_one, concurrency, keep)
    return cast(list[T], results)  # every slot is filled once the pool ends without an error


async def stream_pool(
    cases: Iterable[C],
    run_one: Callable[[C], Awaitable[T]],
    concurrency: int,
    on_done: Callable[[int, C, T], None],
) -> int:
    """Run at most `concurrency` cases in flight, handing each to `on_done` as it ends.

    Each is taken from `cases` only when a lane is free and handed to `on_done(index, case,
    result)`; nothing is kept. Returns the count.

    `cases` may be a lazy reader: a case it cannot read raises when it is reached. An error of
    this tool (`GraftEvalError`: a bad cache entry, a failed write) stops the pool as it is; any
    other exception from one case is a bug (LLM failures are results): the pool stops and the
    error names the case id, never its content.
    """
    pending = enumerate(cases)  # one shared iterator: each case is taken once, when a lane is free
    count = 0

    async def worker() -> None:
        nonlocal count
        for index, case in pending:
            try:
                result = await run_one(case)
            except GraftEvalError:
                raise  # already says what is wrong and how to fix it (a bad cache entry, a failed write)
            except Exception as exc:
                raise EvalError(
                    f"case {case.id}: the card engine raised {type(exc).__name__}; "
                    "this is a bug, not an LLM failure (run aborted)"
                ) from exc
            count += 1
            on_done(index, case, result)

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(concurrency, 1)):
                group.create_task(worker())
    except BaseExceptionGroup as errors:
        first = errors.exceptions[0]  # the case reader's own error (a bad case, a read failure) too
        raise first if isinstance(first, GraftEvalError) or len(errors.exceptions) == 1 else errors from None
    return count


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


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """asyncio.run, returning through a box.

    asyncio formats its finished task's result on the way out, and a whole run's repr costs seconds
    on a large set.
    """
    box: list[T] = []

    async def main() -> None:
        box.append(await coroutine)

    asyncio.run(main())
    return box[0]
