"""The latest run is one run for every command that reads runs (evalset/report/runs.py).

`cases`, `view`, `history`, `summary`, `compare` and `calibration` agree, also for two runs started
in the same second, and say the same thing of a set without a run.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.evaluate import evaluate
from graft_eval_pipeline.evalset.report import load_thresholds, no_run_yet, publish_run, run_dirs
from graft_eval_pipeline.evalset.run import RunOptions
from graft_eval_pipeline.evalset.scoring import GitInfo
from graft_eval_pipeline.evalset.sets import THRESHOLDS_FILE, open_set
from graft_eval_pipeline_tests.builders import copy_synthetic

pytestmark = pytest.mark.usefixtures("clean_env")

SECOND = datetime(2026, 11, 30, 21, 34, 59, tzinfo=UTC)


def run_in_the_same_second(set_dir: Path, count: int) -> list[str]:
    """`count` runs of the set, all started in SECOND (distinct run ids); their ids."""
    cs = open_set(set_dir, None)
    ids: list[str] = []
    while len(ids) < count:
        options = RunOptions(
            set=cs,
            now=lambda: SECOND,
            git=lambda: GitInfo(commit=None, dirty=None),
        )
        report = evaluate(options).report
        if report.run_id in ids:  # the 4-hex suffix repeated: draw again
            continue
        publish_run(cs, report, thresholds=load_thresholds(THRESHOLDS_FILE), strict=False)
        ids.append(report.run_id)
    return ids


def set_written(set_dir: Path, run_id: str, ns: int) -> None:
    os.utime(set_dir / "runs" / run_id / "report.json", ns=(ns, ns))


def latest_by_command(set_dir: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """The run id each command takes as the set's latest run."""
    found = {}
    capsys.readouterr()
    assert main(["cases", "--set", str(set_dir), "--json"]) == 0
    found["cases"] = json.loads(capsys.readouterr().out)["runId"]
    assert main(["history", "--set", str(set_dir), "--json"]) == 0
    found["history"] = json.loads(capsys.readouterr().out)["runs"][-1]["runId"]
    assert main(["view", "--set", str(set_dir), "--no-open"]) == 0
    found["view"] = Path(capsys.readouterr().out.split()[-1].removeprefix("file://")).parent.name
    assert main(["summary", "--set", str(set_dir)]) == 0
    found["summary"] = Path(capsys.readouterr().out.splitlines()[-1].removeprefix("report: ")).parent.name
    assert main(["compare", "--set", str(set_dir), "--json"]) in (0, 1)
    found["compare"] = json.loads(capsys.readouterr().out)["new"]["runId"]
    return found


def test_two_runs_started_in_the_same_second_give_every_command_the_same_latest_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    low, high = sorted(run_in_the_same_second(synthetic, 2))
    assert low[:16] == high[:16]  # the same second

    # the run with the lower id finished later: it is the latest (the id alone would say `high`)
    set_written(synthetic, high, 1_000_000_000_000_000_000)
    set_written(synthetic, low, 1_000_000_000_000_000_001)
    assert [p.name for p in run_dirs(synthetic)] == [high, low]
    assert latest_by_command(synthetic, capsys) == dict.fromkeys(
        ("cases", "history", "view", "summary", "compare"), low
    )

    # written in the same tick of the file system's clock: the run id decides, for every command
    set_written(synthetic, low, 1_000_000_000_000_000_000)
    assert [p.name for p in run_dirs(synthetic)] == [low, high]
    assert latest_by_command(synthetic, capsys) == dict.fromkeys(
        ("cases", "history", "view", "summary", "compare"), high
    )


def test_a_set_without_a_run_gets_the_same_message_from_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    said = no_run_yet(open_set(synthetic, None))
    capsys.readouterr()
    for command, code in (
        (["summary"], 2),
        (["view", "--no-open"], 2),
        (["cases", "--only", "under"], 2),
        (["cases"], 0),  # the case ids, from the store
        (["history"], 0),
        (["calibration"], 2),
        (["compare"], 2),
    ):
        assert main([*command, "--set", str(synthetic)]) == code, command
        err = capsys.readouterr().err
        assert said in err, (command, err)


def unique_prefix(run_id: str, others: list[str]) -> str:
    """The shortest start of `run_id` that no other id shares."""
    for end in range(1, len(run_id) + 1):
        if not any(other.startswith(run_id[:end]) for other in others):
            return run_id[:end]
    raise AssertionError("ids are unique")


def test_a_short_run_id_prefix_names_a_run_wherever_a_run_id_does_and_an_ambiguous_one_lists_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    low, high = sorted(run_in_the_same_second(synthetic, 2))
    short_low, short_high = unique_prefix(low, [high]), unique_prefix(high, [low])
    assert len(short_low) < len(low) and short_low.startswith("20261130T213459Z-")
    capsys.readouterr()

    assert main(["cases", "--set", str(synthetic), "--run", short_low, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runId"] == low
    assert main(["view", "--set", str(synthetic), "--run", short_high, "--no-open"]) == 0
    assert Path(capsys.readouterr().out.split()[-1].removeprefix("file://")).parent.name == high
    assert main(["calibration", "--set", str(synthetic), "--run", short_low, "--json"]) == 0
    capsys.readouterr()
    assert main(["compare", "--set", str(synthetic), "--base", short_low, "--new", short_high, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["base"]["runId"], data["new"]["runId"]) == (low, high)

    for command in (["cases"], ["view", "--no-open"], ["calibration"]):
        assert main([*command, "--set", str(synthetic), "--run", "20261130"]) == 2, command
        err = capsys.readouterr().err
        assert "--run 20261130 is ambiguous in set synthetic: 2 runs start with it (" in err
        assert low in err and high in err and "; give more of the id" in err
        assert err.count("\n") == 1  # one line
    assert main(["compare", "--set", str(synthetic), "--new", "2026"]) == 2
    assert "--new 2026 is ambiguous in set synthetic: 2 runs start with it" in capsys.readouterr().err
    assert main(["cases", "--set", str(synthetic), "--run", "2027"]) == 2
    assert "--run: set synthetic has no run 2027 with a report.json" in capsys.readouterr().err
    assert main(["cases", "--set", str(synthetic), "--run", "latest"]) == 2
    assert "--run 'latest' is not a run id or the start of one" in capsys.readouterr().err
