"""The cases of report.html as one compact JSON block.

A small inline script pages, filters and sorts them, and opens each in the case panel.

One block rather than a table row per case: at 20,000 cases a rendered table is megabytes of
markup the browser must lay out before the page answers, while the script renders one page of
rows at a time from arrays (docs/benchmarks.md, report.html). Rows are arrays whose column names
are in `cols`, so the script reads them by name; classes, kinds, rules, tags and sources are
indices into tables listed once. The kinds are listed from the rows (in CASE_KINDS order, then
any other kind a row has), each with its title and whether it is a failure, so a new kind of
case_kinds.py shows up as a filter without a change here.

Privacy (E8): rows hold ids, classes, rule ids, tags and counts; `content` (titles, cards, paths)
is present only when the caller passes content, which html.py does for the synthetic set alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from graft_eval_pipeline.card import RISK_CLASSES
from graft_eval_pipeline.evalset.report.case_detail import CaseContent, CaseDetail, CaseFacts
from graft_eval_pipeline.evalset.report.case_kinds import CASE_KINDS, FAILURE_KINDS, KIND_TITLES, CaseLine
from graft_eval_pipeline.evalset.scoring import CaseRow

COLUMNS = (
    "id",
    "kinds",
    "severe",
    "gold",
    "goldFlag",
    "goldOos",
    "floor",
    "rules",
    "writer",
    "verifier",
    "model",
    "final",
    "status",
    "vstatus",
    "raised",
    "tags",
    "calls",
    "inTokens",
    "outTokens",
    "cost",
    "oos",
    "flag",
    "iid",
    "facts",
)
"""The fields of each row, in order; `facts` is [firstPass, escalated, claims, unexplained,
missing, reportedBy] or null when no card result was at hand."""


CASES_PER_PAGE = 50
"""Table rows rendered at a time: at 20,000 cases a filter click costs ~50 ms of the page's CPU
with 50 rows against ~100 with 100 (bench/bench_html.py), and 50 fill two screens."""


class _Table:
    """Strings listed once, referred to by index."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, value: str) -> int:
        found = self._index.get(value)
        if found is None:
            found = self._index[value] = len(self.items)
            self.items.append(value)
        return found


def kind_table(lines: Sequence[CaseLine], with_changed: bool) -> list[str]:
    """The kinds the filters offer.

    Every known one (`changed` only with a baseline), then any other kind a row has, by name.
    """
    known: list[str] = [k for k in CASE_KINDS if k != "changed" or with_changed]
    extra = sorted({str(k) for line in lines for k in line.kinds} - set(known))
    return [*known, *extra]


def _cls(value: str | None) -> int | None:
    return None if value is None else RISK_CLASSES.index(value)


def _facts(facts: CaseFacts | None) -> list[Any] | None:
    if facts is None:
        return None
    return [
        _cls(facts.first_pass),
        int(facts.escalated),
        [list(c) for c in facts.claims],
        facts.unexplained,
        facts.missing,
        list(facts.instructions_from),
    ]


def _content(content: CaseContent) -> dict[str, Any]:
    return {
        "title": content.title,
        "goal": content.goal,
        "changes": list(content.behavior_changes),
        "outOfScope": list(content.out_of_scope),
        "riskReason": content.risk_reason,
        "firedBy": dict(content.fired_by),
        "unexplained": list(content.unexplained_files),
        "goldOutOfScope": list(content.gold_out_of_scope),
    }


def case_table_data(
    lines: Sequence[CaseLine],
    rows: Mapping[str, CaseRow],
    details: Mapping[str, CaseDetail],
    *,
    scripted: bool,
    with_changed: bool,
    default_filter: str,
) -> dict[str, Any]:
    """The JSON the script reads: tables, one array per case (id order), content by case id."""
    kinds = kind_table(lines, with_changed)
    titles = {str(k): title for k, title in KIND_TITLES.items()}
    kind_index = {k: i for i, k in enumerate(kinds)}
    rules, tags, raised, statuses = _Table(), _Table(), _Table(), _Table()
    out_rows: list[list[Any]] = []
    content: dict[str, dict[str, Any]] = {}
    for line in lines:
        row = rows[line.id]
        detail = details.get(line.id)
        gold = row.gold
        out_rows.append(
            [
                line.id,
                [kind_index[k] for k in line.kinds],
                int(line.severe),
                _cls(line.gold),
                None if gold is None else int(gold.should_flag),
                None if gold is None else gold.out_of_scope_count,
                _cls(line.floor),
                [rules(r) for r in line.rules],
                _cls(row.writer),
                _cls(row.verifier),
                _cls(line.model),
                _cls(line.final),
                statuses(line.status),
                line.verifier,
                [raised(r) for r in row.raised_by],
                [tags(t) for t in row.tags],
                row.usage.calls,
                row.usage.input_tokens,
                row.usage.output_tokens,
                row.cost_usd,
                None if row.oos is None else [row.oos.tp, row.oos.fp, row.oos.fn],
                row.flag,
                int(row.instructions_in_data),
                _facts(detail.facts if detail else None),
            ]
        )
        if detail is not None and detail.content is not None:
            content[line.id] = _content(detail.content)
    return {
        "cols": list(COLUMNS),
        "classes": list(RISK_CLASSES),
        "kinds": [{"id": k, "title": titles.get(k, k), "failure": k in FAILURE_KINDS} for k in kinds],
        "defaultFilter": default_filter,
        "pageSize": CASES_PER_PAGE,
        "scripted": scripted,
        "rules": rules.items,
        "tags": tags.items,
        "raised": raised.items,
        "statuses": statuses.items,
        "rows": out_rows,
        "content": content,
    }


def json_block(element_id: str, data: Any) -> str:
    """`data` as an inert `<script type="application/json">`.

    Compact, and with `<`, `>`, `&` and the line separators escaped so no value can close the
    element or start markup.
    """
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escaped)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f'<script type="application/json" id="{element_id}">{text}</script>'
