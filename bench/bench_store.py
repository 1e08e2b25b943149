"""Store benchmark: seal/open and read throughput on a pilot set, and the rollback journal's cost.

Store throughput: seal/open MB/s and open_set + read-all cases/s on a 1,000-case pilot set, and what
the rollback journal adds: per case read and write, and a fresh process's journal load.

Run: .venv/bin/python bench/bench_store.py   (target: read all 1,000 cases in < 2 s)
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from graft_eval_pipeline.card.models import CardInputs, ChangedFile
from graft_eval_pipeline.evalset.sets import journal, store
from graft_eval_pipeline.evalset.sets.case_schema import EvalCase, FloorConfig, PilotSource, dump_case
from graft_eval_pipeline.evalset.sets.crypto import generate_key, open_envelope, parse_key, seal
from graft_eval_pipeline.evalset.sets.store import (
    accept_current_state,
    create_set,
    open_set,
    read_cases,
    write_case,
)

SET_ID = "pilot-bench"
CASES = 1_000
CASE_BYTES = 20_000
NOW = datetime(2026, 10, 15, tzinfo=UTC)


def make_case(number: int) -> EvalCase:
    """A pilot case of about CASE_BYTES of JSON: two files with fictional patches."""
    line = "+    const total = items.reduce((sum, item) => sum + item.price * item.quantity, 0);\n"
    patch = "@@ -1,1 +1,120 @@\n" + line * (CASE_BYTES // (2 * len(line)))
    files = [
        ChangedFile(path=f"src/cart/total_{n}.ts", status="modified", additions=120, deletions=1, patch=patch)
        for n in range(2)
    ]
    inputs = CardInputs.model_validate(
        {
            "repository_full_name": "fictional-org/shop-demo",
            "pr": {
                "number": number,
                "title": "Cart totals",
                "body": "Bench.",
                "additions": 240,
                "deletions": 2,
                "changed_files": 2,
            },
            "files": files,
        }
    )
    source = PilotSource(
        kind="pilot",
        set_id=SET_ID,
        repository="fictional-org/shop-demo",
        pr_number=number,
        head_sha="a" * 40,
        base_sha="b" * 40,
        merged_at=NOW,
        exported_at=NOW,
        export_tool="graft-eval-export/1",
        author_kind="agent",
        author_kind_reason="trailer",
        agent="bench-agent",
        model=None,
        redactions=[],
    )
    return EvalCase(
        schema_version=1,
        id=f"{SET_ID}--shop-demo-{number}",
        source=source,
        tags=[],
        floor_config=FloorConfig(),
        inputs=inputs,
        labels=[],
    )


@contextlib.contextmanager
def journal_off() -> Iterator[None]:
    """The store as it was without rollback protection: no journal entry, no check on read."""
    off = {
        "snapshot": lambda *_a, **_k: journal.Snapshot("", 0),
        "check": lambda *_a, **_k: None,
        "recording": lambda *_a, **_k: contextlib.nullcontext(),
    }
    saved = {name: getattr(store, name) for name in off}
    for name, stand_in in off.items():
        setattr(store, name, stand_in)
    try:
        yield
    finally:
        for name, real in saved.items():
            setattr(store, name, real)


def best_of(runs: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    key = parse_key(generate_key())
    cases = [make_case(n) for n in range(1, CASES + 1)]
    texts = [dump_case(c) for c in cases]
    megabytes = sum(len(t.encode()) for t in texts) / 1e6

    start = time.perf_counter()
    envelopes = [seal(t, key, f"{SET_ID}/cases/{c.id}.case.enc") for t, c in zip(texts, cases, strict=True)]
    seal_s = time.perf_counter() - start
    start = time.perf_counter()
    for envelope, case in zip(envelopes, cases, strict=True):
        open_envelope(envelope, key, f"{SET_ID}/cases/{case.id}.case.enc")
    open_s = time.perf_counter() - start

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / SET_ID
        cs = create_set(
            folder,
            set_id=SET_ID,
            kind="pilot",
            description="bench",
            consent_ref="bench",
            default_floor_config=None,
            key=key,
            now=NOW,
        )
        start = time.perf_counter()
        for case in cases:
            write_case(cs, case)
        write_s = time.perf_counter() - start
        start = time.perf_counter()
        loaded = read_cases(open_set(folder, key))
        read_s = time.perf_counter() - start
        assert len(loaded) == CASES

        cs = open_set(folder, key)
        with_s = without_s = float("inf")
        for _ in range(5):  # alternated, so a busy machine slows both alike
            with_s = min(with_s, best_of(1, lambda: read_cases(cs)))
            with journal_off():
                without_s = min(without_s, best_of(1, lambda: read_cases(cs)))
        again = cases[: CASES // 4]

        def write_again() -> None:
            for case in again:
                write_case(cs, case)

        with journal_off():
            write_without_s = best_of(3, write_again) / len(again)
        accept_current_state(folder, key)  # the files written without the journal, as current
        write_with_s = best_of(3, write_again) / len(again)
        journal_bytes = (folder / "journal.enc").stat().st_size
        entries = len((folder / "journal.enc").read_bytes().splitlines()) - 1

        def fresh_load() -> None:
            journal._states.clear()
            journal.snapshot(folder, SET_ID, key)

        load_s = best_of(5, fresh_load)

    print(f"{CASES} cases, {megabytes:.1f} MB of case JSON ({megabytes * 1e3 / CASES:.1f} kB each)")
    print(f"seal:                 {megabytes / seal_s:8.1f} MB/s")
    print(f"open:                 {megabytes / open_s:8.1f} MB/s")
    print(f"write_case (atomic):  {CASES / write_s:8.0f} cases/s  ({write_s:.2f} s)")
    print(f"open_set + read all:  {CASES / read_s:8.0f} cases/s  ({read_s:.2f} s, target < 2 s)")
    added = (with_s - without_s) / CASES * 1e6
    print(
        f"journal, per case read: {added:+.1f} us ({with_s / CASES * 1e6:.0f} us with, "
        f"{without_s / CASES * 1e6:.0f} us without; best of 5 read-alls)"
    )
    print(
        f"journal, per case write: {(write_with_s - write_without_s) * 1e3:+.2f} ms "
        f"({write_with_s * 1e3:.2f} ms with, {write_without_s * 1e3:.2f} ms without)"
    )
    print(
        f"journal, fresh process load: {load_s * 1e3:.0f} ms for {entries} entries "
        f"({journal_bytes / 1e6:.2f} MB; {load_s / max(entries, 1) * 1e6:.1f} us an entry)"
    )


if __name__ == "__main__":
    main()
