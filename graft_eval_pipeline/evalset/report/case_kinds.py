"""Which cases of a run to look at, and why.

The per-case drill-down of report.md, report.html and `graft-eval cases`.

Each failure kind is an error against gold: under- or over-classified (final class below or
above gold), unavailable (no card), a missed flag (gold says flag, the verifier agreed), a false
flag (the verifier disagreed, gold says no flag), an out-of-scope miss (a file gold marks out of
scope that the card and verifier did not name) and an out-of-scope extra (a file they named that
gold does not). A correct flag is no failure. A case is changed when a decision field differs
from the baseline (scoring/changes.py; usage alone never). The lines hold ids, classes, rule ids
and the verifier's status only (E8), so they can go anywhere a report goes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from graft_eval_pipeline.card import RISK_ORDER
from graft_eval_pipeline.evalset.report.baseline import BaselineDiff
from graft_eval_pipeline.evalset.scoring import CaseRow, EvalReport

CaseKind = Literal[
    "under",
    "over",
    "unavailable",
    "missed-flag",
    "false-flag",
    "out-of-scope-miss",
    "out-of-scope-extra",
    "changed",
]
CASE_KINDS: tuple[CaseKind, ...] = get_args(CaseKind)
FAILURE_KINDS: tuple[CaseKind, ...] = tuple(kind for kind in CASE_KINDS if kind != "changed")
KIND_TITLES: dict[CaseKind, str] = {
    "under": "under-classified",
    "over": "over-classified",
    "unavailable": "unavailable",
    "missed-flag": "missed flag",
    "false-flag": "false flag",
    "out-of-scope-miss": "out-of-scope miss",
    "out-of-scope-extra": "out-of-scope extra",
    "changed": "changed since the baseline",
}
KIND_MEANINGS: dict[CaseKind, str] = {
    "under": "final class below gold",
    "over": "final class above gold",
    "unavailable": "no card",
    "missed-flag": "gold says flag, the verifier agreed with the card",
    "false-flag": "the verifier disagreed, gold says no flag",
    "out-of-scope-miss": "a file gold marks out of scope was not named",
    "out-of-scope-extra": "a file was named out of scope that gold does not mark",
    "changed": "a decision differs from the baseline (usage alone never)",
}
"""One line per kind: `cases --help`, report.md and report.html say what each means."""
MAX_MARKDOWN_CASES = 100  # report.md lists at most this many; cases.parquet and `cases` list all


def changed_case_ids(diff: BaselineDiff | None) -> frozenset[str]:
    """The changed cases by the one definition (`BaselineDiff.changed_cases`)."""
    return frozenset(diff.changed_cases) if diff is not None else frozenset()


def case_kinds(row: CaseRow, changed: Iterable[str] = ()) -> list[CaseKind]:
    """The kinds a row belongs to, in CASE_KINDS order; empty for a case that needs no look."""
    kinds: list[CaseKind] = []
    if row.gold is not None and row.final is not None and row.skipped is None:
        gold, final = RISK_ORDER[row.gold.risk], RISK_ORDER[row.final]
        if final < gold:
            kinds.append("under")
        elif final > gold:
            kinds.append("over")
    if row.status == "unavailable":
        kinds.append("unavailable")
    if row.flag == "fn":
        kinds.append("missed-flag")
    elif row.flag == "fp":
        kinds.append("false-flag")
    if row.oos is not None and row.oos.fn:
        kinds.append("out-of-scope-miss")
    if row.oos is not None and row.oos.fp:
        kinds.append("out-of-scope-extra")
    if row.id in changed:
        kinds.append("changed")
    return kinds


def row_status(row: CaseRow) -> str:
    if row.skipped is not None:
        return f"skipped ({row.skipped})"
    if row.status is None:
        return "-"
    return f"{row.status} ({row.failure_reason})" if row.failure_reason else row.status


@dataclass(frozen=True)
class CaseLine:
    """One case as `cases`, report.md and report.html show it: ids, classes, rules, no content."""

    id: str
    kinds: tuple[CaseKind, ...]
    gold: str | None
    floor: str
    model: str | None
    final: str | None
    status: str
    rules: tuple[str, ...]
    verifier: str | None
    severe: bool  # gold sensitive, final trivial

    @property
    def changed(self) -> bool:
        """A decision differs from the baseline (the one definition; usage alone never)."""
        return "changed" in self.kinds

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kinds": list(self.kinds),
            "changed": self.changed,
            "gold": self.gold,
            "floor": self.floor,
            "model": self.model,
            "final": self.final,
            "status": self.status,
            "rulesFired": list(self.rules),
            "verifier": self.verifier,
        }


def case_line(row: CaseRow, changed: Iterable[str] = ()) -> CaseLine:
    gold = row.gold.risk if row.gold is not None else None
    return CaseLine(
        id=row.id,
        kinds=tuple(case_kinds(row, changed)),
        gold=gold,
        floor=row.floor,
        model=row.model,
        final=row.final,
        status=row_status(row),
        rules=tuple(row.floor_rules),
        verifier=row.verifier_status,
        severe=gold == "sensitive" and row.final == "trivial",
    )


def _look_order(line: CaseLine) -> tuple[int, str]:
    """Severe under-classification first, then the failure kinds in FAILURE_KINDS order; then by id."""
    if line.severe and "under" in line.kinds:
        return 0, line.id
    first = next((k for k in FAILURE_KINDS if k in line.kinds), None)
    return (1 + FAILURE_KINDS.index(first) if first is not None else len(FAILURE_KINDS) + 1), line.id


def case_lines(
    report: EvalReport, diff: BaselineDiff | None = None, only: CaseKind | None = None
) -> list[CaseLine]:
    """Every case of the run in id order, or only those of one kind."""
    changed = changed_case_ids(diff)
    lines = [case_line(row, changed) for row in report.cases]
    return [line for line in lines if only is None or only in line.kinds]


def cases_to_look_at(report: EvalReport, diff: BaselineDiff | None = None) -> list[CaseLine]:
    """The cases with a failure kind (errors against gold only), the worst first."""
    looks = [line for line in case_lines(report, diff) if set(line.kinds) & set(FAILURE_KINDS)]
    return sorted(looks, key=_look_order)


def kind_counts(lines: Iterable[CaseLine]) -> dict[CaseKind, int]:
    counts: dict[CaseKind, int] = dict.fromkeys(CASE_KINDS, 0)
    for line in lines:
        for kind in line.kinds:
            counts[kind] += 1
    return counts


def _cell(value: str | None) -> str:
    return value if value else "-"


def markdown_cases_section(report: EvalReport, diff: BaselineDiff | None) -> list[str]:
    """report.md's "Cases to look at": the failure kinds, worst first, at most 100 rows."""
    looks = cases_to_look_at(report, diff)
    counts = kind_counts(looks)
    lines = ["", "## Cases to look at", ""]
    if not looks:
        lines.append(
            "None: no case was under- or over-classified, unavailable, or wrong on a flag or out of scope."
        )
        return lines
    summary = ", ".join(f"{counts[k]} {KIND_TITLES[k]}" for k in FAILURE_KINDS)
    meanings = "; ".join(f"{k}: {KIND_MEANINGS[k]}" for k in FAILURE_KINDS)
    lines += [
        f"{len(looks)} of {len(report.cases)} cases: {summary}. Every case is in `cases.parquet`; "
        f"`graft-eval cases --set <set> --run {report.run_id} --only under` lists one kind.",
        "",
        f"Kinds: {meanings}.",
        "",
        "| case | why | gold | floor | model | final | status | rules fired | verifier |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for line in looks[:MAX_MARKDOWN_CASES]:
        why = ", ".join(("severe under" if k == "under" and line.severe else k) for k in line.kinds)
        lines.append(
            f"| {line.id} | {why} | {_cell(line.gold)} | {line.floor} | {_cell(line.model)} | "
            f"{_cell(line.final)} | {line.status} | {', '.join(line.rules) or '-'} | {_cell(line.verifier)} |"
        )
    if len(looks) > MAX_MARKDOWN_CASES:
        lines += ["", f"… and {len(looks) - MAX_MARKDOWN_CASES} more (`graft-eval cases` lists them all)."]
    return lines
