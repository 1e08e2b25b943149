"""Progress of a run, in one of three views.

- a line per finished case (the default of `RunOptions.progress`);
- with `ProgressEvery`, a summary every N cases or seconds (none in a run shorter than a second),
  the unavailable, skipped and under-classified cases since the last one listed below it in the
  same message (Dagster, where each message is an event in its database: one per case made a
  5,000-case run ten times slower there than on the CLI; and the CLI when stderr is not a
  terminal);
- with a `ProgressBar`, a bar with count, rate and ETA (the CLI on a terminal), the unavailable,
  skipped and under-classified cases printed above it as they happen.

Lines hold ids, classes, status and failure codes only (E8).
"""

from __future__ import annotations

from graft_eval_pipeline.card import CardResult, RiskClass
from graft_eval_pipeline.evalset.run.options import ProgressEvery, RunOptions, progress_line, under_classified

SUMMARY_PARTS = 10  # default summary step: a tenth of the run


class CaseProgress:
    """Told about each finished case.

    Writes to `options.progress_bar` when there is one, else to `options.progress` (nothing when
    both are None).
    """

    def __init__(self, options: RunOptions, total: int) -> None:
        self.sink = options.progress
        self.bar = options.progress_bar
        self.every = options.progress_every
        self.max_noted = (self.every or ProgressEvery()).max_failures
        self.now_ms = options.now_ms
        self.total = total
        self.step = max(1, -(-total // SUMMARY_PARTS))
        if self.every is not None and self.every.cases is not None:
            self.step = max(1, self.every.cases)
        self.done = self.unavailable = self.skipped = self.cached = self.noted = self.under = 0
        self.held: list[str] = []  # summary mode: the cases noted since the last message
        self.quiet_ms = (self.every or ProgressEvery()).quiet_seconds * 1000
        self.started_ms = self.last_ms = self.now_ms()
        if self.bar is not None:
            self.bar.start(total)

    def case(
        self,
        case_id: str,
        result: CardResult | None,
        *,
        cached: bool = False,
        floor: str = "",
        skipped: str = "budget",
        gold: RiskClass | None = None,
    ) -> None:
        """One finished case.

        `result` None means it was skipped (its floor class and why given); `gold` (the case's
        gold class, if any) marks an under-classified case as it happens.
        """
        if self.sink is None and self.bar is None:
            return
        line = (
            f"{case_id} floor {floor} skipped ({skipped})"
            if result is None
            else progress_line(case_id, result, cached=cached, gold=gold)
        )
        if self.sink is not None and self.every is None and self.bar is None:
            self.sink(line)
            return
        self.done += 1
        self.cached += cached
        self.skipped += result is None
        self.unavailable += result is not None and result.status == "unavailable"
        under = result is not None and under_classified(result, gold)
        self.under += under
        if (result is None or result.status == "unavailable" or under) and self.noted < self.max_noted:
            self.noted += 1
            more = (
                " (further unavailable, skipped or under-classified cases are only counted)"
                if self.noted == self.max_noted
                else ""
            )
            self._note(line + more)
        if self.bar is not None:
            self.bar.advance(self.done, self.counts())
            return
        now = self.now_ms()
        if (
            self.done < self.total
            and now - self.started_ms >= self.quiet_ms
            and (
                self.done % self.step == 0
                or now - self.last_ms >= (self.every or ProgressEvery()).seconds * 1000
            )
        ):
            self.last_ms = now
            self._send(self.summary(now))

    def _note(self, line: str) -> None:
        if self.bar is not None:
            self.bar.note(line)
        elif self.sink is not None:
            self.held.append(line)  # sent with the next summary, or at the end

    def _send(self, summary: str | None) -> None:
        """One message: `summary` first (a collapsed log line shows it), then the cases held since."""
        lines = [*([summary] if summary is not None else []), *self.held]
        self.held = []
        if lines and self.sink is not None:
            self.sink("\n".join(lines))

    def counts(self) -> str:
        under = f"{self.under} under-classified, " if self.under else ""
        return f"{under}{self.unavailable} unavailable, {self.skipped} skipped, {self.cached} cached"

    def summary(self, now_ms: int) -> str:
        elapsed_s = max(now_ms - self.started_ms, 1) / 1000
        rate = self.done / elapsed_s
        seconds_left = (self.total - self.done) / rate if rate and self.done < self.total else 0
        left = f", about {seconds_left:.0f} s left" if seconds_left >= 1 else ""
        share = 100 * self.done / self.total if self.total else 100
        return (
            f"progress: {self.done} of {self.total} cases ({share:.0f} %), {self.counts()}; "
            f"{rate:.0f} cases/s{left}"
        )

    def finish(self) -> None:
        """The closing summary (summary mode), or the bar's end."""
        if self.bar is not None:
            self.bar.finish()
        elif self.sink is not None and self.every is not None:
            now = self.now_ms()
            # A step under a second logs no progress, only the cases held.
            quiet = now - self.started_ms < self.quiet_ms
            self._send(None if quiet else self.summary(now).replace("progress:", "done:", 1))
