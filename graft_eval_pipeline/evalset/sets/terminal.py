"""The human view of a case (spec E24, T4), used by `show` and labeling.

Pilot PR text is untrusted: it may carry ANSI escapes or bidi overrides that rewrite the terminal.
Every rendered line therefore goes through `to_terminal_safe` (card/safe_text.py, so the live
client's log lines share it), which shows C0/C1 controls (except newline and tab) and Unicode
format characters (Cf) as a visible `[U+XXXX]`.
"""

from __future__ import annotations

from graft_eval_pipeline.card import CardResult, to_terminal_safe
from graft_eval_pipeline.evalset.sets.case_schema import EvalCase, LabelSet

__all__ = ["render_case", "to_terminal_safe"]


def render_case(
    case: EvalCase,
    *,
    result: CardResult | None = None,
    gold: LabelSet | None = None,
    result_label: str = "cached card result",
) -> str:
    """Header, title, body, issue, numbered file list, then each patch.

    With a result, the card too under `=== <result_label>` (which run made it: the live cache, or
    the fake model again).

    Without `result` nothing of the engine (floor, card, classes) is shown: labeling is blind.
    """
    inputs = case.inputs
    pr = inputs.pr
    lines = [f"case    {case.id}", f"repo    {inputs.repository_full_name}  PR #{pr.number}"]
    source = case.source
    if source.kind == "pilot":
        agent = f", agent {source.agent}" if source.agent else ""
        lines.append(f"merged  {source.merged_at.isoformat()}")
        lines.append(f"author  {source.author_kind} ({source.author_kind_reason}{agent})")
    else:
        lines.append(f"source  synthetic, by {source.author}, {source.created_at.isoformat()}")
    if case.tags:
        lines.append(f"tags    {', '.join(case.tags)}")
    lines.append(f"size    {pr.changed_files} files (+{pr.additions} −{pr.deletions})")
    if inputs.listing_truncated:
        lines.append("note    the file listing was truncated by GitHub")
    lines += ["", f"title   {pr.title}", "", "body", pr.body or "(empty)", ""]
    if inputs.issue is not None:
        issue = inputs.issue
        lines += [f"issue #{issue.number}  {issue.title}", issue.body or "(empty)", ""]
    else:
        lines += ["issue   (none linked)", ""]
    lines.append("files")
    for number, file in enumerate(inputs.files, start=1):
        moved = f" ← {file.previous_path}" if file.previous_path else ""
        lines.append(f"{number:>3}. {file.status} {file.path}{moved} (+{file.additions} −{file.deletions})")
    for file in inputs.files:
        lines += ["", f"--- {file.path}", file.patch if file.patch is not None else "(no patch)"]
    if result is not None:
        lines += ["", *_result_lines(result, result_label)]
    if gold is not None:
        lines += ["", *_gold_lines(gold)]
    return to_terminal_safe("\n".join(lines)) + "\n"


def _result_lines(result: CardResult, label: str) -> list[str]:
    risk = result.risk
    lines = [f"=== {label}", f"status   {result.status}"]
    if result.failure_reason:
        lines.append(f"failure  {result.failure_reason}")
    card = result.card
    if card is not None:
        lines += ["goal", f"  {card.goal}", "behaviour changes"]
        lines += [f"  b{n}. {change}" for n, change in enumerate(card.behavior_changes, start=1)] or [
            "  (none)"
        ]
        lines.append("out of scope")
        lines += [f"  - {edit.path}: {edit.reason}" for edit in card.out_of_scope_edits] or ["  (none)"]
        lines += ["risk reason", f"  {card.risk_reason}"]
    first_pass = f", first pass {risk.first_pass}" if risk.first_pass else ""
    lines.append(
        f"risk     final {risk.final} (floor {risk.floor}, writer {risk.writer or '-'}{first_pass}, "
        f"verifier {risk.verifier or '-'})"
    )
    lines.append(f"floor    {', '.join(result.floor_rules) or '(no rule fired)'}")
    if result.raised_by:
        lines.append(f"raised   {', '.join(result.raised_by)}")
    if result.instructions_in_data:
        lines.append("instructions in data: yes")
    verifier = result.verifier
    lines.append(f"verifier {verifier.status if verifier else '-'}")
    if verifier is not None and verifier.unexplained:
        lines.append(f"  unexplained: {', '.join(verifier.unexplained)}")
    return lines


def _gold_lines(gold: LabelSet) -> list[str]:
    return [
        f"=== gold label ({gold.labeler}, {gold.guide_version}, confidence {gold.confidence})",
        f"risk     {gold.risk}",
        f"flag     {'yes' if gold.should_flag else 'no'}",
        f"out of scope  {', '.join(gold.out_of_scope) or '(none)'}",
        f"goal     {gold.goal}",
    ]
