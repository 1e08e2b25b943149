"""Adjudication takes a labeler's answer field by field (issue 15 §4).

`=1` / `=<handle>` take that labeler's answer, `=` the answer every labeler gave; scripted input
streams as in the session tests.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from graft_eval_pipeline.card.models import CardInputs
from graft_eval_pipeline.cli import cli
from graft_eval_pipeline.evalset.labeling.session import run_adjudication_session, run_label_session
from graft_eval_pipeline.evalset.sets.case_schema import LabelSet
from graft_eval_pipeline.evalset.sets.store import CaseSet, read_case, write_case
from graft_eval_pipeline_tests.builders import (
    FIXED_TIME,
    make_case,
    make_file,
    make_inputs,
    make_label,
    make_synthetic_set,
)

PATHS = ["src/cart/discount.ts", ".github/workflows/ci.yml", "docs/pricing.md"]
CASE_ID = "syn-001-split"


def inputs() -> CardInputs:
    return make_inputs([make_file(p) for p in PATHS], pr={"title": "Round discounts half-even"})


def split_labels() -> list[LabelSet]:
    """`alice` and `bob` differ on risk, out-of-scope, goal and notes; agree on changes, flag, confidence."""
    return [
        make_label(
            "alice",
            risk="logic",
            goal="ALICE-GOAL",
            key_behavior_changes=["Halves round to even.", "Totals may move a cent."],
            confidence="medium",
            notes="ALICE-NOTE",
        ),
        make_label(
            "bob",
            risk="sensitive",
            out_of_scope=[".github/workflows/ci.yml", "docs/pricing.md"],
            goal="BOB-GOAL",
            key_behavior_changes=["Halves round to even.", "Totals may move a cent."],
            confidence="medium",
            notes="BOB-NOTE",
        ),
    ]


def split_set(tmp_path: Path) -> CaseSet:
    cs = make_synthetic_set(tmp_path / "set")
    write_case(cs, make_case(CASE_ID, inputs=inputs(), labels=split_labels()))
    return cs


def adjudicate(cs: CaseSet, *answers: str) -> tuple[int, str, LabelSet | None]:
    out = io.StringIO()
    written = run_adjudication_session(
        cs, handle="carol", inp=io.StringIO("\n".join(answers) + "\n"), out=out, now=lambda: FIXED_TIME
    )
    return written, out.getvalue(), read_case(cs, CASE_ID).adjudicated


def test_each_field_offers_the_labelers_answers_and_takes_them_by_number_handle_or_agreement(
    tmp_path: Path,
) -> None:
    cs = split_set(tmp_path)
    # risk: bob's; oos: bob's by handle; goal: alice's; changes, flag, confidence: the agreed ones;
    # notes: the adjudicator's own words
    written, text, adjudicated = adjudicate(cs, "=2", "=bob", "=alice", "=", "=", "=1", "settled together")

    assert written == 1 and adjudicated is not None
    assert adjudicated.model_dump(exclude={"labeled_at", "guide_version"}) == {
        "labeler": "carol",
        "risk": "sensitive",
        "out_of_scope": [".github/workflows/ci.yml", "docs/pricing.md"],
        "goal": "ALICE-GOAL",
        "key_behavior_changes": ["Halves round to even.", "Totals may move a cent."],
        "should_flag": False,
        "confidence": "medium",
        "notes": "settled together",
    }
    assert "=1 takes alice's answer (logic) · =2 takes bob's answer (sensitive)" in text
    assert "=1 takes alice's answer (none) · =2 takes bob's answer (2, 3)" in text  # file numbers
    assert "=1 takes alice's answer · =2 takes bob's answer\nGoal (one line): " in text  # text: see the table
    assert "= takes the answer alice and bob agree on (no)\nShould flag [y/n]: " in text
    assert "= takes the answer alice and bob agree on (medium)\nConfidence [h/m/l]: " in text
    assert "=1 alice, =2 bob; = alone takes the answer they all gave" in text
    # the whole list was taken at the first change's question: no second change question
    assert "Key behavior change 2" not in text


def test_equals_alone_where_the_labelers_differ_or_an_unknown_labeler_is_asked_again(
    tmp_path: Path,
) -> None:
    cs = split_set(tmp_path)
    written, text, adjudicated = adjudicate(
        cs, "=", "=carol", "=3", "s", "", "Rounds discounts.", "", "n", "=", ""
    )

    assert written == 1 and adjudicated is not None
    assert text.count("Risk [t/l/s]: ") == 4
    assert "the labelers differ here: take one (=1 or =alice, =2 or =bob) or answer yourself" in text
    assert text.count("no such labeler: =1 or =alice, =2 or =bob, or answer yourself") == 2
    assert (adjudicated.risk, adjudicated.out_of_scope, adjudicated.goal) == (
        "sensitive",
        [],
        "Rounds discounts.",
    )
    assert adjudicated.key_behavior_changes == []  # an empty first change answered by hand: none
    assert (adjudicated.should_flag, adjudicated.confidence, adjudicated.notes) == (False, "medium", "")


def test_q_after_taking_answers_saves_nothing(tmp_path: Path) -> None:
    cs = split_set(tmp_path)
    written, text, adjudicated = adjudicate(cs, "=1", "=2", "q")
    assert (written, adjudicated) == (0, None)
    assert "stopped; the current case was not saved" in text


def test_labeling_stays_blind_and_takes_an_equals_sign_literally(tmp_path: Path) -> None:
    cs = make_synthetic_set(tmp_path / "set")
    write_case(cs, make_case(CASE_ID, inputs=inputs(), labels=[]))
    out = io.StringIO()
    answers = ["l", "", "=1", "", "n", "h", ""]
    written = run_label_session(
        cs, handle="alice", inp=io.StringIO("\n".join(answers) + "\n"), out=out, now=lambda: FIXED_TIME
    )
    assert written == 1
    assert "takes" not in out.getvalue() and "=1" not in out.getvalue()
    [label] = read_case(cs, CASE_ID).labels
    assert label.goal == "=1"


@pytest.mark.usefixtures("clean_env")
def test_cli_adjudicate_takes_answers_from_the_terminal(tmp_path: Path) -> None:
    cs = split_set(tmp_path)
    result = CliRunner().invoke(
        cli, ["adjudicate", "--set", str(cs.dir), "--as", "carol"], input="=alice\n=1\n=2\n=\n=\n=\n=1\n"
    )
    assert result.exit_code == 0, result.output
    assert "1 case(s) adjudicated by carol" in result.output
    adjudicated = read_case(cs, CASE_ID).adjudicated
    assert adjudicated is not None
    assert (adjudicated.risk, adjudicated.out_of_scope, adjudicated.goal, adjudicated.notes) == (
        "logic",
        [],
        "BOB-GOAL",
        "ALICE-NOTE",
    )
