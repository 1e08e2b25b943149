"""Virtual time for the limiter and batch polling tests: no test waits on the real clock.

`VirtualTime.sleep(s)` yields once to the loop and moves the clock to at least now + s, so two
tasks sleeping 2 s at once advance it by 2 s, not 4. `stop_after` makes the n-th sleep raise
`Stopped` (a BaseException, as Ctrl-C is), to stop a run in the middle.
"""

from __future__ import annotations

import asyncio


class Stopped(BaseException):
    """Stands in for the operator's Ctrl-C in the middle of a run."""


class VirtualTime:
    def __init__(self, stop_after: int | None = None) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self.stop_after = stop_after

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        if self.stop_after is not None and len(self.sleeps) >= self.stop_after:
            raise Stopped("stopped in the middle of the run")
        target = self.now + seconds
        await asyncio.sleep(0)
        self.now = max(self.now, target)
