"""Every file the tool reads back is untrusted (issue 23, item 1 and 2).

Huge integers, bytes that are not UTF-8, deep nesting and wrong shapes in cases, label files, the
inbox, thresholds.json, baselines, past reports and card results give one line naming the file and
exit 2, never a traceback; `validate` lists a bad case and goes on; a damaged past report is skipped
by the history with a warning, and a new run (CLI or Dagster) still succeeds.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.cli import run as cli_run
from graft_eval_pipeline.defs.assets.evaluation import eval_report
from graft_eval_pipeline.defs.resources import CaseSetsResource
from graft_eval_pipeline.evalset.labeling import import_label_inbox
from graft_eval_pipeline.evalset.report.runs import run_dirs
from graft_eval_pipeline.evalset.run import read_card_results
from graft_eval_pipeline.evalset.sets import EvalError, UntrustedInputError, read_case
from graft_eval_pipeline.evalset.sets.case_schema import dump_case, parse_case
from graft_eval_pipeline.evalset.sets.paths import INBOX_DIR
from graft_eval_pipeline.evalset.sets.records import RecordWriter
from graft_eval_pipeline.evalset.sets.stamped import stamp_value, unstamp
from graft_eval_pipeline.evalset.sets.store import write_case, write_private
from graft_eval_pipeline_tests.builders import (
    FIXED_TIME,
    copy_synthetic,
    make_case,
    make_synthetic_set,
)
from graft_eval_pipeline_tests.conftest import InstanceWith
from graft_eval_pipeline_tests.defs.test_definitions import EVALUATION, resources

HUGE = "9" * 5000  # beyond Python's 4,300-digit int-string limit: json.loads raised ValueError
DEEP = "[" * 5000 + "]" * 5000


@pytest.fixture(autouse=True)
def _owner_only_umask() -> Iterator[None]:
    old = os.umask(0o077)
    yield
    os.umask(old)


def _one_line(err: str) -> list[str]:
    assert "Traceback" not in err and "\x1b" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines


def _case_text_with(field: str, raw_value: str) -> str:
    doc = json.loads(dump_case(make_case("syn-001-a")))
    doc["inputs"]["pr"][field] = "@@"
    return json.dumps(doc).replace('"@@"', raw_value)


def test_a_case_with_a_huge_integer_is_named_and_validate_lists_it_and_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(
        UntrustedInputError, match=r"^x\.case\.json: holds an integer of more than 300 digits"
    ):
        parse_case(_case_text_with("number", HUGE), "x.case.json")
    cs = make_synthetic_set(tmp_path / "syn")
    write_case(cs, make_case("syn-001-a"))
    write_case(cs, make_case("syn-002-b"))
    (cs.dir / "cases" / "syn-001-a.case.json").write_text(_case_text_with("additions", HUGE))
    with pytest.raises(EvalError, match=r"^cases/syn-001-a\.case\.json: holds an integer"):
        read_case(cs, "syn-001-a")
    capsys.readouterr()

    assert main(["validate", "--set", str(cs.dir)]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert "invalid: cases/syn-001-a.case.json: holds an integer of more than 300 digits" in err
    assert "2 cases" in out and "1 invalid" in out  # the second case was read too


def test_a_label_apply_file_with_a_huge_integer_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cs = make_synthetic_set(tmp_path / "syn")
    write_case(cs, make_case("syn-001-a", labels=[]))
    labels = tmp_path / "labels.json"
    labels.write_text('{"syn-001-a": {"risk": ' + HUGE + "}}")
    capsys.readouterr()
    assert main(["label", "--set", str(cs.dir), "--as", "alice", "--apply", str(labels)]) == 2
    assert _one_line(capsys.readouterr().err) == [
        "error: labels.json: holds an integer of more than 300 digits; this is not a graft-eval file"
    ]


def test_an_inbox_file_with_a_huge_integer_is_named_and_left_in_place(tmp_path: Path) -> None:
    cs = make_synthetic_set(tmp_path / "syn")
    write_case(cs, make_case("syn-001-a", labels=[]))
    write_private(cs, f"{INBOX_DIR}/alice.json", '{"labeler": "alice", "labels": {"x": ' + HUGE + "}}")
    result = import_label_inbox(cs, now=FIXED_TIME)
    assert result.bad_files == {
        "alice.json": "alice.json: holds an integer of more than 300 digits; this is not a graft-eval file"
    }
    assert (cs.dir / INBOX_DIR / "alice.json").exists()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"synthetic": {"underClassificationFinal": {"max": ' + HUGE + "}}}", "holds an integer of more"),
        (b'{"synthetic": "\xff"}', "not UTF-8 text"),
        (DEEP, "nested more than 64 levels"),
        ("[1, 2]", "expected an object keyed by set kind"),
    ],
)
def test_a_bad_thresholds_file_exits_2_naming_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    content: str | bytes,
    reason: str,
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    thresholds = tmp_path / "thresholds.json"
    thresholds.write_bytes(content if isinstance(content, bytes) else content.encode())
    monkeypatch.setattr(cli_run, "THRESHOLDS_FILE", thresholds)  # what `run` reads
    capsys.readouterr()
    code = main(["run", "-q", "--set", str(synthetic)])
    (line,) = _one_line(capsys.readouterr().err)
    assert code == 2
    assert line.startswith(f"error: {thresholds}") and reason in line


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"schemaVersion": "\xff"}', "not UTF-8 text"),
        (DEEP.encode(), "nested more than 64 levels"),
        (b'{"schemaVersion": 2, "runId": ' + HUGE.encode() + b"}", "holds an integer of more"),
        (b'{"schemaVersion": 2, "runId": []}', "is not a valid eval report"),
    ],
)
def test_a_bad_baseline_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, reason: str
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    baseline = tmp_path / "baseline.json"
    baseline.write_bytes(content)
    capsys.readouterr()
    assert main(["run", "-q", "--set", str(synthetic), "--baseline", str(baseline)]) == 2
    (line,) = _one_line(capsys.readouterr().err)
    assert line.startswith(f"error: {baseline}") and reason in line


DAMAGED_REPORTS = {
    "not-utf8": b'{"runId": "\xff"}',
    "deep": DEEP.encode(),
    "huge": b'{"runId": ' + HUGE.encode() + b"}",
    "shape": b'{"runId": "x", "metrics": []}',
}


@pytest.mark.parametrize("damage", sorted(DAMAGED_REPORTS))
def test_a_damaged_past_report_is_skipped_with_a_warning_and_never_stops_a_new_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    assert main(["run", "-q", "--set", str(synthetic)]) == 0
    (broken,) = run_dirs(synthetic)
    (broken / "report.json").write_bytes(DAMAGED_REPORTS[damage])
    capsys.readouterr()

    assert main(["run", "-q", "--set", str(synthetic)]) == 0  # the new run reads the history
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"warning: runs/{broken.name}/report.json: " in err and "left out of the history" in err
    assert len(run_dirs(synthetic)) == 2

    assert main(["history", "--set", str(synthetic)]) == 0
    out, err = capsys.readouterr()
    assert f"warning: runs/{broken.name}/report.json: " in err and broken.name not in out


def test_a_damaged_past_report_does_not_fail_the_dagster_report(
    tmp_path: Path, instance_with: InstanceWith
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    assert main(["run", "-q", "--set", str(synthetic)]) == 0
    (broken,) = run_dirs(synthetic)
    (broken / "report.json").write_bytes(DEEP.encode())
    sets = CaseSetsResource(eval_dir=str(tmp_path / "none"), synthetic_dir=str(synthetic))
    instance = instance_with("synthetic")
    result = dg.materialize(
        EVALUATION, partition_key="synthetic", instance=instance, resources=resources(sets)
    )
    assert result.success
    warned = [e.user_message for e in instance.all_logs(result.run_id) if e.step_key == "eval_report"]
    assert any(f"runs/{broken.name}/report.json: JSON nested more" in text for text in warned)


def test_a_card_results_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    cs = make_synthetic_set(tmp_path / "syn")
    with RecordWriter(cs, "assets/results.jsonl") as writer:
        writer.write('{"id": "x"}')
    path = cs.dir / "assets" / "results.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"x"', b'"\xff"'))
    with pytest.raises(UntrustedInputError, match=r"^assets/results\.jsonl: not UTF-8 text"):
        list(read_card_results(cs, "assets/results.jsonl"))


def test_a_card_result_of_another_shape_is_named(tmp_path: Path) -> None:
    cs = make_synthetic_set(tmp_path / "syn")
    with RecordWriter(cs, "assets/results.jsonl") as writer:
        writer.write('{"id": "x", "result": ' + HUGE + "}")
    with pytest.raises(
        UntrustedInputError, match=r"^a card result in assets/results\.jsonl: holds an integer"
    ):
        list(read_card_results(cs, "assets/results.jsonl"))


def test_a_stored_dagster_value_with_a_huge_integer_is_named(
    tmp_path: Path, instance_with: InstanceWith
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    sets = CaseSetsResource(eval_dir=str(tmp_path / "none"), synthetic_dir=str(synthetic))
    instance = instance_with("synthetic")
    assert dg.materialize(
        EVALUATION, partition_key="synthetic", instance=instance, resources=resources(sets)
    ).success
    stored = synthetic / "assets" / "eval_metrics.json"
    writer = unstamp(stored.read_text(), "eval_metrics")[0].run_id
    stored.write_text(stamp_value('{"cases": ' + HUGE + "}", writer)[0])  # stamped, but not what it recorded
    result = dg.materialize(
        EVALUATION,
        selection=[eval_report],
        partition_key="synthetic",
        instance=instance,
        resources=resources(sets),
        raise_on_error=False,
    )
    assert not result.success
    failures = [event for event in result.all_events if event.is_step_failure]
    error = failures[0].step_failure_data.error
    messages = []
    while error is not None:  # Dagster wraps the loader's error: read the chain
        messages.append(error.message)
        error = error.cause
    message = " ".join(messages)
    # The hash the run recorded is checked before the value is parsed: the huge integer is never read.
    assert f"stale value: asset eval_metrics of set synthetic of run {writer} is not the value" in message


def test_a_damaged_live_rerun_file_is_named(tmp_path: Path) -> None:
    """read_live_rerun names the file (the sensor then falls back to a fake re-run)."""
    from graft_eval_pipeline.evalset.sets.live_rerun import read_live_rerun

    (tmp_path / "live-rerun.json").write_bytes(b'{"maxCostUsd": ' + HUGE.encode() + b"}")
    with pytest.raises(UntrustedInputError, match=r"live-rerun\.json must be"):
        read_live_rerun(tmp_path)
    (tmp_path / "live-rerun.json").write_bytes(base64.b64encode(os.urandom(30)))
    with pytest.raises(UntrustedInputError, match=r"live-rerun\.json must be"):
        read_live_rerun(tmp_path)
