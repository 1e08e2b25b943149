"""Per-case results (issue 15 §1).

`graft-eval cases`, report.md's "Cases to look at" and `show --with-result` in fake mode.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.report.case_kinds import MAX_MARKDOWN_CASES, markdown_cases_section
from graft_eval_pipeline.evalset.report.publish import build_report
from graft_eval_pipeline.evalset.scoring.metrics import compute_metrics
from graft_eval_pipeline.evalset.scoring.report_schema import ModelPair, PromptInfo, RunInfo
from graft_eval_pipeline.evalset.scoring.rows import HarnessRun, git_info
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.store import write_case
from graft_eval_pipeline_tests.builders import (
    FIXED_TIME,
    copy_synthetic,
    make_file,
    make_inputs,
    make_label,
    make_pilot_case,
    make_pilot_set,
)
from graft_eval_pipeline_tests.row_builders import make_row

# What the fake run of the committed synthetic set makes (eval/baselines/synthetic.json).
SYNTHETIC_KINDS = {  # the verifier's two correct flags (syn-022, syn-026) are no failure
    "syn-016-too-large": ["unavailable"],
    "syn-027-writer-down": ["over", "unavailable"],
    "syn-029-pure-rename": ["over"],
}
SECRET_TITLE = "Quietly rotate the ledger signing key"
SECRET_PATH = "services/ledger/signing_key.py"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GRAFT_EVAL_KEY", "ANTHROPIC_API_KEY", "GRAFT_LLM_MODEL_FAST", "GRAFT_LLM_MODEL_STRONG"):
        monkeypatch.delenv(name, raising=False)


def cases_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    assert main(["cases", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cases_lists_every_case_of_the_latest_run_with_why_to_look(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    assert main(["run", "--set", str(synthetic)]) == 0
    (run_dir,) = (synthetic / "runs").iterdir()

    data = cases_json(capsys, "--set", str(synthetic))
    assert data["runId"] == run_dir.name and data["llm"] == "fake" and len(data["cases"]) == 30
    kinds = {c["id"]: c["kinds"] for c in data["cases"] if c["kinds"]}
    assert kinds == SYNTHETIC_KINDS
    row = next(c for c in data["cases"] if c["id"] == "syn-029-pure-rename")
    assert row == {
        "id": "syn-029-pure-rename",
        "kinds": ["over"],
        "changed": False,
        "gold": "trivial",
        "floor": "logic",
        "model": "trivial",
        "final": "logic",
        "status": "ok",
        "rulesFired": ["partial_view"],
        "verifier": "agree",
    }

    for kind in ("over", "unavailable"):
        only = cases_json(capsys, "--set", str(synthetic), "--only", kind, "--run", run_dir.name)
        assert [c["id"] for c in only["cases"]] == sorted(i for i, k in SYNTHETIC_KINDS.items() if kind in k)
    for kind in ("under", "missed-flag", "false-flag", "out-of-scope-miss", "out-of-scope-extra"):
        assert cases_json(capsys, "--set", str(synthetic), "--only", kind)["cases"] == [], kind
    # the fake run matches the committed baseline: nothing changed
    assert cases_json(capsys, "--set", str(synthetic), "--only", "changed")["cases"] == []

    capsys.readouterr()
    assert main(["cases", "--set", str(synthetic), "--only", "over"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"set synthetic, run {run_dir.name} (fake): 30 cases, 2 over-classified"
    assert out[1].split() == [
        "case",
        "why",
        "gold",
        "floor",
        "model",
        "final",
        "status",
        "verifier",
        "rules",
        "fired",
    ]
    assert out[3].split() == [
        "syn-029-pure-rename",
        "over",
        "trivial",
        "logic",
        "trivial",
        "logic",
        "ok",
        "agree",
        "partial_view",
    ]
    assert len(out) == 4


def test_cases_only_changed_lists_the_cases_that_differ_from_the_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    baseline = synthetic.parent / "baselines" / "synthetic.json"
    data = json.loads(baseline.read_text())
    for row in data["cases"]:
        if row["id"] in ("syn-004-ci-workflow", "syn-010-migration"):
            row["final"] = "logic"
    baseline.write_text(json.dumps(data))
    assert main(["run", "--set", str(synthetic)]) == 0
    changed = cases_json(capsys, "--set", str(synthetic), "--only", "changed")["cases"]
    assert [c["id"] for c in changed] == ["syn-004-ci-workflow", "syn-010-migration"]
    assert all(c["kinds"] == ["changed"] for c in changed)

    baseline.unlink()
    capsys.readouterr()
    assert main(["cases", "--set", str(synthetic), "--only", "changed"]) == 2
    assert "has no baseline" in capsys.readouterr().err


def test_cases_on_a_pilot_set_finds_the_under_classified_case_and_prints_no_content(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    key = generate_key()
    monkeypatch.setenv("GRAFT_EVAL_KEY", key)
    set_dir = tmp_path / "evalroot" / "pilot-acme"
    cs = make_pilot_set(set_dir, key=parse_key(key))
    inputs = make_inputs([make_file(SECRET_PATH)], pr={"title": SECRET_TITLE, "number": 413})
    write_case(cs, make_pilot_case(pr_number=412, labels=[make_label(risk="trivial")]))
    # the null model calls everything trivial: a logic case is under-classified
    write_case(cs, make_pilot_case(pr_number=413, inputs=inputs, labels=[make_label(risk="logic")]))

    capsys.readouterr()
    assert main(["cases", "--set", str(set_dir), "--only", "under"]) == 2
    assert "has no run yet" in capsys.readouterr().err
    assert main(["cases", "--set", str(set_dir)]) == 0  # no run yet: the ids, from the store
    out = capsys.readouterr()
    assert out.out.split() == ["pilot-acme--shop-demo-412", "pilot-acme--shop-demo-413"]
    assert "no run yet" in out.err

    assert main(["run", "--set", str(set_dir)]) == 0
    under = cases_json(capsys, "--set", str(set_dir), "--only", "under")["cases"]
    assert [(c["id"], c["gold"], c["final"]) for c in under] == [
        ("pilot-acme--shop-demo-413", "logic", "trivial")
    ]
    capsys.readouterr()
    assert main(["cases", "--set", str(set_dir)]) == 0
    assert main(["cases", "--set", str(set_dir), "--json"]) == 0
    shown = capsys.readouterr()
    (run_dir,) = (set_dir / "runs").iterdir()
    markdown = (run_dir / "report.md").read_text()
    assert "| pilot-acme--shop-demo-413 | under | logic | trivial | trivial | trivial | ok |" in markdown
    for text in (shown.out, shown.err, markdown):
        assert SECRET_TITLE not in text and SECRET_PATH not in text and "ledger" not in text


def test_cases_refuses_an_unknown_or_malformed_run_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    assert main(["run", "--set", str(synthetic)]) == 0
    capsys.readouterr()
    assert main(["cases", "--set", str(synthetic), "--run", "20200101T000000Z-abcd"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --run: set synthetic has no run 20200101T000000Z-abcd")
    assert err.count("\n") == 1
    assert main(["cases", "--set", str(synthetic), "--run", "../../etc"]) == 2
    assert "is not a run id" in capsys.readouterr().err
    assert main(["cases", "--set", str(synthetic), "--only", "worse"]) == 2
    assert "Usage:" in capsys.readouterr().err


def test_show_points_to_cases_for_an_unknown_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    assert main(["show", "--set", str(synthetic), "--case", "syn-999-nope"]) == 2
    assert f"list the ids with `graft-eval cases --set {synthetic}`" in capsys.readouterr().err


def test_show_with_result_derives_the_fake_card_when_nothing_is_cached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    assert main(["show", "--set", str(synthetic), "--case", "syn-022-oos-flagged", "--with-result"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("note: the card above is the fake model's, derived again; no cached result")
    card = out[out.index("=== fake card result") :]
    # the case's script: its writer's goal and the verifier's disagreement, then the gold label
    assert "Fix a spelling mistake in the guide." in card
    assert "risk     final logic (floor trivial" in card and "verifier disagree" in card
    assert "=== gold label" in card and not (synthetic / "cache").exists()

    # without --with-result nothing of the engine is shown (labeling stays blind)
    assert main(["show", "--set", str(synthetic), "--case", "syn-022-oos-flagged"]) == 0
    assert "=== " not in capsys.readouterr().out


def test_report_markdown_lists_at_most_a_hundred_cases_worst_first() -> None:
    rows = [make_row(f"syn-{n:03d}-over", gold="trivial", floor="logic") for n in range(1, 121)]
    rows += [
        make_row("syn-500-under", gold="logic", floor="trivial", model="trivial"),
        make_row("syn-600-severe", gold="sensitive", floor="trivial", model="trivial"),
        make_row("syn-700-fine", gold="logic", floor="logic"),
    ]
    harness = HarnessRun(
        set={
            "set_id": "synthetic",
            "kind": "synthetic",
            "case_set_hash": "0" * 64,
            "cases": len(rows),
            "scored": len(rows),
            "unlabeled": 0,
            "needs_adjudication": 0,
        },
        prompt=PromptInfo(prompt_version="p", prompt_fingerprint="f"),
        models=ModelPair(fast="a", strong="b"),
        llm="fake",
        run=RunInfo(complete=True, skipped_budget=0, cached_results=0, duration_ms=1),
        created_at=FIXED_TIME,
        git=git_info(Path("/nonexistent")),
        rows=rows,
    )
    report = build_report(harness, compute_metrics(rows))
    section = markdown_cases_section(report, None)
    table = [line for line in section if line.startswith("| syn-")]
    assert len(table) == MAX_MARKDOWN_CASES
    assert table[0].startswith("| syn-600-severe | severe under |")
    assert table[1].startswith("| syn-500-under | under |")
    assert "122 of 123 cases: 2 under-classified, 120 over-classified" in "\n".join(section)
    assert section[-1] == "… and 22 more (`graft-eval cases` lists them all)."
