"""One writer per set at a time: the hold file `<set>/.hold.json` names who writes, and everyone else waits.

Why: the schedule, the prompt-change sensor, people in the UI and `graft-eval` on a shell all
write into the same set folders (cases, cache, assets/, runs/). Two writers at once made one
run's report out of the other's harness output. Every command that writes into a set and every
Dagster step of a set takes the hold first; a second writer waits (printing one line that names
the holder), or with `--no-wait` exits 3.

The hold is a small JSON file created with `link(2)`, which either makes the whole file or fails
because one exists, so two writers can never both create it. It names its holder: what (a
command, or a Dagster run id), host, pid, the pid's start time (so a reused pid is not taken for
the holder) and since when. A hold whose process is gone on this host is taken over, with a
warning naming it; the check-and-replace runs under an `flock` on the set folder so two waiters
cannot both take it over. A Dagster run holds the set from its first step to its end: its steps
re-enter the hold by run id, and the hold ends when the instance records the run as finished
(`alive` answers that; the step processes of a multiprocess run come and go in between).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from graft_eval_pipeline.evalset.sets.errors import EvalAbort, EvalError
from graft_eval_pipeline.evalset.sets.paths import HOLD_FILE
from graft_eval_pipeline.evalset.sets.terminal import to_terminal_safe

POLL_S = 0.2  # how often a waiting writer looks again
DAMAGED_GRACE_S = 60.0
HOLD_BUSY = "set_held"  # EvalAbort reason of a --no-wait writer that found the set held


@dataclass(frozen=True)
class Holder:
    """Who holds (or wants) a set: `what` is a command (`graft-eval run`) or `dagster run <id>`."""

    what: str
    host: str
    pid: int
    started: str  # the process's start time as the kernel counts it ("" where unknown)
    since: str  # ISO time the hold was taken
    run_id: str | None = None  # a Dagster run id: the run's steps share one hold

    def describe(self) -> str:
        return to_terminal_safe(f"{self.what} (pid {self.pid} on {self.host}, since {self.since})")


def _process_start(pid: int) -> str:
    """Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); "" if unreadable."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return ""
    return stat.rpartition(")")[2].split()[19] if ")" in stat else ""


def this_process(what: str, *, run_id: str | None = None, pid: int | None = None) -> Holder:
    """A holder for the calling process (or for `pid`, a process on this host that outlives it)."""
    pid = os.getpid() if pid is None else pid
    since = datetime.now(UTC).isoformat(timespec="seconds")
    return Holder(
        what=what, host=socket.gethostname(), pid=pid, started=_process_start(pid), since=since, run_id=run_id
    )


def process_alive(holder: Holder) -> bool | None:
    """True/False for a holder on this host (pid and its start time); None on another host."""
    if holder.host != socket.gethostname():
        return None
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    return not holder.started or _process_start(holder.pid) == holder.started


# `alive(holder)`: is the hold still in force? True, False, or None for "cannot tell" (then the
# writer waits). The default looks at the process; Dagster passes one that asks the instance.
Liveness = Callable[[Holder], bool | None]


def read_holder(set_dir: Path) -> Holder | None:
    """The current holder, or None when the set is free.

    A damaged hold file (a crash while it was made cannot leave one, but a person can) names no one:
    pid 0, dated by its mtime.
    """
    path = Path(set_dir) / HOLD_FILE
    try:
        data = path.read_bytes()
        mtime = path.stat().st_mtime
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise EvalError(f"could not read {path}: {exc.strerror or exc}; check its permissions") from None
    try:
        raw = json.loads(data)
        return Holder(
            what=str(raw["what"]),
            host=str(raw["host"]),
            pid=int(raw["pid"]),
            started=str(raw["started"]),
            since=str(raw["since"]),
            run_id=None if raw.get("runId") is None else str(raw["runId"]),
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        since = datetime.fromtimestamp(mtime, UTC).isoformat(timespec="seconds")
        return Holder(
            what=f"an unknown writer (damaged {HOLD_FILE})", host="?", pid=0, started="", since=since
        )


def _damaged_alive(holder: Holder, now: float) -> bool:
    """A damaged hold counts as held for a minute (a writer may be replacing it), then as dead."""
    return now - datetime.fromisoformat(holder.since).timestamp() < DAMAGED_GRACE_S


def _encode(holder: Holder) -> bytes:
    raw = asdict(holder)
    raw["runId"] = raw.pop("run_id")
    return (json.dumps(raw) + "\n").encode("utf-8")


def _try_create(set_dir: Path, holder: Holder) -> bool:
    """Create the hold file whole, or return False when one exists (link fails on an existing name)."""
    fd, tmp = tempfile.mkstemp(dir=set_dir, prefix=f".{HOLD_FILE}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o600)
            handle.write(_encode(holder))
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, set_dir / HOLD_FILE)
        except FileExistsError:
            return False
        return True
    finally:
        Path(tmp).unlink(missing_ok=True)


@contextlib.contextmanager
def _guard(set_dir: Path) -> Iterator[None]:
    """An exclusive flock on the set folder for the read-decide-replace of a hold.

    No lock file is left behind: a command refused before it writes leaves the set as it was.
    """
    fd = os.open(set_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _is_live(holder: Holder, alive: Liveness) -> bool | None:
    return _damaged_alive(holder, time.time()) if holder.pid == 0 else alive(holder)


@dataclass
class SetHold:
    """A taken hold; `release()` removes the hold file if it is still this holder's."""

    set_dir: Path
    holder: Holder

    def release(self) -> None:
        with contextlib.suppress(FileNotFoundError), _guard(self.set_dir):
            current = read_holder(self.set_dir)
            if current is not None and _same(current, self.holder):
                (self.set_dir / HOLD_FILE).unlink(missing_ok=True)


def _same(a: Holder, b: Holder) -> bool:
    if a.run_id is not None and a.run_id == b.run_id:
        return True
    return (a.host, a.pid, a.started) == (b.host, b.pid, b.started)


def take_hold(
    set_dir: Path,
    holder: Holder,
    *,
    wait: bool = True,
    alive: Liveness = process_alive,
    say: Callable[[str], None] = lambda _line: None,
    set_id: str | None = None,
    poll_s: float = POLL_S,
    sleep: Callable[[float], None] = time.sleep,
) -> SetHold:
    """Hold the set for `holder`, waiting while someone else holds it.

    `say` gets one line each time the holder changes; with `wait=False` a held set raises EvalAbort
    (exit 3).

    A hold of the same Dagster run (same `run_id`) is re-entered. A hold whose holder is gone
    (`alive` says False) is taken over with a warning through `say`.
    """
    set_dir = Path(set_dir)
    name = set_id or set_dir.name
    if not set_dir.is_dir():
        raise EvalError(f"set {name} is no longer in {set_dir} (purged?): nothing was written")
    announced: Holder | None = None
    while True:
        with _guard(set_dir):
            if _try_create(set_dir, holder):
                return SetHold(set_dir, holder)
            current = read_holder(set_dir)
            if current is None:
                continue  # released between the two looks: try again at once
            if holder.run_id is not None and current.run_id == holder.run_id:
                (set_dir / HOLD_FILE).unlink()
                if _try_create(set_dir, holder):
                    return SetHold(set_dir, holder)
                continue
            live = _is_live(current, alive)
            if live is False:
                say(f"set {name}: taking over the hold of {current.describe()}, which has ended")
                (set_dir / HOLD_FILE).unlink()
                continue
        if not wait:
            raise EvalAbort(
                HOLD_BUSY,
                f"set {name} is being written by {current.describe()}: try again when it ends "
                "(without --no-wait, this command waits for it)",
            )
        if announced is None or not _same(announced, current):
            say(f"set {name} is being written by {current.describe()}: waiting for it to end")
            announced = current
        sleep(poll_s)


@contextlib.contextmanager
def holding(
    set_dir: Path,
    holder: Holder,
    *,
    wait: bool = True,
    alive: Liveness = process_alive,
    say: Callable[[str], None] = lambda _line: None,
    set_id: str | None = None,
) -> Iterator[SetHold]:
    """`take_hold` as a context manager: the hold is released when the block ends, however it ends."""
    hold = take_hold(set_dir, holder, wait=wait, alive=alive, say=say, set_id=set_id)
    try:
        yield hold
    finally:
        hold.release()
