"""`scan_set`: one read of a set serves every step before the harness, until a case file changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from graft_eval_pipeline.evalset.labeling import agreement, scan_set
from graft_eval_pipeline.evalset.labeling import set_scan as set_scan_module
from graft_eval_pipeline.evalset.sets import CaseTally, iter_cases, needs_adjudication, open_set, write_case
from graft_eval_pipeline.evalset.sets.store import read_case
from graft_eval_pipeline_tests.builders import copy_synthetic, make_label


def test_one_read_serves_until_a_case_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cs = open_set(copy_synthetic(tmp_path), None)
    reads: list[int] = []

    def counted(cs_: object) -> object:
        reads.append(1)
        return iter_cases(cs)

    monkeypatch.setattr(set_scan_module, "iter_cases", counted)
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
