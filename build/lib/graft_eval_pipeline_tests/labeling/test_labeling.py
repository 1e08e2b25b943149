"""Labeling (spec T10, E17, E25): U-LBL-1..7, bad --apply input, inbox import, a real terminal."""

from __future__ import annotations

import io
import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from graft_eval_pipeline.card.floor import FLOOR_RULE_IDS
from graft_eval_pipeline.card.models import CardInputs
from graft_eval_pipeline.cli import cli
from graft_eval_pipeline.cli import main as cli_main
from graft_eval_pipeline.evalset.labeling import inbox as label_inbox
from graft_eval_pipeline.evalset.labeling.inbox import (
    apply_label_file,
    assign_double,
    import_label_inbox,
)
from graft_eval_pipeline.evalset.labeling.labels import (
    LABELING_GUIDE_VERSION,
    cases_to_adjudicate,
    choose_double,
)
from graft_eval_pipeline.evalset.labeling.session import run_adjudication_session, run_label_session
from graft_eval_pipeline.evalset.sets.case_schema import (
    DOUBLE_LABEL_TAG,
    MAX_KEY_CHANGES,
    EvalCase,
    LabelAnswers,
    LabelSet,
    gold,
)
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.errors import EvalError
from graft_eval_pipeline.evalset.sets.paths import IMPORTED_DIR, INBOX_DIR, REPO_ROOT
from graft_eval_pipeline.evalset.sets.store import (
    CaseSet,
    read_case,
    read_cases,
    write_case,
    write_private,
)
from graft_eval_pipeline_tests.builders import (
    FIXED_TIME,
    make_case,
    make_file,
    make_inputs,
    make_label,
    make_pilot_case,
    make_pilot_set,
    make_synthetic_set,
)

THREE_FILES = ["src/cart/discount.ts", ".github/workflows/ci.yml", "docs/pricing.md"]


def _inputs(paths: list[str] = THREE_FILES, **pr: object) -> CardInputs:
    return make_inputs([make_file(p) for p in paths], pr={"title": "Round discounts half-even", **pr})


def _pilot_case() -> EvalCase:
    return make_pilot_case(pr_number=412, inputs=_inputs(number=412))


def _set_with(tmp_path: Path, *cases: EvalCase) -> CaseSet:
    cs = make_synthetic_set(tmp_path / "set")
    for case in cases:
        write_case(cs, case)
    return cs


def _clock(start: datetime = FIXED_TIME) -> Callable[[], datetime]:
    ticks = iter(range(1000))
    return lambda: start + timedelta(minutes=next(ticks))


def _label(cs: CaseSet, inp: str, **kw: Any) -> tuple[int, str]:
    out = io.StringIO()
    written = run_label_session(cs, handle="alice", inp=io.StringIO(inp), out=out, now=_clock(), **kw)
    return written, out.getvalue()


def _entry(**over: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "risk": "logic",
        "outOfScope": [],
        "goal": "Rounds discounts half-even.",
        "keyBehaviorChanges": ["A 2.5 discount rounds to 2."],
        "shouldFlag": False,
        "confidence": "high",
        "notes": "",
    }
    entry.update(over)
    return entry


def _snapshot(cs: CaseSet) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((cs.dir / "cases").iterdir())}


# --- --apply ------------------------------------------------------------------------------


def test_U_LBL_1_apply_writes_label_set_and_replaces_the_labelers_own(tmp_path: Path) -> None:
    old = make_label("alice", risk="trivial", goal="Old goal.")
    cs = _set_with(
        tmp_path,
        make_case("syn-001-a", inputs=_inputs(), labels=[old, make_label("bob")]),
        make_case("syn-002-b", inputs=_inputs(), labels=[]),
    )
    labels = tmp_path / "labels.json"
    labels.write_text(
        json.dumps(
            {
                "syn-001-a": _entry(outOfScope=["docs/pricing.md", ".github/workflows/ci.yml"]),
                "syn-002-b": _entry(risk="sensitive", shouldFlag=True, confidence="low", notes="unsure"),
            }
        )
    )
    now = datetime(2026, 11, 5, 9, 30, tzinfo=UTC)

    assert apply_label_file(cs, labels, handle="alice", now=now) == ["syn-001-a", "syn-002-b"]

    first = read_case(cs, "syn-001-a")
    assert [lbl.labeler for lbl in first.labels] == ["alice", "bob"]  # replaced in place
    alice = first.labels[0]
    assert alice.labeled_at == now
    assert alice.guide_version == "lg-1"
    assert alice.risk == "logic"
    assert alice.goal == "Rounds discounts half-even."
    assert alice.out_of_scope == [".github/workflows/ci.yml", "docs/pricing.md"]  # stored sorted
    second = read_case(cs, "syn-002-b").labels
    assert len(second) == 1
    assert (second[0].labeler, second[0].risk, second[0].should_flag, second[0].notes) == (
        "alice",
        "sensitive",
        True,
        "unsure",
    )


@pytest.mark.parametrize(
    ("handle", "entries", "message"),
    [
        ("alice", {"syn-404-missing": _entry()}, r"1 case id\(s\) not in the set"),
        ("alice", {"syn-001-a": _entry(outOfScope=["src/not-in-pr.ts"])}, "outOfScope entry 1 is not a file"),
        ("alice@example.com", {"syn-001-a": _entry()}, "looks like an e-mail address"),
        ("alice", {"syn-001-a": _entry(risk="huge")}, "case syn-001-a: risk"),
        ("alice", {"syn-001-a": {"risk": "logic"}}, "case syn-001-a: outOfScope"),
        ("alice", {"syn-001-a": _entry(extra=1)}, "case syn-001-a: an unexpected field in"),
    ],
    ids=["unknown-case", "oos-not-in-files", "email-handle", "bad-risk", "missing-fields", "unknown-field"],
)
def test_apply_rejects_bad_input_and_writes_nothing(
    tmp_path: Path, handle: str, entries: dict[str, Any], message: str
) -> None:
    cs = _set_with(
        tmp_path,
        make_case("syn-001-a", inputs=_inputs(), labels=[]),
        make_case("syn-002-b", inputs=_inputs(), labels=[]),
    )
    # A valid entry first: it must not be written either, since validation covers the whole file.
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"syn-002-b": _entry(), **entries}))
    before = _snapshot(cs)

    with pytest.raises(EvalError, match=message) as info:
        apply_label_file(cs, labels, handle=handle, now=FIXED_TIME)

    assert _snapshot(cs) == before
    assert "\n" not in str(info.value)
    for from_the_file in ("src/not-in-pr.ts", "syn-404-missing", "extra"):  # ids of the set, numbers
        assert from_the_file not in str(info.value)


def test_apply_reports_every_problem_in_one_error(tmp_path: Path) -> None:
    cs = _set_with(tmp_path, make_case("syn-001-a", inputs=_inputs(), labels=[]))
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"syn-404-x": _entry(), "syn-001-a": _entry(confidence="sure")}))
    with pytest.raises(
        EvalError, match=r"2 problem\(s\), nothing written: 1 case id\(s\) not in the set .*; case syn-001-a"
    ):
        apply_label_file(cs, labels, handle="alice", now=FIXED_TIME)


def test_apply_rejects_a_file_that_is_not_a_json_object(tmp_path: Path) -> None:
    cs = _set_with(tmp_path, make_case("syn-001-a", inputs=_inputs(), labels=[]))
    labels = tmp_path / "labels.json"
    labels.write_text("[1, 2]")
    with pytest.raises(EvalError, match="expected a JSON object"):
        apply_label_file(cs, labels, handle="alice", now=FIXED_TIME)
    labels.write_text("{nope")
    with pytest.raises(EvalError, match="not valid JSON"):
        apply_label_file(cs, labels, handle="alice", now=FIXED_TIME)


def test_label_set_is_label_answers_plus_a_stamp_with_the_same_limits_and_field_order(tmp_path: Path) -> None:
    assert issubclass(LabelSet, LabelAnswers)
    assert list(LabelSet.model_fields)[:4] == ["labeler", "labeled_at", "guide_version", "risk"]
    too_many = _entry(keyBehaviorChanges=[f"Change {i}." for i in range(MAX_KEY_CHANGES + 1)])
    with pytest.raises(ValueError, match="at most 10 items"):
        LabelAnswers.model_validate(too_many)
    label = make_label(key_behavior_changes=[f"Change {i}." for i in range(MAX_KEY_CHANGES)])
    with pytest.raises(ValueError, match="at most 10 items"):
        LabelSet.model_validate(
            {**label.to_json_dict(), "keyBehaviorChanges": too_many["keyBehaviorChanges"]}
        )


# --- interactive ----------------------------------------------------------------------------


def test_U_LBL_2_scripted_interactive_label(tmp_path: Path) -> None:
    cs = _set_with(tmp_path, make_case("syn-001-a", inputs=_inputs(), labels=[]))
    answers = [
        "l",
        "2",
        "Rounds discounts half-even.",
        "A 2.5 discount rounds to 2.",
        "Totals may change by a cent.",
        "",
        "y",
        "h",
        "CI edit unexplained.",
    ]
    script = "\n".join(answers) + "\n"

    written, output = _label(cs, script)

    assert written == 1
    [label] = read_case(cs, "syn-001-a").labels
    assert label.model_dump() == {
        "labeler": "alice",
        "labeled_at": FIXED_TIME,
        "guide_version": LABELING_GUIDE_VERSION,
        "risk": "logic",
        "out_of_scope": [".github/workflows/ci.yml"],  # number 2 of the printed list
        "goal": "Rounds discounts half-even.",
        "key_behavior_changes": ["A 2.5 discount rounds to 2.", "Totals may change by a cent."],
        "should_flag": True,
        "confidence": "high",
        "notes": "CI edit unexplained.",
    }
    assert "  2. modified .github/workflows/ci.yml" in output  # render_case's numbered list
    assert output.count(".github/workflows/ci.yml") == 2  # the list once, then the patch heading
    assert "saved syn-001-a" in output


def test_U_LBL_3_interactive_output_is_blind(tmp_path: Path) -> None:
    fake = {
        "writer": {
            "json": {
                "goal": "WRITER-GOAL-TEXT",
                "behavior_changes": [],
                "risk_class": "sensitive",
                "risk_reason": "WRITER-REASON-TEXT",
                "out_of_scope_edits": [],
                "instructions_in_data": False,
            }
        },
        "verifier": "agree",
    }
    case = make_case(
        "syn-001-a",
        inputs=_inputs(),  # a workflow file: the floor would fire ci_config
        tags=["floor-sensitive", "ci"],
        labels=[make_label("bob", risk="sensitive", goal="BOB-GOAL-TEXT", notes="BOB-NOTES-TEXT")],
        fake_llm=fake,
    )
    cs = _set_with(tmp_path, case)

    written, output = _label(cs, "s\n\nRounds discounts.\n\nn\nm\n\n")

    assert written == 1
    assert "Round discounts half-even" in output  # the PR is shown
    assert "src/cart/discount.ts" in output
    for rule in FLOOR_RULE_IDS:
        assert rule not in output
    for hidden in (
        "risk_class",
        "WRITER-GOAL-TEXT",
        "WRITER-REASON-TEXT",
        "bob",
        "BOB-GOAL-TEXT",
        "BOB-NOTES-TEXT",
    ):
        assert hidden not in output
    assert "floor-sensitive" not in output
    assert [lbl.labeler for lbl in read_case(cs, "syn-001-a").labels] == ["bob", "alice"]


def test_U_LBL_4_q_mid_case_writes_nothing_for_that_case(tmp_path: Path) -> None:
    cs = _set_with(
        tmp_path,
        make_case("syn-001-a", inputs=_inputs(), labels=[]),
        make_case("syn-002-b", inputs=_inputs(), labels=[]),
    )
    before = (cs.dir / "cases" / "syn-002-b.case.json").read_bytes()
    # First case complete, then Enter for the next one, then q at the goal prompt.
    written, output = _label(cs, "t\n\nDocs only.\n\nn\nh\n\n\nl\n1\nq\n")

    assert written == 1
    assert [lbl.labeler for lbl in read_case(cs, "syn-001-a").labels] == ["alice"]
    assert (cs.dir / "cases" / "syn-002-b.case.json").read_bytes() == before
    assert "not saved" in output


def test_end_of_input_mid_case_writes_nothing(tmp_path: Path) -> None:
    cs = _set_with(tmp_path, make_case("syn-001-a", inputs=_inputs(), labels=[]))
    written, _ = _label(cs, "s\n1,3\n")
    assert written == 0
    assert read_case(cs, "syn-001-a").labels == []


def test_invalid_answers_are_asked_again_with_a_hint(tmp_path: Path) -> None:
    cs = _set_with(tmp_path, make_case("syn-001-a", inputs=_inputs(), labels=[]))
    script = "x\nl\n4\n1,x\n3, 1\n\nGoal.\n\nmaybe\nn\nsure\nl\n\n"
    written, output = _label(cs, script)

    assert written == 1
    [label] = read_case(cs, "syn-001-a").labels
    assert (label.risk, label.out_of_scope, label.should_flag, label.confidence) == (
        "logic",
        ["docs/pricing.md", "src/cart/discount.ts"],
        False,
        "low",
    )
    assert output.count("numbers between 1 and 3") == 2
    assert "answer t (trivial), l (logic) or s (sensitive)" in output
    assert "one plain sentence is needed" in output
    assert "answer y or n" in output
    assert "answer h (high), m (medium) or l (low)" in output


def test_label_picks_unlabeled_cases_in_id_order_and_double_only(tmp_path: Path) -> None:
    cs = _set_with(
        tmp_path,
        make_case("syn-003-c", inputs=_inputs(), labels=[], tags=[DOUBLE_LABEL_TAG]),
        make_case("syn-001-a", inputs=_inputs(), labels=[make_label("alice")]),
        make_case("syn-002-b", inputs=_inputs(), labels=[make_label("bob")]),
    )
    _, output = _label(cs, "q\n")
    assert "case syn-002-b (1 of 2)" in output

    _, output = _label(cs, "q\n", double_only=True)
    assert "case syn-003-c (1 of 1)" in output

    _, output = _label(cs, "q\n", case_id="syn-001-a")  # --case relabels one's own case
    assert "case syn-001-a (1 of 1)" in output

    with pytest.raises(EvalError, match="case syn-999-x is not in the set"):
        _label(cs, "q\n", case_id="syn-999-x")


def test_stop_at_the_next_case_offer(tmp_path: Path) -> None:
    cs = _set_with(
        tmp_path,
        make_case("syn-001-a", inputs=_inputs(), labels=[]),
        make_case("syn-002-b", inputs=_inputs(), labels=[]),
    )
    written, output = _label(cs, "t\n\nDocs only.\n\nn\nh\n\nn\n")
    assert written == 1
    assert "Next case: syn-002-b (1 left)" in output
    assert read_case(cs, "syn-002-b").labels == []


# --- double labels -----------------------------------------------------------------------------


def test_U_LBL_5_assign_double_tags_the_minimum_and_is_idempotent(tmp_path: Path) -> None:
    cs = _set_with(tmp_path, *(make_case(f"syn-{i:03d}-c", inputs=_inputs()) for i in range(10)))

    tagged = assign_double(cs, fraction=0.2, minimum=3, seed=1)

    assert len(tagged) == 3
    on_disk = [
        cid for cid in (f"syn-{i:03d}-c" for i in range(10)) if DOUBLE_LABEL_TAG in read_case(cs, cid).tags
    ]
    assert on_disk == tagged
    before = _snapshot(cs)
    assert assign_double(cs, fraction=0.2, minimum=3, seed=1) == []
    assert assign_double(cs, fraction=0.2, minimum=3, seed=7) == []  # another seed: still enough tagged
    assert _snapshot(cs) == before


def test_choose_double_is_seeded_stratified_and_ignores_labels() -> None:
    docs = [
        make_case(f"syn-1{i:02d}-docs", inputs=_inputs(["docs/a.md"]), labels=[make_label(risk="trivial")])
        for i in range(8)
    ]
    ci = [
        make_case(f"syn-2{i:02d}-ci", inputs=_inputs([".github/workflows/ci.yml"]), labels=[])
        for i in range(8)
    ]
    cases = docs + ci
    first = choose_double(cases, fraction=0.25, minimum=2, seed=3)
    assert first == choose_double(list(reversed(cases)), fraction=0.25, minimum=2, seed=3)
    assert len(first) == 4
    # Two equal strata get two picks each.
    assert sum(cid.endswith("-docs") for cid in first) == 2
    # Labels do not steer the choice (gold-free strata).
    relabeled = [c.model_copy(update={"labels": []}) for c in docs] + ci
    assert choose_double(relabeled, fraction=0.25, minimum=2, seed=3) == first
    # More tags than needed already: nothing new; the target is capped at the case count.
    assert choose_double(cases[:2], fraction=0.5, minimum=20, seed=3) == sorted(c.id for c in cases[:2])


def test_choose_double_rejects_bad_fraction() -> None:
    with pytest.raises(EvalError, match="--fraction"):
        choose_double([make_case()], fraction=1.5, minimum=1, seed=1)


# --- guide ---------------------------------------------------------------------------------------


def test_U_LBL_6_guide_version_matches_the_guide_first_line() -> None:
    first_line = (REPO_ROOT / "docs" / "labeling-guide.md").read_text(encoding="utf-8").splitlines()[0]
    assert first_line == f"Labeling guide {LABELING_GUIDE_VERSION}"
    guide = (REPO_ROOT / "docs" / "labeling-guide.md").read_text(encoding="utf-8")
    for number in range(1, 12):
        assert f"\n## {number}. " in guide


# --- adjudication --------------------------------------------------------------------------------


def test_U_LBL_7_adjudicate_only_disagreements_then_gold_is_the_adjudication(tmp_path: Path) -> None:
    agree = [make_label("alice", goal="A."), make_label("bob", goal="B.")]
    disagree = [
        make_label("alice", risk="logic", goal="ALICE-GOAL", notes="ALICE-NOTE"),
        make_label("bob", risk="sensitive", out_of_scope=["docs/pricing.md"], goal="BOB-GOAL"),
    ]
    fake = {"writer": {"json": {"risk_class": "trivial", "goal": "WRITER-GOAL"}}, "verifier": "agree"}
    cs = _set_with(
        tmp_path,
        make_case("syn-001-agree", inputs=_inputs(), labels=agree),
        make_case("syn-002-split", inputs=_inputs(), labels=disagree, fake_llm=fake),
        make_case(
            "syn-003-done", inputs=_inputs(), labels=disagree, adjudicated=make_label("carol", risk="logic")
        ),
        make_case("syn-004-single", inputs=_inputs(), labels=[make_label("alice")]),
        make_case("syn-005-none", inputs=_inputs(), labels=[]),
    )
    assert [c.id for c in cases_to_adjudicate(read_cases(cs))] == ["syn-002-split"]
    with pytest.raises(EvalError, match="syn-001-agree does not need adjudication"):
        cases_to_adjudicate(read_cases(cs), case_id="syn-001-agree")

    out = io.StringIO()
    written = run_adjudication_session(
        cs,
        handle="carol",
        inp=io.StringIO("s\n3\nRounds discounts.\n\nn\nm\nsettled together\n"),
        out=out,
        now=_clock(),
    )

    assert written == 1
    text = out.getvalue()
    assert "case syn-002-split (1 of 1)" in text
    assert "ALICE-GOAL" in text and "BOB-GOAL" in text and "ALICE-NOTE" in text  # side by side
    header = next(line for line in text.splitlines() if "labeler" in line)
    assert header.index("alice") < header.index("bob")
    assert "* risk" in text and "* out-of-scope" in text
    assert "risk_class" not in text and "WRITER-GOAL" not in text  # never model output
    case = read_case(cs, "syn-002-split")
    assert case.adjudicated is not None
    assert (case.adjudicated.labeler, case.adjudicated.risk, case.adjudicated.out_of_scope) == (
        "carol",
        "sensitive",
        ["docs/pricing.md"],
    )
    assert gold(case) == case.adjudicated
    assert cases_to_adjudicate(read_cases(cs)) == []


# --- inbox import ----------------------------------------------------------------------------------


def _inbox_doc(labeler: str, labels: dict[str, Any]) -> str:
    return json.dumps({"labeler": labeler, "labels": labels})


def test_import_label_inbox_synthetic_set(tmp_path: Path) -> None:
    cs = _set_with(
        tmp_path,
        make_case("syn-001-a", inputs=_inputs(), labels=[]),
        make_case("syn-002-b", inputs=_inputs(), labels=[]),
    )
    inbox = cs.dir / INBOX_DIR
    inbox.mkdir()
    (inbox / "a-alice.json").write_text(
        _inbox_doc("alice", {"syn-001-a": _entry(), "syn-002-b": _entry(risk="trivial")})
    )
    (inbox / "b-bob.json").write_text(_inbox_doc("bob", {"syn-001-a": _entry(), "syn-002-b": _entry()}))
    # Bad: one unknown case id → the whole file is left out, and left in place.
    (inbox / "c-carol.json").write_text(_inbox_doc("carol", {"syn-001-a": _entry(), "syn-777-x": _entry()}))
    (inbox / "d-dave.json").write_text(_inbox_doc("dave@example.com", {"syn-001-a": _entry()}))
    (inbox / "e-sealed.json.enc").write_text("{}")
    (inbox / "notes.txt").write_text("ignored")
    now = datetime(2026, 11, 6, 8, 0, tzinfo=UTC)

    result = import_label_inbox(cs, now=now)

    assert result.imported_files == ["a-alice.json", "b-bob.json"]
    assert result.labels_by_labeler == {"alice": 2, "bob": 2}
    assert sorted(result.bad_files) == ["c-carol.json", "d-dave.json", "e-sealed.json.enc"]
    assert "1 case id(s) not in the set" in result.bad_files["c-carol.json"]
    assert "syn-777-x" not in result.bad_files["c-carol.json"]
    assert "e-mail" in result.bad_files["d-dave.json"]
    assert (result.case_count, result.gold_count, result.needs_adjudication) == (2, 1, ["syn-002-b"])
    assert [lbl.labeler for lbl in read_case(cs, "syn-001-a").labels] == ["alice", "bob"]
    assert read_case(cs, "syn-001-a").labels[0].labeled_at == now
    assert sorted(p.name for p in inbox.iterdir() if p.is_file()) == [
        "c-carol.json",
        "d-dave.json",
        "e-sealed.json.enc",
        "notes.txt",
    ]
    assert sorted(p.name for p in (cs.dir / IMPORTED_DIR).iterdir()) == [
        "20261106T080000Z-a-alice.json",
        "20261106T080000Z-b-bob.json",
    ]
    # A second import finds nothing new and changes no case.
    before = _snapshot(cs)
    again = import_label_inbox(cs, now=now)
    assert again.imported_files == [] and again.labels_by_labeler == {}
    assert _snapshot(cs) == before


def test_import_label_inbox_pilot_set_reads_sealed_files(tmp_path: Path) -> None:
    cs = make_pilot_set(tmp_path / "pilot-acme")
    case = _pilot_case()
    write_case(cs, case)
    write_private(
        cs, f"{INBOX_DIR}/alice.json", _inbox_doc("alice", {case.id: _entry(outOfScope=["docs/pricing.md"])})
    )
    (cs.dir / INBOX_DIR / "plain.json").write_text(_inbox_doc("bob", {case.id: _entry()}))

    result = import_label_inbox(cs, now=FIXED_TIME)

    assert result.imported_files == ["alice.json.enc"]
    assert list(result.bad_files) == ["plain.json"]
    assert "plaintext" in result.bad_files["plain.json"]
    [label] = read_case(cs, case.id).labels
    assert label.out_of_scope == ["docs/pricing.md"]
    moved = cs.dir / IMPORTED_DIR / "20261015T000000Z-alice.json.enc"
    assert moved.is_file() and "docs/pricing.md" not in moved.read_text()  # still sealed
    assert not (cs.dir / INBOX_DIR / "alice.json.enc").exists()
    assert result.gold_count == 1


def test_import_with_no_inbox_is_a_no_op(tmp_path: Path) -> None:
    cs = _set_with(tmp_path, make_case("syn-001-a", inputs=_inputs()))
    result = import_label_inbox(cs, now=FIXED_TIME)
    assert (result.imported_files, result.bad_files, result.case_count, result.gold_count) == ([], {}, 1, 1)


# --- a label written meanwhile (by a `label` session or the nightly import) is kept ----------------


def _write_meanwhile(monkeypatch: pytest.MonkeyPatch, cs: CaseSet, case_id: str) -> None:
    """After the bulk read, another writer adds carol's label to `case_id` (the stale copy lacks it)."""
    real_read_cases = read_cases

    def read_then_concurrent_write(case_set: CaseSet) -> list[EvalCase]:
        stale = real_read_cases(case_set)
        fresh = read_case(cs, case_id)
        write_case(cs, fresh.model_copy(update={"labels": [*fresh.labels, make_label("carol", goal="C.")]}))
        return stale

    monkeypatch.setattr(label_inbox, "read_cases", read_then_concurrent_write)


def test_apply_keeps_a_label_written_between_read_and_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cs = _set_with(tmp_path, make_case("syn-001-a", inputs=_inputs(), labels=[]))
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"syn-001-a": _entry()}))
    _write_meanwhile(monkeypatch, cs, "syn-001-a")

    assert apply_label_file(cs, labels, handle="alice", now=FIXED_TIME) == ["syn-001-a"]

    assert [lbl.labeler for lbl in read_case(cs, "syn-001-a").labels] == ["carol", "alice"]


def test_import_keeps_a_label_written_between_read_and_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cs = _set_with(tmp_path, make_case("syn-001-a", inputs=_inputs(), labels=[]))
    (cs.dir / INBOX_DIR).mkdir()
    (cs.dir / INBOX_DIR / "alice.json").write_text(_inbox_doc("alice", {"syn-001-a": _entry()}))
    _write_meanwhile(monkeypatch, cs, "syn-001-a")

    result = import_label_inbox(cs, now=FIXED_TIME)

    assert result.imported_files == ["alice.json"]
    assert [lbl.labeler for lbl in read_case(cs, "syn-001-a").labels] == ["carol", "alice"]


def test_assign_double_keeps_a_label_written_between_read_and_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cs = _set_with(tmp_path, make_case("syn-001-a", inputs=_inputs(), labels=[]))
    _write_meanwhile(monkeypatch, cs, "syn-001-a")

    assert assign_double(cs, fraction=1, minimum=1, seed=1) == ["syn-001-a"]

    case = read_case(cs, "syn-001-a")
    assert [lbl.labeler for lbl in case.labels] == ["carol"]
    assert case.tags == [DOUBLE_LABEL_TAG]


# --- the real console script in a pseudo-terminal ----------------------------------------------------


def _read_until(fd: int, needle: bytes, seen: bytearray, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while needle not in seen:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"timed out waiting for {needle!r}; got {bytes(seen[-400:])!r}")
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the child closed the terminal
                chunk = b""
            if not chunk:
                raise AssertionError(f"terminal closed before {needle!r}; got {bytes(seen[-400:])!r}")
            seen.extend(chunk)


def test_label_command_in_a_real_pseudo_terminal(tmp_path: Path) -> None:
    key_text = generate_key()
    eval_dir = tmp_path / "eval-home"
    cs = make_pilot_set(eval_dir / "pilot-acme", key=parse_key(key_text))
    case = _pilot_case()
    write_case(cs, case)
    script = Path(sys.executable).parent / "graft-eval"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "GRAFT_EVAL_DIR": str(eval_dir),
        "GRAFT_EVAL_KEY": key_text,
        "TERM": "dumb",
    }
    leader, follower = os.openpty()
    proc = subprocess.Popen(
        [str(script), "label", "--set", str(cs.dir), "--as", "alice"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        close_fds=True,
    )
    os.close(follower)
    seen = bytearray()
    try:
        for prompt, answer in [
            (b"Risk [t/l/s]: ", b"s"),
            (b"Out-of-scope files", b"9"),  # outside the list: asked again
            (b"numbers between 1 and 3", b"2"),
            (b"Goal (one line): ", b"Rounds discounts half-even."),
            (b"Key behavior change 1", b"A 2.5 discount rounds to 2."),
            (b"Key behavior change 2", b""),
            (b"Should flag [y/n]: ", b"y"),
            (b"Confidence [h/m/l]: ", b"m"),
            (b"Notes (one line, may be empty): ", b"CI file unexplained."),
        ]:
            _read_until(leader, prompt, seen)
            os.write(leader, answer + b"\n")
        _read_until(leader, b"1 case(s) labeled by alice", seen)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(leader)
    assert b"Round discounts half-even" in seen
    assert b"saved pilot-acme--shop-demo-412" in seen
    [label] = read_case(cs, case.id).labels
    assert (label.labeler, label.risk, label.out_of_scope, label.should_flag, label.confidence) == (
        "alice",
        "sensitive",
        [".github/workflows/ci.yml"],
        True,
        "medium",
    )


# --- commands (graft-eval label / assign-double / adjudicate / agreement) --------------------------


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GRAFT_EVAL_KEY", raising=False)


def _six_cases_labeled_by_bob(tmp_path: Path) -> CaseSet:
    risks = ["trivial", "logic", "sensitive", "logic", "trivial", "logic"]
    return _set_with(
        tmp_path,
        *(
            make_case(f"syn-00{i}-c", inputs=_inputs(), labels=[make_label("bob", risk=risk)])
            for i, risk in enumerate(risks)
        ),
    )


@pytest.mark.usefixtures("no_key")
def test_cli_label_apply_then_agreement(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cs = _six_cases_labeled_by_bob(tmp_path)
    labels = tmp_path / "labels.json"
    risks = ["trivial", "logic", "sensitive", "logic", "logic", "logic"]  # syn-004-c disagrees
    labels.write_text(json.dumps({f"syn-00{i}-c": _entry(risk=r) for i, r in enumerate(risks)}))

    assert cli_main(["label", "--set", str(cs.dir), "--as", "alice", "--apply", str(labels)]) == 0
    assert "wrote 6 label set(s) by alice" in capsys.readouterr().out
    assert read_case(cs, "syn-000-c").labels[-1].labeler == "alice"

    assert cli_main(["agreement", "--set", str(cs.dir), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    [pair] = report["pairs"]
    assert pair["labelers"] == ["alice", "bob"]
    assert pair["sharedCases"] == 6
    assert pair["disagreeingCaseIds"] == ["syn-004-c"]

    assert cli_main(["agreement", "--set", str(cs.dir)]) == 0
    text = capsys.readouterr().out
    assert "alice / bob: 6 shared cases" in text
    assert "src/" not in text and "Rounds discounts" not in text


@pytest.mark.usefixtures("no_key")
def test_cli_label_apply_bad_file_exits_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cs = _six_cases_labeled_by_bob(tmp_path)
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({"syn-000-c": _entry(), "syn-404-x": _entry()}))
    before = _snapshot(cs)

    assert cli_main(["label", "--set", str(cs.dir), "--as", "alice", "--apply", str(labels)]) == 2
    err = capsys.readouterr().err
    assert "error: labels.json: 1 problem(s), nothing written: 1 case id(s) not in the set" in err
    assert "syn-404-x" not in err
    assert _snapshot(cs) == before

    assert (
        cli_main(["label", "--set", str(cs.dir), "--as", "alice", "--apply", str(labels), "--double-only"])
        == 2
    )
    assert "drop --case and --double-only" in capsys.readouterr().err


@pytest.mark.usefixtures("no_key")
def test_cli_assign_double_twice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cs = _six_cases_labeled_by_bob(tmp_path)
    args = ["assign-double", "--set", str(cs.dir), "--fraction", "0.2", "--min", "3", "--seed", "1"]
    assert cli_main(args) == 0
    assert "tagged 3 case(s) double-label" in capsys.readouterr().out
    assert cli_main(args) == 0
    assert "no case tagged" in capsys.readouterr().out


@pytest.mark.usefixtures("no_key")
def test_cli_adjudicate_reads_the_terminal_streams(tmp_path: Path) -> None:
    split = [make_label("alice", risk="logic"), make_label("bob", risk="sensitive")]
    cs = _set_with(tmp_path, make_case("syn-001-a", inputs=_inputs(), labels=split))

    result = CliRunner().invoke(
        cli, ["adjudicate", "--set", str(cs.dir), "--as", "carol"], input="s\n\nRounds discounts.\n\nn\nh\n\n"
    )

    assert result.exit_code == 0, result.output
    assert "1 case(s) adjudicated by carol" in result.output
    adjudicated = read_case(cs, "syn-001-a").adjudicated
    assert adjudicated is not None and (adjudicated.labeler, adjudicated.risk) == ("carol", "sensitive")
