"""Terminal safety and the case renderer (spec E24, T4): U-TERM-1, U-TERM-2."""

from __future__ import annotations

import re

from graft_eval_pipeline.card.llm import Usage
from graft_eval_pipeline.card.result import Card, CardResult, OutOfScopeEdit, RiskSummary, VerifierResult
from graft_eval_pipeline.evalset.sets.terminal import render_case, to_terminal_safe
from graft_eval_pipeline_tests.builders import make_case, make_file, make_inputs, make_label, make_pilot_case

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def _result() -> CardResult:
    return CardResult(
        status="ok",
        failure_reason=None,
        card=Card(
            goal="Model goal \x1b[31mred",
            behavior_changes=["First change", "Second change"],
            out_of_scope_edits=[OutOfScopeEdit(path="b/second.ts", reason="Unrelated rename")],
            risk_reason="Touches logic.",
        ),
        risk=RiskSummary(
            floor="trivial", writer="logic", first_pass=None, verifier="sensitive", final="sensitive"
        ),
        floor_rules=[],
        raised_by=["writer", "verifier"],
        instructions_in_data=False,
        verifier=VerifierResult(status="disagree", unexplained=["c/third.md"], claims=[], missing=[]),
        usage=Usage(),
        calls=[],
        input_hash="0" * 64,
    )


def test_U_TERM_1_controls_and_format_chars_made_visible() -> None:
    safe = to_terminal_safe("\u001b[2J\u009b31mok\u202eevil\nnext\tcol\r\x7f\u200b")
    assert "\u001b" not in safe and "\u009b" not in safe and "\u202e" not in safe
    assert "[U+001B]" in safe and "[U+009B]" in safe and "[U+202E]" in safe
    assert "[U+000D]" in safe and "[U+007F]" in safe and "[U+200B]" in safe
    assert "\nnext\tcol" in safe
    assert CONTROL.search(safe) is None
    assert to_terminal_safe("Grüße − “quotes” 🔒 日本") == "Grüße − “quotes” 🔒 日本"


def test_U_TERM_2_files_numbered_in_order_and_no_engine_output_without_result() -> None:
    files = [
        make_file("c/zeta.ts", additions=3, deletions=1),
        make_file("a/alpha.md", status="added", additions=7, deletions=0),
        make_file("b/second.ts", previous_path="b/first.ts", status="renamed", patch=None),
    ]
    case = make_case(
        "syn-950-render",
        inputs=make_inputs(files, pr={"title": "Title \x1b]0;pwn\x07", "body": "Body\u202etxt"}),
        fake_llm={"writer": {"json": {"goal": "scripted writer goal"}}, "verifier": "agree"},
        labels=[make_label(risk="logic", goal="labeler goal")],
    )
    text = render_case(case)
    assert "  1. modified c/zeta.ts (+3 −1)" in text
    assert "  2. added a/alpha.md (+7 −0)" in text
    assert "  3. renamed b/second.ts ← b/first.ts (+1 −1)" in text
    assert text.index("1. modified c/zeta.ts") < text.index("2. added") < text.index("3. renamed")
    assert text.index("--- c/zeta.ts") < text.index("--- a/alpha.md") < text.index("--- b/second.ts")
    assert "--- b/second.ts\n(no patch)" in text
    assert "+const a = 2;" in text
    assert "Title [U+001B]]0;pwn[U+0007]" in text and "Body[U+202E]txt" in text
    assert CONTROL.search(text) is None
    lowered = text.lower()
    for hidden in (
        "floor",
        "risk",
        "verifier",
        "card",
        "scripted writer goal",
        "labeler goal",
        "logic",
        "trivial",
    ):
        assert hidden not in lowered, hidden

    shown = render_case(case, result=_result(), gold=case.labels[0])
    assert shown.startswith(text.rstrip("\n"))
    for expected in (
        "Model goal [U+001B][31mred",
        "b1. First change",
        "b2. Second change",
        "- b/second.ts: Unrelated rename",
        "final sensitive (floor trivial, writer logic, verifier sensitive)",
        "verifier disagree",
        "unexplained: c/third.md",
        "risk     logic",
        "labeler goal",
    ):
        assert expected in shown, expected
    assert CONTROL.search(shown) is None


def test_render_pilot_header_and_unavailable_result() -> None:
    case = make_pilot_case(inputs=make_inputs(pr={"number": 412}))
    result = _result().model_copy(
        update={"status": "unavailable", "failure_reason": "llm_timeout", "card": None}
    )
    text = render_case(case, result=result)
    assert "repo    fictional-org/shop-demo  PR #412" in text
    assert "merged  2026-10-15T00:00:00+00:00" in text
    assert "author  agent (trailer, agent fictional-agent)" in text
    assert "failure  llm_timeout" in text and "goal\n" not in text
