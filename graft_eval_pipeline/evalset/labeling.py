"""Labelling (spec T10, E17, E25): blind interactive labels, --apply, double labels, adjudication.

Logic is pure (answers → label set → updated case); the sessions do I/O through the store and
injected text streams. The labeler sees the PR as GitHub shows it and nothing else: never the
floor, a card, the scripted model replies, the tags or another labeler's labels. Errors name
case ids and numbers only; only the interactive screens show case content (the human view).
"""

from __future__ import annotations

import json
import math
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, TextIO, TypeVar

from pydantic import Field, StringConstraints, ValidationError

from graft_eval_pipeline.card.models import CamelModel, RiskClass
from graft_eval_pipeline.evalset.case_schema import (
    DOUBLE_LABEL_TAG,
    HANDLE_PATTERN,
    Confidence,
    EvalCase,
    LabelSet,
    ShortText,
    describe_validation_error,
    gold,
    needs_adjudication,
)
from graft_eval_pipeline.evalset.errors import EvalError
from graft_eval_pipeline.evalset.sample import (
    allocate,
    mulberry32,
    path_stratum,
    seeded_shuffle,
    size_stratum,
    stratum_key,
)
from graft_eval_pipeline.evalset.store import (
    CaseSet,
    read_case,
    read_cases,
    read_private,
    write_case,
    write_private,
)
from graft_eval_pipeline.evalset.terminal import render_case, to_terminal_safe

LABELING_GUIDE_VERSION = "lg-1"
INBOX_DIR = "labels-inbox"
IMPORTED_DIR = f"{INBOX_DIR}/imported"
MAX_KEY_CHANGES = 10
MAX_PROBLEMS_SHOWN = 5

T = TypeVar("T")


class LabelAnswers(CamelModel):
    """The labeler's answers for one case: one entry of a `label --apply` file (spec 7)."""

    risk: RiskClass
    out_of_scope: list[str]
    goal: ShortText
    key_behavior_changes: list[ShortText] = Field(max_length=MAX_KEY_CHANGES)
    should_flag: bool
    confidence: Confidence
    notes: Annotated[str, StringConstraints(max_length=2000)]


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


# --- pure logic ------------------------------------------------------------------------------


def check_handle(handle: str) -> str:
    """A labeler handle is a short id; an e-mail address is personal data and is refused."""
    if "@" in handle:
        raise EvalError("the labeler handle looks like an e-mail address: use a short handle such as 'alice'")
    if not re.fullmatch(HANDLE_PATTERN, handle):
        raise EvalError(
            "bad labeler handle: use 1 to 40 lowercase letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return handle


def make_label_set(answers: LabelAnswers, *, labeler: str, now: datetime) -> LabelSet:
    return LabelSet(
        labeler=labeler,
        labeled_at=now,
        guide_version=LABELING_GUIDE_VERSION,
        risk=answers.risk,
        out_of_scope=sorted(set(answers.out_of_scope)),
        goal=answers.goal,
        key_behavior_changes=answers.key_behavior_changes,
        should_flag=answers.should_flag,
        confidence=answers.confidence,
        notes=answers.notes,
    )


def _revalidated(case: EvalCase, **update: Any) -> EvalCase:
    """model_copy skips validation; the cross-field rules (oos paths, unique labelers) must hold."""
    return EvalCase.model_validate(case.model_copy(update=update).to_json_dict())


def with_label(case: EvalCase, label: LabelSet) -> EvalCase:
    """Replace the labeler's existing set in place (keeps the order gold() reads), else append."""
    labels = list(case.labels)
    index = next((i for i, old in enumerate(labels) if old.labeler == label.labeler), None)
    if index is None:
        labels.append(label)
    else:
        labels[index] = label
    return _revalidated(case, labels=labels)


def with_adjudicated(case: EvalCase, label: LabelSet) -> EvalCase:
    return _revalidated(case, adjudicated=label)


def _summary(problems: list[str]) -> str:
    shown = "; ".join(problems[:MAX_PROBLEMS_SHOWN])
    more = len(problems) - MAX_PROBLEMS_SHOWN
    return shown + (f" (+{more} more)" if more > 0 else "")


def apply_labels(
    cases: Mapping[str, EvalCase], entries: Mapping[str, Any], *, labeler: str, now: datetime, where: str
) -> dict[str, LabelSet]:
    """Validate every entry against `cases`; the label set per case id, or one EvalError for all.

    Each set is also tried on its case (`with_label`), so the cross-field rules hold; the caller
    applies the sets to freshly read copies when it writes (see `write_labels`).
    """
    check_handle(labeler)
    problems: list[str] = []
    labels: dict[str, LabelSet] = {}
    for case_id, raw in entries.items():
        case = cases.get(case_id)
        if case is None:
            problems.append(
                f"case {case_id} is not in the set" if len(case_id) <= 100 else "an unknown case id"
            )
            continue
        try:
            answers = LabelAnswers.model_validate(raw)
        except ValidationError as err:
            problems.append(describe_validation_error(err, f"case {case_id}"))
            continue
        paths = {f.path for f in case.inputs.files}
        bad = [i + 1 for i, p in enumerate(answers.out_of_scope) if p not in paths]
        if bad:
            numbers = ", ".join(map(str, bad))
            problems.append(f"case {case_id}: outOfScope entry {numbers} is not a file of the case")
            continue
        label = make_label_set(answers, labeler=labeler, now=now)
        try:
            with_label(case, label)
        except ValueError as err:
            problems.append(describe_validation_error(err, f"case {case_id}"))
            continue
        labels[case_id] = label
    if problems:
        raise EvalError(f"{where}: {len(problems)} problem(s), nothing written: {_summary(problems)}")
    return labels


def parse_json_object(text: str, where: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise EvalError(f"{where}: not valid JSON (line {err.lineno}, column {err.colno})") from None
    if not isinstance(data, dict):
        raise EvalError(f"{where}: expected a JSON object keyed by case id")
    return data


def parse_inbox_file(text: str, where: str) -> InboxFile:
    data = parse_json_object(text, where)
    try:
        return InboxFile.model_validate(data)
    except ValidationError as err:
        raise EvalError(describe_validation_error(err, where)) from None


def double_label_target(n: int, fraction: float, minimum: int) -> int:
    """max(min, ceil(fraction × n)), never more than the cases there are."""
    return min(n, max(minimum, math.ceil(fraction * n)))


def choose_double(cases: Sequence[EvalCase], *, fraction: float, minimum: int, seed: int) -> list[str]:
    """Ids to tag so that the target is reached; already tagged cases count, so a rerun adds none.

    The choice is stratified by the gold-free size and path strata recomputed from the inputs
    (labels never steer it) and seeded, so the same set and seed give the same ids.
    """
    if not 0 <= fraction <= 1 or minimum < 0:
        raise EvalError("--fraction must be between 0 and 1 and --min must be 0 or more")
    tagged = [c for c in cases if DOUBLE_LABEL_TAG in c.tags]
    missing = double_label_target(len(cases), fraction, minimum) - len(tagged)
    if missing <= 0:
        return []
    strata: dict[str, list[str]] = {}
    for case in sorted((c for c in cases if DOUBLE_LABEL_TAG not in c.tags), key=lambda c: c.id):
        pr = case.inputs.pr
        key = stratum_key(
            size_stratum(pr.additions, pr.deletions),
            path_stratum(case.inputs.files, case.floor_config.extra_sensitive_globs),
        )
        strata.setdefault(key, []).append(case.id)
    quotas = allocate({k: len(ids) for k, ids in strata.items()}, missing, 0)
    rng = mulberry32(seed)
    return sorted(cid for k in sorted(strata) for cid in seeded_shuffle(strata[k], rng)[: quotas[k]])


def cases_to_label(
    cases: Sequence[EvalCase], *, handle: str, case_id: str | None = None, double_only: bool = False
) -> list[EvalCase]:
    """Sorted by id, without a set by `handle`; --case picks one case (relabelling replaces the set)."""
    if case_id is not None:
        picked = [c for c in cases if c.id == case_id]
        if not picked:
            raise EvalError(f"case {case_id} is not in the set: check the id with `graft-eval validate`")
        return picked
    return sorted(
        (
            c
            for c in cases
            if all(lbl.labeler != handle for lbl in c.labels)
            and (not double_only or DOUBLE_LABEL_TAG in c.tags)
        ),
        key=lambda c: c.id,
    )


def cases_to_adjudicate(cases: Sequence[EvalCase], *, case_id: str | None = None) -> list[EvalCase]:
    """Cases whose label sets disagree on the scored fields (E17) and that have no adjudicated set."""
    pending = sorted((c for c in cases if needs_adjudication(c)), key=lambda c: c.id)
    if case_id is None:
        return pending
    picked = [c for c in pending if c.id == case_id]
    if not picked:
        raise EvalError(
            f"case {case_id} does not need adjudication "
            "(unknown, agreeing label sets, or already adjudicated)"
        )
    return picked


# --- what the labeler sees -------------------------------------------------------------------


def blind_view(case: EvalCase) -> EvalCase:
    """E25: the PR as GitHub shows it; labels, adjudication, tags and scripted replies removed."""
    return case.model_copy(update={"labels": [], "adjudicated": None, "fake_llm": None, "tags": []})


def _oos_numbers(case: EvalCase, label: LabelSet) -> str:
    numbers = [str(i) for i, f in enumerate(case.inputs.files, start=1) if f.path in label.out_of_scope]
    return ", ".join(numbers) or "none"


def render_label_sets(case: EvalCase, labels: Sequence[LabelSet], width: int = 36) -> str:
    """Adjudication view: one column per labeler; `*` marks a scored field the sets disagree on."""
    rows: list[tuple[str, list[str], bool]] = [
        ("labeler", [lbl.labeler for lbl in labels], False),
        ("risk", [lbl.risk for lbl in labels], True),
        ("should-flag", ["yes" if lbl.should_flag else "no" for lbl in labels], True),
        ("out-of-scope", [_oos_numbers(case, lbl) for lbl in labels], True),
        ("confidence", [lbl.confidence for lbl in labels], False),
        ("goal", [lbl.goal for lbl in labels], False),
        ("changes", ["\n".join(f"- {c}" for c in lbl.key_behavior_changes) or "-" for lbl in labels], False),
        ("notes", [lbl.notes or "-" for lbl in labels], False),
    ]
    out: list[str] = []
    for name, values, scored in rows:
        mark = "*" if scored and len(set(values)) > 1 else " "
        cells = [
            [
                wrapped
                for part in to_terminal_safe(v).split("\n")
                for wrapped in textwrap.wrap(part, width) or [""]
            ]
            for v in values
        ]
        for i in range(max(len(c) for c in cells)):
            head = f"{mark} {name:<13}" if i == 0 else " " * 15
            out.append((head + "  ".join(f"{(c[i] if i < len(c) else ''):<{width}}" for c in cells)).rstrip())
    return "\n".join(out)


# --- interactive questions -------------------------------------------------------------------


class _Quit(Exception):
    """`q` (or end of input) at a prompt: stop without writing the current case."""


@dataclass
class Console:
    """Line-based prompts over injected streams; works on a real terminal and on scripted input."""

    inp: TextIO
    out: TextIO

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def ask(self, prompt: str, parse: Callable[[str], T]) -> T:
        while True:
            self.out.write(prompt)
            self.out.flush()
            line = self.inp.readline()
            if not line:
                raise _Quit
            answer = line.rstrip("\r\n").strip()
            if answer.lower() == "q":
                raise _Quit
            try:
                return parse(answer)
            except ValueError as err:
                self.say(f"  {err}")


def _choice(options: Mapping[str, T], hint: str) -> Callable[[str], T]:
    def parse(answer: str) -> T:
        key = answer.lower()
        if key in options:
            return options[key]
        raise ValueError(hint)

    return parse


def _oos_parser(case: EvalCase) -> Callable[[str], list[str]]:
    paths = [f.path for f in case.inputs.files]
    hint = f"numbers between 1 and {len(paths)} separated by commas (1,4), or empty for none; q quits"

    def parse(answer: str) -> list[str]:
        chosen: list[str] = []
        for part in filter(None, re.split(r"[,\s]+", answer)):
            if not part.isdigit() or not 1 <= int(part) <= len(paths):
                raise ValueError(hint)
            chosen.append(paths[int(part) - 1])
        return sorted(set(chosen))

    return parse


def _text_parser(max_len: int, *, required: bool) -> Callable[[str], str]:
    def parse(answer: str) -> str:
        if required and not answer:
            raise ValueError("one plain sentence is needed; q quits")
        if len(answer) > max_len:
            raise ValueError(f"at most {max_len} characters (this was {len(answer)})")
        return answer

    return parse


RISK_ANSWERS: dict[str, RiskClass] = {
    "t": "trivial",
    "l": "logic",
    "s": "sensitive",
    "trivial": "trivial",
    "logic": "logic",
    "sensitive": "sensitive",
}
YES_NO = {"y": True, "yes": True, "n": False, "no": False}
CONFIDENCE_ANSWERS: dict[str, Confidence] = {
    "h": "high",
    "m": "medium",
    "l": "low",
    "high": "high",
    "medium": "medium",
    "low": "low",
}


def ask_answers(console: Console, case: EvalCase) -> LabelAnswers:
    """The questions of spec 7, in order; raises _Quit on q."""
    risk = console.ask(
        "Risk [t/l/s]: ", _choice(RISK_ANSWERS, "answer t (trivial), l (logic) or s (sensitive)")
    )
    oos = console.ask(
        "Out-of-scope files (numbers from the file list, e.g. 1,4; empty for none): ", _oos_parser(case)
    )
    goal = console.ask("Goal (one line): ", _text_parser(300, required=True))
    changes: list[str] = []
    while len(changes) < MAX_KEY_CHANGES:
        change = console.ask(
            f"Key behavior change {len(changes) + 1} (empty line ends): ", _text_parser(300, required=False)
        )
        if not change:
            break
        changes.append(change)
    flag = console.ask("Should flag [y/n]: ", _choice(YES_NO, "answer y or n"))
    confidence = console.ask(
        "Confidence [h/m/l]: ", _choice(CONFIDENCE_ANSWERS, "answer h (high), m (medium) or l (low)")
    )
    notes = console.ask("Notes (one line, may be empty): ", _text_parser(2000, required=False))
    return LabelAnswers(
        risk=risk,
        out_of_scope=oos,
        goal=goal,
        key_behavior_changes=changes,
        should_flag=flag,
        confidence=confidence,
        notes=notes,
    )


def _show_case(console: Console, case: EvalCase, position: str) -> None:
    console.say(f"=== case {case.id} ({position}) ===")
    console.say(render_case(blind_view(case)))  # its numbered file list answers the oos question


def _wants_next(console: Console, next_id: str, left: int) -> bool:
    return console.ask(
        f"Next case: {next_id} ({left} left). Enter or y to start, n or q to stop: ",
        _choice({"": True, "y": True, "yes": True, "n": False, "no": False}, "press Enter, y or n"),
    )


def _session(
    console: Console,
    pending: Sequence[EvalCase],
    *,
    show: Callable[[EvalCase, str], None],
    save: Callable[[EvalCase, LabelAnswers], None],
) -> int:
    """Ask about each pending case in turn; returns how many were written."""
    written = 0
    try:
        for i, case in enumerate(pending):
            if i > 0 and not _wants_next(console, case.id, len(pending) - i):
                break
            show(case, f"{i + 1} of {len(pending)}")
            answers = ask_answers(console, case)
            save(case, answers)
            console.say(f"saved {case.id}")
            written += 1
    except _Quit:
        console.say("stopped; the current case was not saved")
    return written


def run_label_session(
    cs: CaseSet,
    *,
    handle: str,
    inp: TextIO,
    out: TextIO,
    now: Callable[[], datetime],
    case_id: str | None = None,
    double_only: bool = False,
) -> int:
    """`graft-eval label`: blind questions per case, one label set written per finished case."""
    check_handle(handle)
    console = Console(inp, out)
    pending = cases_to_label(read_cases(cs), handle=handle, case_id=case_id, double_only=double_only)
    if not pending:
        console.say(f"nothing to label for {handle}" + (" (double-label cases)" if double_only else ""))
        return 0
    console.say(
        f"labeling as {handle} with guide {LABELING_GUIDE_VERSION}: {len(pending)} case(s); "
        "q at any prompt stops without saving the current case"
    )

    def save(case: EvalCase, answers: LabelAnswers) -> None:
        # Re-read: another labeler may have written this case since the session started.
        fresh = read_case(cs, case.id)
        write_case(cs, with_label(fresh, make_label_set(answers, labeler=handle, now=now())))

    return _session(console, pending, show=lambda c, pos: _show_case(console, c, pos), save=save)


def run_adjudication_session(
    cs: CaseSet,
    *,
    handle: str,
    inp: TextIO,
    out: TextIO,
    now: Callable[[], datetime],
    case_id: str | None = None,
) -> int:
    """`graft-eval adjudicate`: the case and the label sets side by side (no model output)."""
    check_handle(handle)
    console = Console(inp, out)
    pending = cases_to_adjudicate(read_cases(cs), case_id=case_id)
    if not pending:
        console.say("no case needs adjudication")
        return 0
    console.say(f"adjudicating as {handle}: {len(pending)} case(s); q at any prompt stops without saving")

    def show(case: EvalCase, position: str) -> None:
        _show_case(console, case, position)
        console.say("Label sets (* = the sets disagree):")
        console.say(render_label_sets(case, case.labels))

    def save(case: EvalCase, answers: LabelAnswers) -> None:
        fresh = read_case(cs, case.id)
        write_case(cs, with_adjudicated(fresh, make_label_set(answers, labeler=handle, now=now())))

    return _session(console, pending, show=show, save=save)


# --- --apply, assign-double, inbox import (I/O through the store) ----------------------------


def apply_label_file(cs: CaseSet, path: Path, *, handle: str, now: datetime) -> list[str]:
    """`label --apply`: validate the whole file against the set, then write; returns the case ids."""
    where = path.name
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise EvalError(f"could not read {path}: {err.strerror or err}") from None
    entries = parse_json_object(text, where)
    labels = apply_labels({c.id: c for c in read_cases(cs)}, entries, labeler=handle, now=now, where=where)
    return [c.id for c in write_labels(cs, labels)]


def write_labels(cs: CaseSet, labels: Mapping[str, LabelSet]) -> list[EvalCase]:
    """Write each label set onto a copy of its case read just before the write, so a label saved
    meanwhile (a `label` session, the nightly import) is kept; returns the cases as written."""
    written: list[EvalCase] = []
    for case_id, label in labels.items():
        fresh = read_case(cs, case_id)
        try:
            case = with_label(fresh, label)
        except ValueError as err:
            raise EvalError(describe_validation_error(err, f"case {case_id}")) from None
        write_case(cs, case)
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
            write_case(cs, _revalidated(fresh, tags=[*fresh.tags, DOUBLE_LABEL_TAG]))
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
    file is reported by name and left in place. Files are applied in name order.
    """
    names, bad = _inbox_entries(cs)
    cases = {c.id: c for c in read_cases(cs)}
    imported: list[str] = []
    by_labeler: dict[str, int] = {}
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    for name in names:
        rel = f"{INBOX_DIR}/{name.removesuffix('.enc')}"
        try:
            text = read_private(cs, rel)
            if text is None:  # removed since the listing
                continue
            parsed = parse_inbox_file(text, name)
            labels = apply_labels(cases, parsed.labels, labeler=parsed.labeler, now=now, where=name)
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
        bad_files=dict(sorted(bad.items())),
        case_count=len(cases),
        gold_count=sum(gold(c) is not None for c in cases.values()),
        needs_adjudication=sorted(c.id for c in cases.values() if needs_adjudication(c)),
    )
