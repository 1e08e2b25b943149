"""One read of a whole set for what the steps before the harness need to know of it.

That is the label counts, the set hash, the cases awaiting adjudication and the labelers'
agreement.

In Dagster the label import, the agreement and the loaded set each described the whole set,
and each read and validated every case again: with the harness's own read, a 5,000-case set was
read four times per materialization. `scan_set` reads it once and keeps the last answer for
the process, keyed by the set's folder and key and by a listing of its case files (name, size,
modification time, inode: a case written again, atomically, has a new inode), so a later step
of the same run (the in-process executor) gets it for a directory listing, and any change to a
case file (a label import) makes the next call read again. Only ids, counts and label data are
kept, never a case's inputs.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from graft_eval_pipeline.evalset.labeling.agreement import AgreementReport, AgreementTally
from graft_eval_pipeline.evalset.sets import (
    CASES_DIR,
    SET_FILE,
    CaseSet,
    CaseTally,
    LabelCounts,
    iter_cases,
    needs_adjudication,
)

_Listing = tuple[tuple[str, int, int, int], ...]


@dataclass(frozen=True)
class SetScan:
    counts: LabelCounts
    case_set_hash: str
    needs_adjudication: tuple[str, ...]
    """Ids, in id order."""
    agreement: AgreementReport


_last: tuple[tuple[str, str, _Listing], SetScan] | None = None


def _listing(cs: CaseSet) -> _Listing:
    entries = [(SET_FILE, os.stat(cs.dir / SET_FILE))]
    with os.scandir(cs.dir / CASES_DIR) as found:
        entries += [(entry.name, entry.stat()) for entry in found]
    return tuple(sorted((name, st.st_size, st.st_mtime_ns, st.st_ino) for name, st in entries))


def scan_set(cs: CaseSet) -> SetScan:
    """The set's counts, hash, adjudication queue and agreement.

    The last answer when no case file changed since; a case that cannot be read raises as
    `iter_cases` does.
    """
    global _last
    key = hashlib.sha256(cs.key).hexdigest() if cs.key is not None else ""
    memo_key = (str(cs.dir.resolve()), key, _listing(cs))
    if _last is not None and _last[0] == memo_key:
        return _last[1]
    tally, labels, waiting = CaseTally(), AgreementTally(), []
    for case in iter_cases(cs):
        tally.add(case)
        labels.add(case)
        if needs_adjudication(case):
            waiting.append(case.id)
    scan = SetScan(tally.counts(), tally.case_set_hash(), tuple(waiting), labels.report())
    _last = (memo_key, scan)
    return scan
