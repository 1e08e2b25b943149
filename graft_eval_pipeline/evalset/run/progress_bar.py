"""The run's progress bar on a terminal (rich).

Count, share, rate, ETA and the status counts, with the failed or skipped cases printed above it
(ids and classes only, E8).

rich draws it (Dagster already depends on it; it is typed and keeps lines printed during the
run above the bar). `CaseProgress` feeds it; the CLI builds one only when stderr is a terminal
and closes it whatever happens, so an aborted run leaves no hidden cursor behind.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Column
from rich.text import Text


class RateColumn(ProgressColumn):
    """Finished cases per second (rich's own speed columns speak of bytes)."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("– cases/s" if speed is None else f"{speed:,.0f} cases/s", style="progress.data.speed")


class TerminalBar:
    """A `ProgressBar` (see `RunOptions`) drawn by rich on `console`."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress: Progress | None = None
        self.task: TaskID | None = None

    def start(self, total: int) -> None:
        self.finish()
        keep = Column(no_wrap=True)  # on a narrow terminal the bar shrinks, the numbers stay whole
        self.progress = Progress(
            TextColumn("cases"),
            BarColumn(bar_width=30),
            MofNCompleteColumn(table_column=keep),
            TaskProgressColumn(),
            RateColumn(table_column=keep),
            TextColumn("ETA"),
            TimeRemainingColumn(table_column=keep),
            TextColumn("{task.fields[counts]}", table_column=Column(no_wrap=True, overflow="ellipsis")),
            console=self.console,  # output printed meanwhile (warnings) lands above the bar
        )
        self.task = self.progress.add_task("cases", total=total, counts="")
        self.progress.start()

    def advance(self, done: int, counts: str) -> None:
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, completed=done, counts=counts)

    def note(self, line: str) -> None:
        if self.progress is not None:
            self.progress.console.print(line, markup=False, highlight=False)
        else:
            self.console.print(line, markup=False, highlight=False)

    def finish(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
            self.task = None
