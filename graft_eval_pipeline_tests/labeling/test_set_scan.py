"""`scan_set`: one read of a set serves every step before the harness, until a case file changes.

Within a process and, through the set's `cache/set-scan.json`, in the next process too (the next
materialization of an unchanged set reads no case before the harness).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from graft_eval_pipeline.evalset.labeling import agreement, scan_set
from graft_eval_pipeline.evalset.labeling import set_scan as set_scan_module
from graft_eval_pipeline.evalset.sets import (
    SET_SCAN_FILE,
    CaseSet,
    CaseTally,
    iter_cases,
    needs_adjudication,
    open_set,
    write_case,
)
from graft_eval_pipeline.evalset.sets.store import read_case
from graft_eval_pipeline_tests.builders import copy_synthetic, make_label, make_pilot_case, make_pilot_set


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    reads: list[int] = []

    def counted(cs: CaseSet) -> object:
        reads.append(1)
        return iter_cases(cs)

    monkeypatch.setattr(set_scan_module, "iter_cases", counted)
    return reads


def _new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a new `dagster asset materialize` process starts with: no answer in memory."""
    monkeypatch.setattr(set_scan_module, "_last", None)


def test_one_read_serves_until_a_case_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cs = open_set(copy_synthetic(tmp_path), None)
    reads = _count_reads(monkeypatch)
    first = scan_set(cs)
    assert scan_set(open_set(cs.dir, None)) is first and reads == [1]  # the same files: no second read

    tally = CaseTally()
    for case in iter_cases(cs):
        tally.add(case)
    assert (first.counts, first.case_set_hash) == (tally.counts(), tally.case_set_hash())
    assert first.agreement == agreement(iter_cases(cs))
    assert list(first.needs_adjudication) == [c.id for c in iter_cases(cs) if needs_adjudication(c)]

    case = read_case(cs, "syn-001-docs-typo")  # a second labeler disagrees: the set changed
    write_case(cs, case.model_copy(update={"labels": [*case.labels, make_label("zoe", risk="sensitive")]}))
    second = scan_set(cs)
    assert reads == [1, 1]
    assert second.counts.needs_adjudication == first.counts.needs_adjudication + 1
    assert second.case_set_hash != first.case_set_hash
    assert "syn-001-docs-typo" in second.needs_adjudication


def test_the_next_process_reads_the_stored_scan_until_a_case_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cs = open_set(copy_synthetic(tmp_path), None)
    reads = _count_reads(monkeypatch)
    _new_process(monkeypatch)
    first = scan_set(cs)
    assert (cs.dir / SET_SCAN_FILE).is_file() and reads == [1]
    _new_process(monkeypatch)
    again = scan_set(open_set(cs.dir, None))
    assert reads == [1]  # no case read: the stored scan holds for these files
    assert again == first

    case = read_case(cs, "syn-001-docs-typo")
    write_case(cs, case.model_copy(update={"labels": [*case.labels, make_label("zoe", risk="sensitive")]}))
    _new_process(monkeypatch)
    changed = scan_set(cs)
    assert reads == [1, 1] and changed.case_set_hash != first.case_set_hash
    _new_process(monkeypatch)
    assert scan_set(cs) == changed and reads == [1, 1]  # stored again for the new listing


@pytest.mark.parametrize(
    "damage", [b"", b"{", b'{"listing": 1}', b"\xff\xfe", b"[" * 10_000, b'{"counts": 1e999}']
)
def test_a_damaged_stored_scan_is_read_past_and_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: bytes
) -> None:
    cs = open_set(copy_synthetic(tmp_path), None)
    reads = _count_reads(monkeypatch)
    _new_process(monkeypatch)
    first = scan_set(cs)
    (cs.dir / SET_SCAN_FILE).write_bytes(damage)
    _new_process(monkeypatch)
    assert scan_set(cs) == first and reads == [1, 1]  # scanned again, never trusted
    _new_process(monkeypatch)
    assert scan_set(cs) == first and reads == [1, 1]  # and the good answer is stored again


def test_a_pilot_sets_stored_scan_is_sealed_and_an_older_copy_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cs = make_pilot_set(tmp_path / "pilot-acme")
    for number in (1, 2, 3):
        write_case(cs, make_pilot_case(pr_number=number, labels=[make_label("alice")]))
    reads = _count_reads(monkeypatch)
    _new_process(monkeypatch)
    first = scan_set(cs)
    sealed = cs.dir / f"{SET_SCAN_FILE}.enc"
    assert sealed.is_file() and not (cs.dir / SET_SCAN_FILE).exists()
    assert b"alice" not in sealed.read_bytes()
    older = sealed.read_bytes()

    write_case(cs, make_pilot_case(pr_number=4, labels=[make_label("alice")]))
    _new_process(monkeypatch)
    second = scan_set(cs)
    assert second.counts.cases == first.counts.cases + 1 and reads == [1, 1]
    # The older sealed scan put back: the journal refuses it, so the set is scanned again. (It
    # would not hold for these files anyway; the refusal is what a rolled-back file gets.)
    sealed.write_bytes(older)
    _new_process(monkeypatch)
    assert scan_set(cs) == second and reads == [1, 1, 1]


def test_scans_beside_a_writer_never_keep_a_stale_answer(tmp_path: Path) -> None:
    # A label import rewriting cases while other steps scan: whatever each scan saw, once the
    # writes end the answer (in memory and stored) is the set as it is.
    cs = open_set(copy_synthetic(tmp_path), None)
    case = read_case(cs, "syn-001-docs-typo")
    done = threading.Event()

    def write() -> None:
        for n in range(30):
            label = make_label(f"labeler{n}", risk=("trivial", "logic", "sensitive")[n % 3])
            write_case(cs, case.model_copy(update={"labels": [*case.labels, label]}))
        done.set()

    failures: list[BaseException] = []

    def scan() -> None:
        while not done.is_set():
            set_scan_module._last = None
            try:
                scan_set(open_set(cs.dir, None))
            except BaseException as err:  # a scan must not fail on a write in progress
                failures.append(err)
                return

    threads = [threading.Thread(target=write), threading.Thread(target=scan), threading.Thread(target=scan)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    tally = CaseTally()
    for c in iter_cases(cs):
        tally.add(c)
    set_scan_module._last = None
    assert scan_set(cs).case_set_hash == tally.case_set_hash()
    set_scan_module._last = None
    assert scan_set(cs).agreement == agreement(iter_cases(cs))
