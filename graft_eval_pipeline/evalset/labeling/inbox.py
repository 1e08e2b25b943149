"""Labels from files (spec 7): `label --apply`, assign-double, and the labels-inbox import.

Each file is validated whole against the cases before anything is written. Every write re-reads
its case just before writing it and applies the change to that fresh copy, so a label saved
meanwhile by a `label` session or the nightly `label_import` is kept. Results and errors name
files, handles, case ids and counts only.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from graft_eval_pipeline.card import CamelModel
from graft_eval_pipeline.evalset.labeling.labels import apply_labels, choose_double, with_label, with_tag
from graft_eval_pipeline.evalset.labeling.set_scan import scan_set
from graft_eval_pipeline.evalset.sets import (
    DOUBLE_LABEL_TAG,
    IMPORTED_DIR,
    INBOX_DIR,
    CaseSet,
    EvalCase,
    EvalError,
    LabelSet,
    describe_validation_error,
    gold,
    load_json,
    needs_adjudication,
    read_case,
    read_cases,
    read_limited,
    read_private,
    to_terminal_safe,
    validate,
    write_case,
    write_private,
)


class InboxFile(CamelModel):
    """A file dropped into `<set>/labels-inbox/`: the --apply format plus the labeler's handle."""

    labeler: str
    labels: dict[str, Any]


class ImportResult(CamelModel):
    """What `import_label_inbox` did: file names, handles, ids and counts only."""

    imported_files: list[str]
    labels_by_labeler: dict[str, int]
    bad_files: dict[str, str]
    case_count: int
    gold_count: int
    needs_adjudication: list[str]


def parse_json_object(text: str | bytes, where: str) -> dict[str, Any]:
    data = load_json(text, where)
    if not isinstance(data, dict):
        raise EvalError(f"{where}: expected a JSON object keyed by case id")
    return data


def parse_inbox_file(text: str | bytes, where: str) -> InboxFile:
    # the labels are checked (surrogates too) when applied, naming the case and field
    return validate(parse_json_object(text, where), where, InboxFile, surrogates=False)


def apply_label_file(cs: CaseSet, path: Path, *, handle: str, now: datetime) -> list[str]:
    """`label --apply`: validate the whole file against the set, then write; returns the case ids."""
    where = path.name
    try:
        data = read_limited(path, where)
    except OSError as err:
        raise EvalError(f"could not read {path}: {err.strerror or err}") from None
    entries = parse_json_object(data, where)
    labels = apply_labels({c.id: c for c in read_cases(cs)}, entries, labeler=handle, now=now, where=where)
    try:
        return [c.id for c in write_labels(cs, labels)]
    except LabelWriteStopped as err:
        raise EvalError(
            f"{where}: {err}; run the same `label --apply` again to finish (it replaces your own "
            "label sets, so nothing is doubled)"
        ) from None


class LabelWriteStopped(EvalError):
    """A label write failed part way: the sets before it are written (each case file is whole)."""


def write_labels(cs: CaseSet, labels: Mapping[str, LabelSet]) -> list[EvalCase]:
    """Write each label set onto a fresh copy of its case, so a label saved meanwhile is kept.

    The copy is read just before the write, so a label saved meanwhile (a `label` session, the
    nightly import) is kept; returns the cases as written.

    Each case is written atomically; a failure part way raises `LabelWriteStopped` saying how many
    sets were written. Writing the same sets again finishes the job: a labeler's set replaces
    their own.
    """
    written: list[EvalCase] = []
    for case_id, label in labels.items():
        try:
            fresh = read_case(cs, case_id)
            try:
                case = with_label(fresh, label)
            except ValueError as err:
                raise EvalError(describe_validation_error(err, f"case {case_id}")) from None
            write_case(cs, case)
        except EvalError as err:
            raise LabelWriteStopped(
                f"stopped at case {case_id} after writing {len(written)} of {len(labels)} label set(s) "
                f"({err})"
            ) from None
        written.append(case)
    return written


def assign_double(cs: CaseSet, *, fraction: float, minimum: int, seed: int) -> list[str]:
    """Tag the chosen cases with double-label; returns the ids newly tagged (none on a rerun)."""
    tagged: list[str] = []
    for case_id in choose_double(read_cases(cs), fraction=fraction, minimum=minimum, seed=seed):
        fresh = read_case(cs, case_id)  # re-read: a label may have been saved since
        if DOUBLE_LABEL_TAG in fresh.tags:
            continue
        try:
            write_case(cs, with_tag(fresh, DOUBLE_LABEL_TAG))
        except ValueError as err:
            raise EvalError(describe_validation_error(err, f"case {case_id}")) from None
        tagged.append(case_id)
    return tagged


def _inbox_entries(cs: CaseSet) -> tuple[list[str], dict[str, str]]:
    """(label files to import, misplaced files with the reason) in labels-inbox/, by name."""
    inbox = cs.dir / INBOX_DIR
    if not inbox.is_dir():
        return [], {}
    good: list[str] = []
    bad: dict[str, str] = {}
    own, other = (".json.enc", ".json") if cs.is_pilot else (".json", ".json.enc")
    for entry in sorted(inbox.iterdir()):
        if not entry.is_file() or entry.name.startswith("."):
            continue
        if entry.name.endswith(own):
            good.append(entry.name)
        elif entry.name.endswith(other):
            kind = "plaintext" if cs.is_pilot else "sealed"
            bad[entry.name] = f"a {kind} label file does not belong in {cs.meta.kind} set {cs.set_id}"
    return good, bad


def import_label_inbox(cs: CaseSet, *, now: datetime) -> ImportResult:
    """Merge label files from `<set>/labels-inbox/` into the cases, then move them to imported/.

    Each file is validated whole against the current cases before any case is written; a bad
    file (unreadable, damaged, not UTF-8, hostile JSON, wrong answers) is reported by its
    terminal-safe name and left in place, and never fails the import. Files are applied in name
    order.
    """
    names, bad = _inbox_entries(cs)
    if not names:  # nothing to merge: the set's counts need one streamed read, shared by the run
        scan = scan_set(cs)
        return ImportResult(
            imported_files=[],
            labels_by_labeler={},
            bad_files={to_terminal_safe(name): to_terminal_safe(why) for name, why in sorted(bad.items())},
            case_count=scan.counts.cases,
            gold_count=scan.counts.gold,
            needs_adjudication=list(scan.needs_adjudication),
        )
    cases = {c.id: c for c in read_cases(cs)}
    imported: list[str] = []
    by_labeler: dict[str, int] = {}
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    for name in names:
        rel = f"{INBOX_DIR}/{name.removesuffix('.enc')}"
        where = to_terminal_safe(name)
        try:
            try:
                text = read_private(cs, rel)
            except OSError as err:  # unreadable: named and left in place like any other bad file
                raise EvalError(f"{where}: could not read it ({err.strerror or err})") from None
            if text is None:  # removed since the listing
                continue
            parsed = parse_inbox_file(text, where)
            labels = apply_labels(cases, parsed.labels, labeler=parsed.labeler, now=now, where=where)
            written = write_labels(cs, labels)
        except EvalError as err:
            bad[name] = str(err)
            continue
        cases.update((c.id, c) for c in written)
        write_private(cs, f"{IMPORTED_DIR}/{stamp}-{Path(rel).name}", text)
        (cs.dir / INBOX_DIR / name).unlink()
        imported.append(name)
        by_labeler[parsed.labeler] = by_labeler.get(parsed.labeler, 0) + len(written)
    return ImportResult(
        imported_files=imported,
        labels_by_labeler=dict(sorted(by_labeler.items())),
        bad_files={to_terminal_safe(name): to_terminal_safe(why) for name, why in sorted(bad.items())},
        case_count=len(cases),
        gold_count=sum(gold(c) is not None for c in cases.values()),
        needs_adjudication=sorted(c.id for c in cases.values() if needs_adjudication(c)),
    )
