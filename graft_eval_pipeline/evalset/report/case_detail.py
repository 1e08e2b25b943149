"""What the case panel of report.html shows beyond a case's row.

Facts from its card result for every set, and its content for the synthetic set alone.

Two tiers because of E8. `CaseFacts` holds classes, claim ids with their status and counts (the
writer's first pass, whether it escalated, how many files the verifier could not explain): no
case content, so a pilot set's panel shows them too. `CaseContent` holds what is content (the PR
title, the card's prose, the paths that fired the floor rules, the verifier's unexplained files,
gold's out-of-scope paths); report.html keeps it for the synthetic set and drops it for any other
(`for_set_kind`), whatever a caller passes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from graft_eval_pipeline.card import CardResult, compute_risk_floor
from graft_eval_pipeline.evalset.sets import EvalCase, gold


@dataclass(frozen=True)
class CaseFacts:
    """Ids, classes and counts of one card result (no content): every set's panel shows them."""

    first_pass: str | None  # the fast writer's class when a strong writer replaced it
    writer: str | None  # the writer whose card stands (escalated or not)
    escalated: bool
    claims: tuple[tuple[str, str], ...]  # (b1, supported), in the card's order
    unexplained: int  # files the verifier could not explain
    missing: int  # behaviour changes the verifier found missing
    instructions_from: tuple[str, ...]  # which model reported instructions in the data


@dataclass(frozen=True)
class CaseContent:
    """Case content for the synthetic set's panel (never a pilot set's)."""

    title: str
    goal: str | None = None
    behavior_changes: tuple[str, ...] = ()
    out_of_scope: tuple[str, ...] = ()  # "path: reason"
    risk_reason: str | None = None
    fired_by: tuple[tuple[str, str], ...] = ()  # (rule id, the path or source that fired it)
    unexplained_files: tuple[str, ...] = ()
    gold_out_of_scope: tuple[str, ...] = ()


@dataclass(frozen=True)
class CaseDetail:
    """One case's panel beyond its row.

    Facts when a card result was at hand, content for the synthetic set.
    """

    facts: CaseFacts | None = None
    content: CaseContent | None = None


def case_facts(result: CardResult) -> CaseFacts:
    verifier = result.verifier
    return CaseFacts(
        first_pass=result.risk.first_pass,
        writer=result.risk.writer,
        escalated=any(call.purpose == "writerEscalated" for call in result.calls),
        claims=tuple((c.id, c.status) for c in verifier.claims) if verifier else (),
        unexplained=len(verifier.unexplained) if verifier else 0,
        missing=len(verifier.missing) if verifier else 0,
        instructions_from=tuple(result.instructions_in_data_from or ()),
    )


def case_content(case: EvalCase, result: CardResult | None) -> CaseContent:
    """The title, the card (when there is one), the floor's sources and gold's paths."""
    floor = compute_risk_floor(case.inputs, case.floor_config.extra_sensitive_globs)
    label = gold(case)
    seen = CaseContent(
        title=case.inputs.pr.title,
        fired_by=tuple(sorted(floor.fired_by.items())),
        gold_out_of_scope=tuple(label.out_of_scope) if label is not None else (),
    )
    return with_card(seen, result)


def with_card(content: CaseContent, result: CardResult | None) -> CaseContent:
    """`content` with the card's prose and the verifier's unexplained files of `result`.

    Its case's part (title, floor sources, gold) stays: a run that showed the case's content at
    first sight adds the card as the case ends, without scanning the case's floor again.
    """
    card = result.card if result is not None else None
    return replace(
        content,
        goal=card.goal if card else None,
        behavior_changes=tuple(card.behavior_changes) if card else (),
        out_of_scope=tuple(f"{e.path}: {e.reason}" for e in card.out_of_scope_edits) if card else (),
        risk_reason=card.risk_reason if card else None,
        unexplained_files=tuple(result.verifier.unexplained) if result and result.verifier else (),
    )


def case_detail(case: EvalCase, result: CardResult | None, *, content: bool) -> CaseDetail:
    """The panel's data for one case; `content` only for the synthetic set (E8)."""
    return CaseDetail(
        facts=case_facts(result) if result is not None else None,
        content=case_content(case, result) if content else None,
    )


def ended_detail(
    earlier: CaseDetail | None, case: EvalCase, result: CardResult, *, content: bool
) -> CaseDetail:
    """`case_detail(case, result)` for a case whose `case_detail(case, None)` is `earlier`, if any.

    The case's part of the content is taken from `earlier` (the same case, read once).
    """
    if not content:
        return CaseDetail(facts=case_facts(result))
    if earlier is None or earlier.content is None:
        return case_detail(case, result, content=True)
    return CaseDetail(facts=case_facts(result), content=with_card(earlier.content, result))


def case_details(
    cases: Iterable[EvalCase], results: Mapping[str, CardResult], *, content: bool
) -> dict[str, CaseDetail]:
    """Facts (and for the synthetic set content) per case id, the cases read one at a time."""
    return {case.id: case_detail(case, results.get(case.id), content=content) for case in cases}


def for_set_kind(details: Mapping[str, CaseDetail], kind: str) -> dict[str, CaseDetail]:
    """What report.html may show of `details` for a set of this kind.

    Content for the synthetic set only, facts for every set.
    """
    if kind == "synthetic":
        return dict(details)
    return {case_id: replace(d, content=None) for case_id, d in details.items() if d.facts is not None}
