"""One read of a whole set for what the steps before the harness need to know of it.

That is the label counts, the set hash, the cases awaiting adjudication and the labelers'
agreement.

In Dagster the label import, the agreement and the loaded set each described the whole set,
and each read and validated every case again: with the harness's own read, a 5,000-case set was
read four times per materialization. `scan_set` reads it once and keeps the answer, keyed by a
listing of the set's case files (name, size, modification time, inode: a case written again,
atomically, has a new inode): for the process (so a later step of the same run, in the
in-process executor, gets it for a directory listing), and in the set's `cache/set-scan.json`
(sealed in a pilot set), so that the next materialization of an unchanged set (the nightly
re-run after a prompt change) reads no case before the harness, whose own read is then the only
one. Any change to a case file (a label import, an export, a hand edit) makes the next call read
again. Only ids, counts and label data are kept, never a case's inputs.

The stored answer is a cache: one that cannot be opened or parsed, or that belongs to another
listing, is read past (the set is scanned and the file written again), never trusted. In a
pilot set it is sealed like every other file, so no one without the key can write one the tool
accepts, and the journal refuses an older copy put back in place.
"""

from __future__ import annotations

import hashlib
import os
from contextlib import suppress
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from graft_eval_pipeline.evalset.labeling.agreement import AgreementReport, AgreementTally
from graft_eval_pipeline.evalset.sets import (
    CASES_DIR,
    SET_FILE,
    SET_SCAN_FILE,
    CaseSet,
    CaseTally,
    EvalError,
    LabelCounts,
    iter_cases,
    needs_adjudication,
    parse_json,
    read_private,
    write_private,
)

_Listing = tuple[tuple[str, int, int, int], ...]


@dataclass(frozen=True)
class SetScan:
    counts: LabelCounts
    case_set_hash: str
    needs_adjudication: tuple[str, ...]
    """Ids, in id order."""
    agreement: AgreementReport


class _Stored(BaseModel):
    """`cache/set-scan.json`: a scan and the listing it was made from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    listing: list[tuple[str, int, int, int]]
    counts: tuple[int, int, int, int]
    case_set_hash: str
    needs_adjudication: list[str]
    agreement: AgreementReport


_last: tuple[tuple[str, str, _Listing], SetScan] | None = None


def _listing(cs: CaseSet) -> _Listing:
    """Name, size, time and inode of set.json and of every file in cases/.

    Left out: a write's temporary file (`.<name>.<random>.tmp`, renamed over its case when done,
    which changes that case's entry) and a file gone between the folder's listing and its stat (a
    temporary file renamed, a case removed): a scan beside a writer must not fail on either.
    """
    entries = [(SET_FILE, os.stat(cs.dir / SET_FILE))]
    with os.scandir(cs.dir / CASES_DIR) as found:
        for entry in found:
            if entry.name.startswith("."):
                continue
            with suppress(FileNotFoundError):
                entries.append((entry.name, entry.stat()))
    return tuple(sorted((name, st.st_size, st.st_mtime_ns, st.st_ino) for name, st in entries))


def _stored(cs: CaseSet, listing: _Listing) -> SetScan | None:
    """The scan stored in the set for exactly this listing, or None (absent, stale or unreadable)."""
    try:
        text = read_private(cs, SET_SCAN_FILE)
        if text is None:
            return None
        stored = parse_json(text, f"{SET_SCAN_FILE} of set {cs.set_id}", _Stored)
    except (OSError, EvalError):  # unreadable, damaged, another key's, refused by the journal: scan again
        return None
    if tuple(stored.listing) != listing:
        return None
    return SetScan(
        LabelCounts(*stored.counts), stored.case_set_hash, tuple(stored.needs_adjudication), stored.agreement
    )


def _store(cs: CaseSet, listing: _Listing, scan: SetScan) -> None:
    stored = _Stored(
        listing=list(listing),
        counts=tuple(scan.counts),
        case_set_hash=scan.case_set_hash,
        needs_adjudication=list(scan.needs_adjudication),
        agreement=scan.agreement,
    )
    with suppress(OSError, EvalError):  # a cache: the scan stands without it (a read-only set, a purge)
        write_private(cs, SET_SCAN_FILE, stored.model_dump_json())


def scan_set(cs: CaseSet) -> SetScan:
    """The set's counts, hash, adjudication queue and agreement.

    The last answer when no case file changed since (this process's, else the one stored in the
    set); a case that cannot be read raises as `iter_cases` does.
    """
    global _last
    key = hashlib.sha256(cs.key).hexdigest() if cs.key is not None else ""
    listing = _listing(cs)  # before the read: a case written during it makes the answer stale
    memo_key = (str(cs.dir.resolve()), key, listing)
    if _last is not None and _last[0] == memo_key:
        return _last[1]
    scan = _stored(cs, listing)
    if scan is None:
        tally, labels, waiting = CaseTally(), AgreementTally(), []
        for case in iter_cases(cs):
            tally.add(case)
            labels.add(case)
            if needs_adjudication(case):
                waiting.append(case.id)
        scan = SetScan(tally.counts(), tally.case_set_hash(), tuple(waiting), labels.report())
        _store(cs, listing, scan)
    _last = (memo_key, scan)
    return scan
