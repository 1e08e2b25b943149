"""Fake-mode harness (U-HAR-1, -7, -9, -10) and the synthetic end-to-end runs (E-SYN-1, E-SYN-2)."""

from __future__ import annotations

import asyncio
import gc
import json
from pathlib import Path
from typing import Any, NoReturn

import pytest

from graft_eval_pipeline.card.generate import generate_card
from graft_eval_pipeline.card.llm import LlmClient
from graft_eval_pipeline.card.models import CardInputs
from graft_eval_pipeline.card.options import GenerateOptions
from graft_eval_pipeline.card.result import CardResult
from graft_eval_pipeline.evalset.evaluate import run_eval
from graft_eval_pipeline.evalset.report.baseline import diff_reports
from graft_eval_pipeline.evalset.report.files import load_report
from graft_eval_pipeline.evalset.report.thresholds import check_failed, check_thresholds, load_thresholds
from graft_eval_pipeline.evalset.run import harness
from graft_eval_pipeline.evalset.run.options import RunOptions
from graft_eval_pipeline.evalset.run.pool import run_pool
from graft_eval_pipeline.evalset.scoring.report_schema import EvalReport
from graft_eval_pipeline.evalset.sets import store
from graft_eval_pipeline.evalset.sets.case_schema import EvalCase, FloorConfig
from graft_eval_pipeline.evalset.sets.errors import EvalError
from graft_eval_pipeline.evalset.sets.paths import SYNTHETIC_BASELINE, SYNTHETIC_DIR, THRESHOLDS_FILE
from graft_eval_pipeline.evalset.sets.store import open_set, read_case
from graft_eval_pipeline_tests.builders import NOW, copy_synthetic, make_case, run_options
from graft_eval_pipeline_tests.row_builders import gold_risk

SYNTHETIC = SYNTHETIC_DIR
BASELINE = SYNTHETIC_BASELINE


def options(set_dir: Path, **over: Any) -> RunOptions:
    return run_options(open_set(set_dir, None), **over)


def run(opts: RunOptions) -> EvalReport:
    return run_eval(opts)


@pytest.fixture(scope="module")
def synthetic_report() -> EvalReport:
    return run(options(SYNTHETIC))


def test_U_HAR_1_fake_mode_never_builds_a_live_client_nor_touches_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_dir = copy_synthetic(tmp_path)

    def forbidden(*_args: object, **_kwargs: object) -> NoReturn:
        raise AssertionError("fake mode touched the live client or the cache")

    monkeypatch.setattr(store, "read_private", forbidden)
    monkeypatch.setattr(store, "write_private", forbidden)
    report = run(options(set_dir, llm_factory=forbidden))
    assert report.llm == "fake" and report.set.cases == 30
    assert not (set_dir / "cache").exists()
    assert sorted(p.name for p in set_dir.iterdir()) == ["README.md", "cases", "set.json"]


def test_U_HAR_7_pool_never_has_more_than_concurrency_cases_in_flight() -> None:
    cases = [make_case(f"syn-9{i:02d}-x") for i in range(10)]
    in_flight, peak = 0, 0
    done: list[str] = []

    async def gated(case: EvalCase) -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.001 * (len(case.id) % 3))
        in_flight -= 1
        return case.id

    results = asyncio.run(run_pool(cases, gated, 3, lambda case, _r: done.append(case.id)))
    assert peak == 3
    assert results == [c.id for c in cases]  # in case order, whatever the finishing order
    assert sorted(done) == [c.id for c in cases]


def broken_copy(tmp_path: Path) -> Path:
    """The synthetic set with a 31st case, last in id order, whose label has no such class."""
    set_dir = copy_synthetic(tmp_path)
    data = json.loads((set_dir / "cases" / "syn-001-docs-typo.case.json").read_text())
    data["id"] = "syn-031-broken"
    data["labels"][0]["risk"] = "catastrophic"
    (set_dir / "cases" / "syn-031-broken.case.json").write_text(json.dumps(data))
    return set_dir


def test_U_HAR_9_a_bad_case_aborts_a_fake_run_with_its_id_and_nothing_written(tmp_path: Path) -> None:
    """A fake run reads each case once, and a bad case aborts it with nothing written.

    The cases before the bad one get their scripted cards (no call leaves the process), then the
    run aborts naming it: no report, no card-results file (it is renamed into place only when the
    run completes).
    """
    set_dir = broken_copy(tmp_path)
    kept = options(set_dir, card_results="assets/harness_run.card-results.x.jsonl")
    with pytest.raises(EvalError, match="syn-031-broken"):
        run_eval(kept)
    left = sorted(p.relative_to(set_dir).as_posix() for p in set_dir.rglob("*") if "cases" not in p.parts)
    assert left == ["README.md", "assets", "set.json"]  # the folder the writer made, empty


def test_U_HAR_9_a_fake_run_of_selected_cases_checks_every_case_before_any_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_dir = broken_copy(tmp_path)
    calls: list[int] = []

    async def counting(*args: object, **kwargs: object) -> NoReturn:
        calls.append(1)
        raise AssertionError("no card may be made")

    monkeypatch.setattr(harness, "generate_card", counting)
    only_one = options(set_dir, case_filter=lambda case_id, _tags: case_id == "syn-001-docs-typo")
    with pytest.raises(EvalError, match="syn-031-broken"):
        run_eval(only_one)
    assert calls == []


def test_one_case_raising_aborts_the_run_naming_the_case(monkeypatch: pytest.MonkeyPatch) -> None:
    real = generate_card

    async def buggy(inputs: CardInputs, llm: LlmClient, opts: GenerateOptions) -> CardResult:
        if inputs.pr.number == 105:
            raise KeyError("boom")
        return await real(inputs, llm, opts)

    monkeypatch.setattr(harness, "generate_card", buggy)
    with pytest.raises(EvalError, match=r"case syn-005-policy-file: the card engine raised KeyError") as err:
        run_eval(options(SYNTHETIC))
    assert "boom" not in str(err.value)
    assert gc.isenabled()  # the collector pause of a fake run ends with the run, even an aborted one


def test_U_HAR_10_case_floor_config_reaches_the_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    only_011 = options(SYNTHETIC, case_filter=lambda case_id, _tags: case_id == "syn-011-configured-path")
    (row,) = run(only_011).cases
    assert (row.floor, row.floor_rules, row.final) == ("sensitive", ["configured_path"], "sensitive")

    original = read_case(open_set(SYNTHETIC, None), "syn-011-configured-path")
    assert original.fake_llm is not None
    # a trivial floor picks the fast writer, whose "logic" answer escalates: script that call too
    script = original.fake_llm.model_copy(update={"writer_escalated": original.fake_llm.writer})
    without_glob = original.model_copy(update={"floor_config": FloorConfig(), "fake_llm": script})
    monkeypatch.setattr(harness, "iter_cases", lambda _cs: iter([without_glob]))
    (control,) = run(only_011).cases
    assert (control.floor, control.floor_rules) == ("trivial", [])


def test_progress_lines_hold_ids_and_classes_only() -> None:
    lines: list[str] = []
    report = run(options(SYNTHETIC, progress=lines.append, concurrency=2))
    assert len(lines) == 30
    assert "syn-016-too-large floor sensitive final sensitive unavailable (too_large)" in lines
    assert "syn-001-docs-typo floor trivial final trivial ok" in lines
    assert report.run.duration_ms == 0 and report.created_at == NOW
    assert gc.isenabled()


def test_E_SYN_1_synthetic_run_equals_the_baseline_and_passes_every_threshold(
    synthetic_report: EvalReport,
) -> None:
    baseline = load_report(BASELINE)
    diff = diff_reports(baseline, synthetic_report)
    assert diff.warnings == []
    assert diff.comparable and diff.equal, [*diff.case_changes, *diff.changes][:10]
    results = check_thresholds(synthetic_report, load_thresholds(THRESHOLDS_FILE), diff, True)
    assert [t.name for t in results if not t.passed] == []
    assert not check_failed(results)
    assert synthetic_report.metrics.under_classification_final.value == 0


def test_E_SYN_2_synthetic_run_reproduces_the_headline_values(synthetic_report: EvalReport) -> None:
    m = synthetic_report.metrics
    assert synthetic_report.set.model_dump(exclude={"case_set_hash"}) == {
        "set_id": "synthetic",
        "kind": "synthetic",
        "cases": 30,
        "scored": 30,
        "unlabeled": 0,
        "needs_adjudication": 0,
    }
    # 0 of 30 designed cases: the exact bounds say how large the rate could still be
    uc = m.under_classification_final
    assert (uc.k, uc.n, uc.value, uc.ci95, uc.upper95) == (0, 30, 0.0, (0.0, 0.1158), 0.0951)
    assert uc.ci95 is not None
    assert (f"{uc.upper95:.3f}", f"{uc.ci95[1]:.3f}") == ("0.095", "0.116")
    assert m.severe_under_classification_final.value == 0
    assert (
        m.severe_under_classification_sensitive_final.k,
        m.severe_under_classification_sensitive_final.n,
    ) == (
        0,
        14,
    )
    assert m.under_classification_floor.value == 0.2  # 6/30
    assert m.severe_under_classification_floor.value == 0.0333  # 1/30
    assert m.exact_accuracy_final.value == 0.9333  # 28/30
    assert (m.out_of_scope_precision.value, m.out_of_scope_recall.value) == (1.0, 1.0)
    assert (m.flag_precision.value, m.flag_recall.value) == (1.0, 1.0)
    assert (m.unavailable_rate.k, m.unavailable_rate.n) == (2, 30)
    assert m.population.status == "not a sample"
    assert m.unavailable_by_reason == {"llm_unavailable": 1, "too_large": 1}
    rows = {r.id: r for r in synthetic_report.cases}
    floor_under = sorted(
        r.id[:7]
        for r in rows.values()
        if ["trivial", "logic", "sensitive"].index(r.floor)
        < ["trivial", "logic", "sensitive"].index(gold_risk(r))
    )
    assert floor_under == ["syn-003", "syn-022", "syn-023", "syn-026", "syn-028", "syn-030"]
    assert sorted(r.id[:7] for r in rows.values() if r.final != gold_risk(r)) == ["syn-027", "syn-029"]
    assert rows["syn-028-verifier-timeout"].verifier_status == "error"
    assert rows["syn-016-too-large"].usage.calls == 0 and rows["syn-016-too-large"].cost_usd == 0
    assert all(r.cost_usd is not None and r.cost_usd >= 0 for r in rows.values())
