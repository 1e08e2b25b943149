"""Progress of a run: a line per finished case (the CLI, on stderr), or with `ProgressEvery` a
summary every N cases or seconds plus the failed cases (Dagster, where each line is an event in
its database: one per case made a 5,000-case run ten times slower there than on the CLI).

Lines hold ids, classes, status and failure codes only (E8).
"""

from __future__ import annotations

from graft_eval_pipeline.card.result import CardResult
from graft_eval_pipeline.evalset.run.options import RunOptions, progress_line

SUMMARY_PARTS = 10  # default summary step: a tenth of the run


class CaseProgress:
    """Told about each finished case; writes to `options.progress` (nothing when it is None)."""

    def __init__(self, options: RunOptions, total: int) -> None:
        self.sink = options.progress
        self.every = options.progress_every
        self.now_ms = options.now_ms
        self.total = total
        self.step = max(1, -(-total // SUMMARY_PARTS))
        if self.every is not None and self.every.cases is not None:
            self.step = max(1, self.every.cases)
        self.done = self.unavailable = self.skipped = self.cached = self.failures_shown = 0
        self.started_ms = self.last_ms = self.now_ms()

    def case(
        self,
        case_id: str,
        result: CardResult | None,
        *,
        cached: bool = False,
        floor: str = "",
        skipped: str = "budget",
    ) -> None:
        """One finished case: `result` None means it was skipped (its floor class and why given)."""
        if self.sink is None:
            return
        if self.every is None:
            if result is None:
                self.sink(f"{case_id} floor {floor} skipped ({skipped})")
            else:
                self.sink(progress_line(case_id, result, cached=cached))
            return
        self.done += 1
        self.cached += cached
        if result is None:
            self.skipped += 1
        elif result.status == "unavailable":
            self.unavailable += 1
            if self.failures_shown < self.every.max_failures:
                self.failures_shown += 1
                more = (
                    " (further failures are only counted)"
                    if self.failures_shown == self.every.max_failures
                    else ""
                )
                self.sink(progress_line(case_id, result, cached=cached) + more)
        now = self.now_ms()
        if self.done < self.total and (
            self.done % self.step == 0 or now - self.last_ms >= self.every.seconds * 1000
        ):
            self.last_ms = now
            self.sink(self.summary(now))

    def summary(self, now_ms: int) -> str:
        elapsed_s = max(now_ms - self.started_ms, 1) / 1000
        rate = self.done / elapsed_s
        left = (
            f", about {(self.total - self.done) / rate:.0f} s left" if rate and self.done < self.total else ""
        )
        share = 100 * self.done / self.total if self.total else 100
        return (
            f"progress: {self.done} of {self.total} cases ({share:.0f} %), {self.unavailable} unavailable, "
            f"{self.skipped} skipped, {self.cached} cached; {rate:.0f} cases/s{left}"
        )

    def finish(self) -> None:
        """The closing summary (summary mode only)."""
        if self.sink is not None and self.every is not None:
            self.sink(self.summary(self.now_ms()).replace("progress:", "done:", 1))
