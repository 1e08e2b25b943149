"""How a live run fills its lanes: the longest cases first, cache entries written off the lane.

No network: the client is `FakeLive`. The overlap tests hold the first case's cache write until
the next case has called, so they fail (by timeout) if the write held the lane.
"""

from __future__ import annotations

import asyncio
import re
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from graft_eval_pipeline.card.llm import LlmReply, LlmRequest
from graft_eval_pipeline.card.options import Models
from graft_eval_pipeline.evalset.evaluate import run_eval
from graft_eval_pipeline.evalset.run import cache as cache_module
from graft_eval_pipeline.evalset.run import live as live_module
from graft_eval_pipeline.evalset.run.cache import CacheEntry
from graft_eval_pipeline.evalset.run.harness import fake_result
from graft_eval_pipeline.evalset.sets.errors import EvalError
from graft_eval_pipeline.evalset.sets.store import CaseSet, write_case
from graft_eval_pipeline_tests.builders import (
    make_case,
    make_file,
    make_inputs,
    make_label,
    make_synthetic_set,
)
from graft_eval_pipeline_tests.live_fakes import Factory, FakeLive, default_answer, live_options, live_set

PR_NUMBER = re.compile(r'<pull_request number="(\d+)"')


def pr_of(request: LlmRequest) -> int:
    found = PR_NUMBER.search(request.user)
    assert found is not None
    return int(found.group(1))


def mixed_set(root: Path) -> CaseSet:
    """Cases 101-105 in id order: sensitive, trivial, too large, sensitive, trivial."""
    cs = make_synthetic_set(root / "mixed", set_id="mixed")
    workflow = [make_file(".github/workflows/ci.yml")]
    shapes: list[dict[str, Any]] = [
        {"files": workflow},
        {},
        {"too_large": True},
        {"files": workflow},
        {},
    ]
    for i, shape in enumerate(shapes):
        inputs = make_inputs(pr={"number": 101 + i, "title": f"change {i}"}, **shape)
        write_case(cs, make_case(f"syn-{900 + i:03d}-mixed", inputs=inputs, labels=[make_label()]))
    return cs


def test_a_live_run_starts_the_cases_that_can_make_the_most_calls_first(tmp_path: Path) -> None:
    cs = mixed_set(tmp_path)
    client = FakeLive()
    report = run_eval(live_options(cs, Factory(client), concurrency=1))
    first_calls = []
    for request in client.requests:
        if request.purpose in ("writer", "writerEscalated") and pr_of(request) not in first_calls:
            first_calls.append(pr_of(request))
    # the trivial floors (fast writer, maybe escalation, verifier) first, then the sensitive ones,
    # each group in case order; the too-large case makes no call
    assert first_calls == [102, 105, 101, 104]
    assert [r.id for r in report.cases] == [f"syn-{900 + i:03d}-mixed" for i in range(5)]
    assert [r.floor for r in report.cases] == ["sensitive", "trivial", "trivial", "sensitive", "trivial"]
    assert report.cases[2].failure_reason == "too_large" and report.cases[2].usage.calls == 0


def test_cached_cases_start_after_every_case_that_calls(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 4)
    run_eval(live_options(cs, Factory(FakeLive())))  # every case cached
    for path in sorted((cs.dir / "cache").iterdir())[:2]:
        path.unlink()  # two cases (whichever their keys name) call again
    events: list[str] = []
    read_entry = cache_module.read_entry

    def tracked(set_: CaseSet, key: str) -> CacheEntry | None:
        events.append("read")
        return read_entry(set_, key)

    def answer(request: LlmRequest) -> LlmReply:
        events.append("call")
        return default_answer(request)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(live_module, "read_entry", tracked)
        report = run_eval(live_options(cs, Factory(FakeLive(answer)), concurrency=1))
    assert [r.cached for r in report.cases].count(True) == 2
    # the plan looks up all four entries, then both calling cases run, then the two cached ones
    assert events == ["read"] * 4 + ["call"] * 4 + ["read"] * 2


def test_the_next_case_calls_while_the_last_cache_entry_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Concurrency 1: case 2's first call happens while case 1's entry is still being written."""
    cs = live_set(tmp_path, 2)
    second_called = threading.Event()
    waited: list[bool] = []
    write_entry = cache_module.write_entry

    def slow_write(set_: CaseSet, entry: CacheEntry) -> None:
        if not waited:  # the first entry waits for the second case's first call
            waited.append(second_called.wait(timeout=10))
        write_entry(set_, entry)

    def answer(request: LlmRequest) -> LlmReply:
        if request.purpose == "writer" and pr_of(request) == 102:
            second_called.set()
        return default_answer(request)

    monkeypatch.setattr(cache_module, "write_entry", slow_write)
    report = run_eval(live_options(cs, Factory(FakeLive(answer)), concurrency=1))
    assert waited == [True]  # not a timeout: the lane did not wait for the write
    assert len(list((cs.dir / "cache").iterdir())) == 2  # and every entry is written before the run ends
    assert not any(r.cached for r in report.cases)


def test_a_cache_write_that_fails_aborts_naming_the_case_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cs = live_set(tmp_path, 3)

    def full_disk(_set: CaseSet, _entry: CacheEntry) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache_module, "write_entry", full_disk)
    with pytest.raises(EvalError) as err:
        run_eval(live_options(cs, Factory(FakeLive()), concurrency=1))
    message = str(err.value)
    assert re.fullmatch(
        r"case syn-9\d\d-live: its cache entry could not be written \(OSError\): check that the folder "
        r"of set live-demo is writable and has room",
        message,
    )
    assert err.value.exit_code == 2 and "\n" not in message and "GOALTEXT" not in message


def test_cache_writes_wait_for_room_and_drain_raises_a_failed_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At most `limit` writes pending: a second put waits while the first write is held."""
    cs = live_set(tmp_path, 0)
    release = threading.Event()
    started: list[str] = []

    def held_write(_set: CaseSet, entry: CacheEntry) -> None:
        started.append(entry.key)
        if entry.key == "first":
            assert release.wait(timeout=10)
        if entry.key == "broken":
            raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cache_module, "write_entry", held_write)
    card = fake_result(make_case(), Models(), timeout_ms=1000)
    entry = CacheEntry(key="first", created_at=datetime.now(UTC), cost_usd=None, result=card)

    async def scenario() -> tuple[bool, bool]:
        writes = cache_module.CacheWrites(cs, limit=1)
        await writes.put("syn-1", entry)
        second = asyncio.ensure_future(writes.put("syn-2", entry.model_copy(update={"key": "broken"})))
        await asyncio.sleep(0.05)
        waiting = not second.done()  # no room while the first write is held
        release.set()
        await second
        with pytest.raises(
            EvalError, match=r"^case syn-2: its cache entry could not be written \(PermissionError\)"
        ):
            await writes.drain()
        quiet = cache_module.CacheWrites(cs, limit=1)
        await quiet.put("syn-3", entry.model_copy(update={"key": "broken"}))
        await quiet.drain(quiet=True)  # the run is already failing: its own error comes first
        return waiting, started == ["first", "broken", "broken"]

    assert asyncio.run(scenario()) == (True, True)
