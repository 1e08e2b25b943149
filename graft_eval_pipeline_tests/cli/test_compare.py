"""`graft-eval compare`: runs named by path, folder or run id; exit 0, 1 (regressed, blocker), 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.report.runs import run_dirs
from graft_eval_pipeline.evalset.sets.paths import SYNTHETIC_BASELINE
from graft_eval_pipeline.evalset.sets.store import open_set, read_cases
from graft_eval_pipeline_tests.builders import copy_synthetic

pytestmark = pytest.mark.usefixtures("clean_env")


def baseline_data() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SYNTHETIC_BASELINE.read_text())
    return data


def write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_two_runs_of_the_synthetic_set_by_run_id_and_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    assert main(["run", "--set", str(synthetic)]) == 0
    assert main(["run", "--set", str(synthetic)]) == 0
    first, second = (p.name for p in run_dirs(synthetic))  # in the order they ran
    capsys.readouterr()

    assert main(["compare", "--set", str(synthetic), "--base", first, "--new", second]) == 0
    out = capsys.readouterr().out
    assert f"  base {first}  fake" in out and f"  new  {second}  fake" in out
    assert "compare: 30 shared case(s) paired by id; 2,000 paired bootstrap resamples" in out
    assert "underClassificationFinal" in out and "0.0000 (0/30)" in out
    assert "verdict: no clear difference; no blocker" in out and "changed cases: none" in out

    # by default: the set's baseline against its latest run
    assert main(["compare", "--set", str(synthetic)]) == 0
    out = capsys.readouterr().out
    assert f"  new  {second}" in out and "  base 2" in out

    # a run folder and a report.json path name runs too
    run_dir = synthetic / "runs" / first
    assert main(["compare", "--base", str(run_dir), "--new", str(run_dir / "report.json")]) == 0

    # nothing of a case but its id reaches the screen
    titles = [c.inputs.pr.title for c in read_cases(open_set(synthetic, None))]
    assert not [t for t in titles if t in out]


def test_a_regression_and_a_blocker_exit_1_with_the_changed_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = baseline_data()
    # the floor is no longer applied: every case the floor alone raised drops to the model's class
    for row in data["cases"]:
        if row["model"] is not None and row["final"] != row["model"] and "writer" not in row["raisedBy"]:
            row["final"] = row["model"]
    worse = write(tmp_path / "worse.json", data)
    code = main(["compare", "--base", str(SYNTHETIC_BASELINE), "--new", str(worse)])
    captured = capsys.readouterr()
    assert code == 1
    assert "verdict: regressed;" in captured.out and "blocker(s)" in captured.out
    assert (
        "syn-004-ci-workflow: newly under-classified from sensitive gold "
        "(gold sensitive, final sensitive → trivial; in 1 of 1 trial(s), base 0 of 1)" in captured.out
    )
    assert (
        "syn-004-ci-workflow: final sensitive → trivial (gold sensitive): newly under-classified"
        in captured.out
    )
    assert "error: the new run regressed and" in captured.err

    # the other way round it improved: exit 0
    assert main(["compare", "--base", str(worse), "--new", str(SYNTHETIC_BASELINE)]) == 0
    assert "verdict: improved; no blocker" in capsys.readouterr().out

    assert main(["compare", "--base", str(SYNTHETIC_BASELINE), "--new", str(worse), "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert (
        result["verdict"] == "regressed"
        and result["blockers"][0]["kind"] == "newly_under_classified_sensitive"
    )
    uc = next(r for r in result["rates"] if r["name"] == "underClassificationFinal")
    assert (uc["baseK"], uc["baseN"], uc["onlyBase"]) == (0, 30, 0) and uc["newK"] == uc["onlyNew"] > 0


def test_a_new_unavailable_case_with_a_sensitive_floor_is_a_blocker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = baseline_data()
    row = next(r for r in data["cases"] if r["id"] == "syn-008-terraform")
    row.update(
        status="unavailable",
        failureReason="llm_timeout",
        model=None,
        verifierStatus=None,
        flag="na",
        oos=None,
    )
    assert (
        main(["compare", "--base", str(SYNTHETIC_BASELINE), "--new", str(write(tmp_path / "n.json", data))])
        == 1
    )
    out = capsys.readouterr().out
    assert "verdict: no clear difference; 1 blocker(s)" in out
    assert (
        "syn-008-terraform: newly unavailable with a sensitive floor "
        "(floor sensitive, status ok → unavailable; in 1 of 1 trial(s), base 0 of 1)" in out
    )


def test_different_case_sets_are_compared_on_shared_ids_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = baseline_data()
    data["cases"] = data["cases"][:20]
    code = main(
        ["compare", "--base", str(SYNTHETIC_BASELINE), "--new", str(write(tmp_path / "fewer.json", data))]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert (
        "warning: the runs cover different cases: compared on the 20 shared ones "
        "(10 only in base, 0 only in new)" in out
    )
    assert "only in base: syn-021-injection-zero-width," in out


def test_unusable_input_exits_2_naming_the_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = str(SYNTHETIC_BASELINE)
    cases: list[tuple[list[str], str]] = [
        (["--base", str(tmp_path / "missing.json"), "--new", base], "error: --base "),
        (
            ["--base", base, "--new", "20261015T100000Z-abcd"],
            "--new 20261015T100000Z-abcd is a run id: add --set",
        ),
        (["--base", base], "name both runs with --base and --new, or add --set"),
        (["--base", base, "--new", "x", "--resamples", "100"], "error: --new x: no such report.json"),
    ]
    for args, message in cases:
        assert main(["compare", *args]) == 2, args
        assert message in capsys.readouterr().err

    (tmp_path / "bad.json").write_text("{}")
    assert main(["compare", "--base", base, "--new", str(tmp_path / "bad.json")]) == 2
    assert "is not a valid eval report" in capsys.readouterr().err

    assert main(["compare", "--base", base, "--new", base, "--resamples", "100"]) == 2
    assert "resamples must be at least 2,000" in capsys.readouterr().err

    other = baseline_data()
    for row in other["cases"]:
        row["id"] = row["id"].replace("syn-", "syn-9")
    assert main(["compare", "--base", base, "--new", str(write(tmp_path / "other.json", other))]) == 2
    assert "share no case that ran in both: nothing to compare" in capsys.readouterr().err

    synthetic = copy_synthetic(tmp_path, baseline=True)
    assert main(["compare", "--set", str(synthetic), "--base", base, "--new", "20261015T100000Z-abcd"]) == 2
    err = capsys.readouterr().err
    assert "--new: set synthetic has no run 20261015T100000Z-abcd with a report.json" in err
    assert main(["compare", "--set", str(synthetic)]) == 2
    assert "--new: set synthetic has no run yet" in capsys.readouterr().err
