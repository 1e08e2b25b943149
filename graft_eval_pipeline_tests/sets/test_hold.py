"""The set hold: one writer at a time, a waiting writer told who holds it, dead holders taken over."""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

from graft_eval_pipeline.evalset.sets import (
    EvalAbort,
    Holder,
    holding,
    take_hold,
    this_process,
)
from graft_eval_pipeline.evalset.sets.hold import read_holder
from graft_eval_pipeline.evalset.sets.paths import HOLD_FILE


def _set_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "pilot-acme"
    folder.mkdir(mode=0o700)
    return folder


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_a_hold_names_its_holder_and_goes_on_release(tmp_path: Path) -> None:
    folder = _set_dir(tmp_path)
    me = this_process("graft-eval run")
    hold = take_hold(folder, me)
    on_disk = json.loads((folder / HOLD_FILE).read_text())
    assert on_disk["what"] == "graft-eval run" and on_disk["pid"] == os.getpid()
    assert on_disk["host"] == socket.gethostname() and on_disk["runId"] is None
    assert read_holder(folder) == me
    assert (folder / HOLD_FILE).stat().st_mode & 0o777 == 0o600
    hold.release()
    assert read_holder(folder) is None


def test_no_wait_exits_3_naming_the_holder(tmp_path: Path) -> None:
    folder = _set_dir(tmp_path)
    with holding(folder, this_process("graft-eval rescan --apply")), pytest.raises(EvalAbort) as err:
        take_hold(folder, this_process("graft-eval run"), wait=False, set_id="pilot-acme")
    message = str(err.value)
    assert err.value.exit_code == 3
    assert message.startswith("set pilot-acme is being written by graft-eval rescan --apply (pid ")
    assert f"pid {os.getpid()} on {socket.gethostname()}, since " in message
    assert "\n" not in message


def test_a_second_writer_waits_with_one_line_then_takes_the_hold(tmp_path: Path) -> None:
    folder = _set_dir(tmp_path)
    first = take_hold(folder, this_process("graft-eval run"))
    said: list[str] = []
    polls = []

    def sleep(_s: float) -> None:
        polls.append(1)
        if len(polls) == 3:
            first.release()

    second = take_hold(folder, this_process("dagster run r-2", run_id="r-2"), say=said.append, sleep=sleep)
    assert len(polls) == 3
    assert said == [f"set {folder.name} is being written by {first.holder.describe()}: waiting for it to end"]
    assert read_holder(folder) == second.holder


def test_a_hold_left_by_a_dead_process_is_taken_over_with_a_warning(tmp_path: Path) -> None:
    folder = _set_dir(tmp_path)
    dead = replace(this_process("graft-eval run"), pid=_dead_pid(), started="1")
    assert take_hold(folder, dead)  # as if that process had written it and then been killed
    said: list[str] = []
    mine = take_hold(folder, this_process("graft-eval label --apply"), say=said.append, wait=False)
    assert read_holder(folder) == mine.holder
    assert said == [f"set {folder.name}: taking over the hold of {dead.describe()}, which has ended"]


def test_a_reused_pid_is_not_taken_for_the_holder(tmp_path: Path) -> None:
    """Same host and a live pid, but another start time: the holder is gone and the pid reused."""
    folder = _set_dir(tmp_path)
    take_hold(folder, replace(this_process("graft-eval run"), started="0"))
    said: list[str] = []
    take_hold(folder, this_process("graft-eval run"), say=said.append, wait=False)
    assert said and "which has ended" in said[0]


def test_a_holder_on_another_host_is_waited_for(tmp_path: Path) -> None:
    folder = _set_dir(tmp_path)
    take_hold(folder, replace(this_process("graft-eval run"), host="elsewhere", pid=_dead_pid()))
    with pytest.raises(EvalAbort, match=r"on elsewhere, since"):
        take_hold(folder, this_process("graft-eval run"), wait=False)


def test_the_steps_of_one_dagster_run_share_its_hold(tmp_path: Path) -> None:
    folder = _set_dir(tmp_path)
    step_one = this_process("dagster run r-1", run_id="r-1")
    take_hold(folder, step_one)
    step_two = replace(step_one, pid=_dead_pid())  # a later step of the run, in another process
    assert take_hold(folder, step_two, wait=False).holder == step_two
    with pytest.raises(EvalAbort, match="dagster run r-1"):
        take_hold(folder, this_process("dagster run r-2", run_id="r-2"), wait=False, alive=lambda _h: True)


def test_the_liveness_answer_decides_for_a_run_holder(tmp_path: Path) -> None:
    """Dagster passes an `alive` that asks the instance: a finished run's hold is free."""
    folder = _set_dir(tmp_path)
    take_hold(folder, this_process("dagster run r-1", run_id="r-1"))
    said: list[str] = []
    take_hold(
        folder, this_process("graft-eval run"), wait=False, alive=lambda h: h.run_id != "r-1", say=said.append
    )
    assert "taking over the hold of dagster run r-1" in said[0]


def test_a_damaged_hold_file_is_respected_for_a_minute_then_taken_over(tmp_path: Path) -> None:
    folder = _set_dir(tmp_path)
    (folder / HOLD_FILE).write_text("{not json")
    with pytest.raises(EvalAbort, match=rf"an unknown writer \(damaged {HOLD_FILE}\)"):
        take_hold(folder, this_process("graft-eval run"), wait=False)
    old = time.time() - 120
    os.utime(folder / HOLD_FILE, (old, old))
    said: list[str] = []
    take_hold(folder, this_process("graft-eval run"), wait=False, say=said.append)
    assert "taking over the hold of an unknown writer" in said[0]


def test_a_holder_name_reaches_the_terminal_safely(tmp_path: Path) -> None:
    folder = _set_dir(tmp_path)
    take_hold(folder, replace(this_process("dagster run \x1b[31mred"), host="h\x07"))
    with pytest.raises(EvalAbort) as err:
        take_hold(folder, this_process("graft-eval run"), wait=False, alive=lambda _h: True)
    assert "\x1b" not in str(err.value) and "\x07" not in str(err.value)


def _count_under_hold(folder: str, rounds: int, log: str) -> None:
    """A writer that reads, waits and writes a counter: lost updates show two holders at once."""
    counter = Path(folder) / "counter"
    for _ in range(rounds):
        with holding(Path(folder), this_process("graft-eval run"), alive=lambda h: None if h.pid else False):
            with open(log, "a") as handle:
                handle.write(f"in {os.getpid()}\n")
            value = int(counter.read_text())
            time.sleep(0.002)
            counter.write_text(str(value + 1))
            with open(log, "a") as handle:
                handle.write(f"out {os.getpid()}\n")


def test_overlapping_writers_in_four_processes_never_hold_at_once(tmp_path: Path) -> None:
    folder = _set_dir(tmp_path)
    (folder / "counter").write_text("0")
    log = tmp_path / "log"
    workers = [
        multiprocessing.get_context("fork").Process(
            target=_count_under_hold, args=(str(folder), 10, str(log))
        )
        for _ in range(4)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert (folder / "counter").read_text() == "40"
    lines = log.read_text().splitlines()
    assert len(lines) == 80
    assert all(
        a.startswith("in ") and b == "out " + a[3:] for a, b in zip(lines[::2], lines[1::2], strict=True)
    )
    assert read_holder(folder) is None


def test_holder_round_trips_through_its_file(tmp_path: Path) -> None:
    folder = _set_dir(tmp_path)
    holder = Holder(
        what="dagster run r", host="h", pid=1, started="9", since="2026-12-01T00:00:00+00:00", run_id="r"
    )
    take_hold(folder, holder)
    assert read_holder(folder) == holder
