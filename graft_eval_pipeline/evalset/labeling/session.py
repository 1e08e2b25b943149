"""Interactive labeling and adjudication (spec 7, E25): the human view of a case.

The labeler sees the PR as GitHub shows it and nothing else: never the floor, a card, the
scripted model replies, the tags or another labeler's labels; adjudication adds the label sets
side by side, never model output, and lets each question take a labeler's answer (`=1`,
`=alice`, or `=` where they all agree). Prompts run over injected text streams, so a real
terminal and scripted input behave the same. This is the only labeling module that shows case content.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import TextIO, TypeVar

from graft_eval_pipeline.card import RiskClass
from graft_eval_pipeline.evalset.labeling.labels import (
    LABELING_GUIDE_VERSION,
    cases_to_adjudicate,
    cases_to_label,
    check_handle,
    make_label_set,
    with_adjudicated,
    with_label,
)
from graft_eval_pipeline.evalset.sets import (
    MAX_KEY_CHANGES,
    CaseSet,
    Confidence,
    EvalCase,
    LabelAnswers,
    LabelSet,
    read_case,
    read_cases,
    render_case,
    to_terminal_safe,
    write_case,
)

T = TypeVar("T")


# --- what the labeler sees -------------------------------------------------------------------


def blind_view(case: EvalCase) -> EvalCase:
    """The PR as GitHub shows it; labels, adjudication, tags and scripted replies removed."""
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


# --- adjudication: take a labeler's answer -----------------------------------------------------


@dataclass(frozen=True)
class Offers:
    """The label sets an adjudicator may take answers from, field by field.

    `=1` (or `=alice`) takes the first labeler's answer, `=` the answer every labeler gave. Empty
    when labeling.
    """

    labels: Sequence[LabelSet] = ()

    def line(self, get: Callable[[LabelSet], T], show: Callable[[T], str] | None) -> str | None:
        """The offer shown above a question; `show` None for free text (it is in the table)."""
        if not self.labels:
            return None
        values = [get(label) for label in self.labels]

        def shown(value: T) -> str:
            return "" if show is None else f" ({to_terminal_safe(show(value))})"

        if all(v == values[0] for v in values):
            names = " and ".join(label.labeler for label in self.labels)
            return f"  = takes the answer {names} agree on{shown(values[0])}"
        return "  " + " · ".join(
            f"={i} takes {label.labeler}'s answer{shown(v)}"
            for i, (label, v) in enumerate(zip(self.labels, values, strict=True), start=1)
        )

    def hint(self) -> str:
        return ", ".join(f"={i} or ={label.labeler}" for i, label in enumerate(self.labels, start=1))

    def take(self, choice: str, get: Callable[[LabelSet], T]) -> T:
        """The answer `=<choice>` names; ValueError (asked again) when it names none."""
        values = [get(label) for label in self.labels]
        if choice == "":
            if all(v == values[0] for v in values):
                return values[0]
            raise ValueError(f"the labelers differ here: take one ({self.hint()}) or answer yourself")
        for i, label in enumerate(self.labels, start=1):
            if choice in (str(i), label.labeler):
                return values[i - 1]
        raise ValueError(f"no such labeler: {self.hint()}, or answer yourself")

    def parser(self, parse: Callable[[str], T], get: Callable[[LabelSet], T]) -> Callable[[str], T]:
        """`parse`, except that an answer starting with `=` takes a labeler's answer."""
        if not self.labels:
            return parse

        def parsed(answer: str) -> T:
            return self.take(answer[1:].strip(), get) if answer.startswith("=") else parse(answer)

        return parsed


def _ask_field(
    console: Console,
    offers: Offers,
    prompt: str,
    parse: Callable[[str], T],
    get: Callable[[LabelSet], T],
    show: Callable[[T], str] | None = None,
) -> T:
    offer = offers.line(get, show)
    if offer is not None:
        console.say(offer)
    return console.ask(prompt, offers.parser(parse, get))


@dataclass(frozen=True)
class _TakenList:
    """A labeler's whole list of key behavior changes, taken at the first change's question."""

    changes: tuple[str, ...]


def _ask_changes(console: Console, offers: Offers) -> list[str]:
    """Key behavior changes one by one; at the first, `=` takes a labeler's whole list."""
    one_change = _text_parser(300, required=False)

    def first_change(answer: str) -> str | _TakenList:
        return one_change(answer)

    def whole_list(label: LabelSet) -> str | _TakenList:
        return _TakenList(tuple(label.key_behavior_changes))

    first = _ask_field(console, offers, "Key behavior change 1 (empty line ends): ", first_change, whole_list)
    if isinstance(first, _TakenList):
        return list(first.changes)
    changes = [first] if first else []
    while changes and len(changes) < MAX_KEY_CHANGES:
        change = console.ask(f"Key behavior change {len(changes) + 1} (empty line ends): ", one_change)
        if not change:
            break
        changes.append(change)
    return changes


def _yes_no(flag: bool) -> str:
    return "yes" if flag else "no"


def ask_answers(console: Console, case: EvalCase, offers: Offers | None = None) -> LabelAnswers:
    """The questions of spec 7, in order; raises _Quit on q.

    With `offers` (adjudication) each question can take a labeler's answer instead.
    """
    offers = offers or Offers()
    paths = [f.path for f in case.inputs.files]

    def file_numbers(chosen: list[str]) -> str:
        return ", ".join(str(paths.index(p) + 1) for p in chosen if p in paths) or "none"

    risk = _ask_field(
        console,
        offers,
        "Risk [t/l/s]: ",
        _choice(RISK_ANSWERS, "answer t (trivial), l (logic) or s (sensitive)"),
        lambda label: label.risk,
        str,
    )
    oos = _ask_field(
        console,
        offers,
        "Out-of-scope files (numbers from the file list, e.g. 1,4; empty for none): ",
        _oos_parser(case),
        lambda label: list(label.out_of_scope),
        file_numbers,
    )
    goal = _ask_field(
        console, offers, "Goal (one line): ", _text_parser(300, required=True), lambda label: label.goal
    )
    changes = _ask_changes(console, offers)
    flag = _ask_field(
        console,
        offers,
        "Should flag [y/n]: ",
        _choice(YES_NO, "answer y or n"),
        lambda label: label.should_flag,
        _yes_no,
    )
    confidence = _ask_field(
        console,
        offers,
        "Confidence [h/m/l]: ",
        _choice(CONFIDENCE_ANSWERS, "answer h (high), m (medium) or l (low)"),
        lambda label: label.confidence,
        str,
    )
    notes = _ask_field(
        console,
        offers,
        "Notes (one line, may be empty): ",
        _text_parser(2000, required=False),
        lambda label: label.notes,
    )
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
    offers: Callable[[EvalCase], Offers] = lambda _case: Offers(),
) -> int:
    """Ask about each pending case in turn; returns how many were written."""
    written = 0
    try:
        for i, case in enumerate(pending):
            if i > 0 and not _wants_next(console, case.id, len(pending) - i):
                break
            show(case, f"{i + 1} of {len(pending)}")
            answers = ask_answers(console, case, offers(case))
            save(case, answers)
            console.say(f"saved {case.id}")
            written += 1
    except _Quit:
        console.say("stopped; the current case was not saved")
    return written


# What a session holds around each write (the CLI passes the set hold; tests and callers
# that serialise writes themselves keep the default, which holds nothing).
WriteHold = Callable[[], AbstractContextManager[object]]


def run_label_session(
    cs: CaseSet,
    *,
    handle: str,
    inp: TextIO,
    out: TextIO,
    now: Callable[[], datetime],
    case_id: str | None = None,
    double_only: bool = False,
    holding: WriteHold = nullcontext,
) -> int:
    """`graft-eval label`: blind questions per case, one label set written per finished case.

    `holding()` is held around each write (the CLI's set hold): a session holds the set only
    while it saves a case, so a person thinking over a case keeps no run waiting.
    """
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
        with holding():  # Re-read: another labeler may have written this case since the session started.
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
    holding: WriteHold = nullcontext,
) -> int:
    """`graft-eval adjudicate`.

    The case and the label sets side by side (no model output); `holding()` is held around each
    write, as in `run_label_session`.
    """
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
        numbered = ", ".join(f"={i} {label.labeler}" for i, label in enumerate(case.labels, start=1))
        console.say(
            f"At each question, answer yourself or take a labeler's answer: {numbered}; "
            "= alone takes the answer they all gave."
        )

    def save(case: EvalCase, answers: LabelAnswers) -> None:
        with holding():
            fresh = read_case(cs, case.id)
            write_case(cs, with_adjudicated(fresh, make_label_set(answers, labeler=handle, now=now())))

    return _session(console, pending, show=show, save=save, offers=lambda case: Offers(case.labels))
