"""The verifier against the human gold labels: catches, false alarms, misses, kappa, cost."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.compare.calibration import calibrate, render_calibration, without_verifier
from graft_eval_pipeline.evalset.evaluate import run_eval
from graft_eval_pipeline.evalset.report.render import render_markdown
from graft_eval_pipeline.evalset.scoring.report_schema import CaseRow
from graft_eval_pipeline.evalset.sets.paths import SYNTHETIC_BASELINE, SYNTHETIC_DIR
from graft_eval_pipeline.evalset.sets.store import open_set
from graft_eval_pipeline_tests.builders import copy_synthetic, run_options
from graft_eval_pipeline_tests.row_builders import make_row

# The oracles are imported inside the tests that use them, and those tests share one xdist worker:
# the default lane's other worker never loads scipy or statsmodels.
pytestmark = pytest.mark.xdist_group("oracles")


def row(
    case_id: str, gold: str | None, floor: str, writer: str, verifier: str | None, **over: object
) -> CaseRow:
    order = ["trivial", "logic", "sensitive"]
    classes = [c for c in (floor, writer, verifier) if c is not None]
    return make_row(
        case_id,
        gold=gold,
        floor=floor,
        model=max([writer, verifier or writer], key=order.index),
        final=max(classes, key=order.index),
        writer=writer,
        verifier=verifier,
        verifier_cost_usd=0.001,
        **over,
    )


ROWS = [
    # below gold without the verifier, raised to gold: a true catch
    row("a", "sensitive", "trivial", "trivial", "sensitive"),
    # below gold, raised but not to gold: a catch, not to gold
    row("b", "sensitive", "trivial", "trivial", "logic"),
    # below gold, not raised: missed
    row("c", "logic", "trivial", "trivial", "trivial"),
    # the verifier did not answer
    row("d", "logic", "trivial", "trivial", None, verifier_status="error", flag="na"),
    # at gold already, raised: a false alarm
    row("e", "trivial", "trivial", "trivial", "logic", flag="fp", verifier_status="disagree"),
    # the floor already covers it: not a catch although the verifier says sensitive
    row("f", "sensitive", "sensitive", "trivial", "sensitive", flag="tp", verifier_status="disagree",
        should_flag=True),
    row("g", "logic", "logic", "logic", "trivial", flag="fn", should_flag=True),
    row("h", "trivial", "trivial", "trivial", "trivial"),
    # instructions in data lift it to logic without the verifier
    row("i", "logic", "trivial", "trivial", "trivial", instructions_in_data=True),
    row("j", None, "trivial", "trivial", "sensitive"),  # no gold: not scored
]  # fmt: skip


def test_a_lift_caused_by_the_verifiers_report_of_instructions_is_the_verifiers_catch() -> None:
    """Gold logic, floor, writer and verifier trivial; the final logic comes from instructions in the data.

    Reported by the verifier: a true catch of the verifier. By the writer: the class was at gold
    without the verifier. Rows that do not say who: the combined flag.
    """
    by_verifier = row(
        "v", "logic", "trivial", "trivial", "trivial", instructions_in_data=True,
        instructions_in_data_from=["verifier"],
    ).model_copy(update={"final": "logic"})  # fmt: skip
    by_writer = by_verifier.model_copy(update={"id": "w", "instructions_in_data_from": ["writer"]})
    unknown = by_verifier.model_copy(update={"id": "u", "instructions_in_data_from": None})
    assert without_verifier(by_verifier) == "trivial"
    assert without_verifier(by_writer) == without_verifier(unknown) == "logic"
    risk = calibrate([by_verifier, by_writer, unknown]).risk
    assert (risk.below_gold_without_verifier, risk.catches.k, risk.catches_to_gold.k) == (1, 1, 1)
    assert (risk.false_alarms.k, risk.false_alarms.n) == (0, 2)


def test_class_calibration_counts_catches_misses_and_false_alarms() -> None:
    from statsmodels.stats.inter_rater import cohens_kappa
    from statsmodels.stats.proportion import proportion_confint

    result = calibrate(ROWS)
    r = result.risk
    assert r.cases == 8  # d has no verifier class, j no gold
    assert without_verifier(ROWS[8]) == "logic"
    assert r.below_gold_without_verifier == 3  # a, b, c
    assert (r.catches.k, r.catches.n, r.catches.rate) == (2, 3, 0.6667)
    assert (r.catches_to_gold.k, r.missed.k) == (1, 1)
    assert (r.false_alarms.k, r.false_alarms.n) == (1, 5)  # e of e, f, g, h, i
    low, high = proportion_confint(2, 3, alpha=0.05, method="wilson")
    # bounds rounded outwards, as every bound of a report: the printed interval holds the exact one
    assert (r.catches.low, r.catches.high) == (math.floor(low * 1e4) / 1e4, math.ceil(high * 1e4) / 1e4)

    index = {"trivial": 0, "logic": 1, "sensitive": 2}
    table = [[0] * 3 for _ in range(3)]
    for x in ROWS[:9]:
        if x.verifier is not None and x.gold is not None:
            table[index[x.verifier]][index[x.gold.risk]] += 1
    assert r.verifier_kappa.n == 8
    assert r.verifier_kappa.kappa == round(cohens_kappa(table).kappa, 4)
    kappa, low, high = r.verifier_kappa.kappa, r.verifier_kappa.low, r.verifier_kappa.high
    assert kappa is not None and low is not None and high is not None and low <= kappa <= high


def test_flag_calibration_and_cost() -> None:
    result = calibrate(ROWS)
    f = result.flags
    assert (f.cases, f.should_flag) == (8, 2)  # d's flag is n/a
    assert (f.catches.k, f.catches.n, f.missed.k) == (1, 2, 1)
    assert (f.false_alarms.k, f.false_alarms.n) == (1, 6)
    assert f.kappa.kappa is not None and -1 <= f.kappa.kappa <= 1
    cost = result.cost
    assert cost.verifier_cost_usd == pytest.approx(0.010)
    assert cost.total_cost_usd == pytest.approx(0.030)
    assert cost.share_of_cost == pytest.approx(0.3333, abs=1e-4)
    assert cost.cost_per_catch_usd == pytest.approx(0.010 / 3, abs=1e-6)  # two class catches, one flag
    text = render_calibration(result)
    assert "true catches (raised when below gold): 0.6667 (2/3, 95% CI " in text
    assert "false alarms (raised when already at or above gold): 0.2000 (1/5, " in text
    assert "cost: verifier $0.0100 of $0.0300 (33.3%); per true catch $0.0033" in text


def test_rows_without_classes_say_so_and_still_calibrate_the_flag() -> None:
    old = [make_row("a", gold="logic", flag="tp", should_flag=True), make_row("b", gold="trivial")]
    result = calibrate(old)
    assert not result.rows_have_classes and result.risk.cases == 0
    assert result.flags.catches.k == 1 and result.cost.verifier_cost_usd is None
    assert "class: n/a (the rows carry no writer or verifier class" in render_calibration(result)


def test_the_synthetic_run_records_the_classes_and_calibrates_in_report_md() -> None:
    report = run_eval(run_options(open_set(SYNTHETIC_DIR, None)))
    lies = next(r for r in report.cases if r.id == "syn-026-description-lies")
    assert (lies.writer, lies.verifier, lies.final) == ("trivial", "sensitive", "sensitive")
    assert lies.verifier_cost_usd is not None and lies.cost_usd is not None
    assert 0 < lies.verifier_cost_usd < lies.cost_usd
    down = next(r for r in report.cases if r.id == "syn-027-writer-down")
    assert (down.writer, down.verifier, down.verifier_cost_usd) == (None, None, 0.0)
    result = calibrate(report.cases)
    assert (result.risk.catches.k, result.risk.catches.n) == (1, 1)  # syn-026, the floor covers the rest
    assert result.risk.false_alarms.k == 0 and result.flags.catches.k == 2
    md = render_markdown(report, None)
    assert "## Verifier calibration against gold" in md
    assert "  - true catches (raised when below gold): 1.0000 (1/1, 95% CI 0.2065–1.0000)" in md


def test_cli_calibration_of_a_run_by_default_and_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    synthetic = copy_synthetic(tmp_path, baseline=True)
    assert main(["calibration", "--set", str(synthetic)]) == 2
    assert "set synthetic has no run yet" in capsys.readouterr().err
    assert main(["run", "--set", str(synthetic)]) == 0
    capsys.readouterr()
    assert main(["calibration", "--set", str(synthetic)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "verifier calibration against gold\n  class, on 27 scored case(s) the verifier answered;"
    )
    assert main(["calibration", "--run", str(SYNTHETIC_BASELINE), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rowsHaveClasses"] is True and data["risk"]["catches"]["k"] == 1
    assert main(["calibration"]) == 2
    assert "name a run with --run, or add --set" in capsys.readouterr().err


def test_one_class_against_one_class_reads_undefined_and_perfect_agreement_has_a_lower_bound_below_one() -> (
    None
):
    same = calibrate([row(f"c{i}", "logic", "trivial", "logic", "logic") for i in range(6)])
    assert same.risk.verifier_kappa.kappa is None and same.risk.verifier_kappa.low is None
    assert "verifier undefined (both used one class only) (n = 6)" in render_calibration(same)
    classes = ["trivial", "logic", "sensitive"] * 2
    perfect = calibrate([row(f"c{i}", c, "trivial", c, c) for i, c in enumerate(classes)])
    kappa = perfect.risk.verifier_kappa
    assert kappa.kappa == 1.0 and kappa.low is not None and kappa.low < 0.9 and kappa.high == 1.0
