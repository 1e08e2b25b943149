"""A Dagster UI that explains itself (issue 15 §3).

What the instance records for the evaluation (numeric rates, check results that say what failed,
report paths), descriptions, the nightly schedule, the export dependency and progress logging.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from graft_eval_pipeline.definitions import defs
from graft_eval_pipeline.defs.assets import EVALUATION_GROUP
from graft_eval_pipeline.defs.assets.evaluation import eval_metrics, eval_report, harness_run
from graft_eval_pipeline.defs.assets.export import case_files, exported_cases
from graft_eval_pipeline.defs.io_manager import SealedIOManager
from graft_eval_pipeline.defs.resources import CaseSetsResource, GitHubResource
from graft_eval_pipeline.defs.schedules import nightly_synthetic_schedule
from graft_eval_pipeline.evalset.report.files import load_report
from graft_eval_pipeline.evalset.report.headline import HEADLINE_RATES, PLOTTED_RATES, plotted_key
from graft_eval_pipeline.evalset.run import options as run_options
from graft_eval_pipeline.evalset.sets.paths import SYNTHETIC_DIR
from graft_eval_pipeline.evalset.sets.store import open_set, read_case, read_cases, write_case
from graft_eval_pipeline_tests.builders import copy_synthetic, make_synthetic_set
from graft_eval_pipeline_tests.conftest import meta_value

PARTITION = "synthetic"


def materialize(
    synthetic_dir: Path,
    tmp_path: Path,
    selection: list[Any] | None = None,
    run_config: dict[str, Any] | None = None,
) -> dg.DagsterInstance:
    """The evaluation group on the synthetic partition of a fresh instance (failures allowed)."""
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("case_set", [PARTITION])
    sets = CaseSetsResource(eval_dir=str(tmp_path / "pilots"), synthetic_dir=str(synthetic_dir))
    evaluation = [a for a in defs.assets or [] if isinstance(a, dg.AssetsDefinition)]
    dg.materialize(
        evaluation,
        selection=selection or dg.AssetSelection.groups(EVALUATION_GROUP),
        partition_key=PARTITION,
        instance=instance,
        resources={"case_sets": sets, "github": GitHubResource(), "io_manager": SealedIOManager(sets=sets)},
        raise_on_error=False,
        run_config=run_config,
    )
    return instance


def latest_metadata(instance: dg.DagsterInstance, asset: dg.AssetsDefinition) -> dict[str, dg.MetadataValue]:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=asset.key, asset_partitions=[PARTITION]), limit=1
    ).records
    assert records and records[0].asset_materialization is not None
    return dict(records[0].asset_materialization.metadata)


def check_evaluation(instance: dg.DagsterInstance, name: str) -> dg.AssetCheckEvaluation:
    record = instance.get_latest_asset_check_evaluation_record(dg.AssetCheckKey(eval_report.key, name))
    assert record is not None and record.event is not None and record.event.dagster_event is not None
    return record.event.dagster_event.event_specific_data  # type: ignore[return-value]


@pytest.mark.slow  # materializes the whole evaluation group
def test_every_headline_rate_is_numeric_metadata_and_the_report_files_are_paths(tmp_path: Path) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    instance = materialize(synthetic, tmp_path)
    (run_dir,) = (synthetic / "runs").iterdir()
    report = load_report(run_dir / "report.json")
    metrics = report.metrics.to_json_dict()

    metadata = latest_metadata(instance, eval_metrics)
    plotted = [
        key
        for key, value in metadata.items()
        if isinstance(value, dg.FloatMetadataValue | dg.IntMetadataValue)
    ]
    # one chart per rate, the gated safety rates first (the UI sorts charts by key), and the cost
    assert sorted(plotted) == [plotted_key(name) for name in PLOTTED_RATES] + [
        f"{len(PLOTTED_RATES) + 1:02d}_cost_usd"
    ]
    assert sorted(plotted)[:3] == [
        "01_under_classification_final",
        "02_severe_under_classification_final",
        "03_severe_under_classification_sensitive_final",
    ]
    assert set(HEADLINE_RATES) <= set(PLOTTED_RATES)
    for name in PLOTTED_RATES:
        value = metadata[plotted_key(name)]
        assert isinstance(value, dg.FloatMetadataValue), name  # Dagster plots these over runs
        assert value.value == pytest.approx(metrics[name]["value"]), name
    assert metadata[f"{len(PLOTTED_RATES) + 1:02d}_cost_usd"].value == pytest.approx(metrics["costUsd"])
    # the evidence is one JSON entry beside them, not three charts per rate
    evidence = meta_value(metadata, "rate_evidence")
    for name in PLOTTED_RATES:
        assert (evidence[name]["k"], evidence[name]["n"]) == (metrics[name]["k"], metrics[name]["n"])
        assert evidence[name]["ci95"] == metrics[name]["ci95"], name
    assert evidence["underClassificationFinal"]["upper95"] == metrics["underClassificationFinal"]["upper95"]

    event = instance.get_latest_materialization_event(eval_report.key)
    assert event is not None and event.asset_materialization is not None
    report_metadata = event.asset_materialization.metadata
    for key, file in [
        ("report_html", "report.html"),
        ("report_md", "report.md"),
        ("report_json", "report.json"),
        ("cases_parquet", "cases.parquet"),
    ]:
        assert isinstance(report_metadata[key], dg.PathMetadataValue), key
        assert report_metadata[key].value == str(run_dir / file) and (run_dir / file).is_file()
    # a browser does not follow file:// links from the UI: the entry says how to open the report
    opening = meta_value(report_metadata, "open_report")
    assert f"graft-eval view --set {synthetic} --run {report.run_id}" in opening
    assert (run_dir / "report.html").resolve().as_uri() in opening
    # the markdown brief fits one screen, so Dagster's dialog opens at its top
    brief = meta_value(report_metadata, "report")
    assert isinstance(brief, str) and brief.startswith(f"## Run {report.run_id}: set synthetic")
    assert len(brief.splitlines()) <= 30 and "syn-029-pure-rename" in brief

    thresholds = check_evaluation(instance, "thresholds")
    assert thresholds.passed and thresholds.description == "set synthetic: all 3 thresholds pass"
    baseline = check_evaluation(instance, "baseline_match")
    assert baseline.passed and meta_value(baseline.metadata, "compared") is True
    assert meta_value(baseline.metadata, "verdict") == "matches"
    assert "accept_command" not in baseline.metadata


@pytest.mark.slow  # materializes the whole evaluation group
def test_repeated_trials_are_numbers_on_the_report_asset(tmp_path: Path) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    instance = materialize(
        synthetic, tmp_path, run_config={"ops": {"harness_run": {"config": {"trials": 2}}}}
    )
    (run_dir,) = (synthetic / "runs").iterdir()
    report = load_report(run_dir / "report.json")
    assert report.trials is not None
    metadata = latest_metadata(instance, eval_report)
    assert isinstance(metadata["trials"], dg.IntMetadataValue) and metadata["trials"].value == 2
    assert isinstance(metadata["flaky_cases"], dg.IntMetadataValue) and metadata["flaky_cases"].value == 0
    under_any = metadata["under_any_trial"]
    assert isinstance(under_any, dg.FloatMetadataValue)
    assert under_any.value == report.trials.under_any_trial.value
    assert "## Repeated trials (2 per case)" in (run_dir / "report.md").read_text(encoding="utf-8")


@pytest.mark.slow  # materializes the whole evaluation group
def test_failed_checks_say_what_failed_and_no_baseline_is_not_compared(tmp_path: Path) -> None:
    synthetic = copy_synthetic(tmp_path)
    cs = open_set(synthetic, None)
    case = read_case(cs, "syn-001-docs-typo")  # the fake model keeps it trivial: now under-classified
    write_case(
        cs, case.model_copy(update={"labels": [case.labels[0].model_copy(update={"risk": "sensitive"})]})
    )
    instance = materialize(synthetic, tmp_path)

    thresholds = check_evaluation(instance, "thresholds")
    assert not thresholds.passed
    assert meta_value(thresholds.metadata, "partition") == PARTITION
    failed = {f["metric"]: f for f in meta_value(thresholds.metadata, "failed")}
    assert failed["underClassificationFinal"] == {
        "metric": "underClassificationFinal",
        "value": pytest.approx(1 / 30, abs=1e-4),
        "limit": "max 0",
        "verdict": "FAIL",
    }
    assert set(failed) == {"underClassificationFinal", "severeUnderClassificationFinal"}
    assert thresholds.description is not None
    assert thresholds.description.startswith(
        "set synthetic: 2 of 3 thresholds fail: underClassificationFinal"
    )
    table = meta_value(thresholds.metadata, "results")
    assert {r.data["metric"]: r.data["verdict"] for r in table.records}["unavailableRate"] == "PASS"

    baseline = check_evaluation(instance, "baseline_match")
    assert not baseline.passed  # the synthetic set requires the match, and there is no baseline
    assert meta_value(baseline.metadata, "compared") is False
    assert meta_value(baseline.metadata, "verdict") == "no baseline"
    # a failing `max 0` fails against any baseline: accepting these results cannot help
    assert "accept_command" not in baseline.metadata
    assert baseline.description == (
        "set synthetic: no baseline to match; save one with `graft-eval run --save-baseline` once the "
        "thresholds pass"
    )


@pytest.mark.slow  # materializes the whole evaluation group
def test_a_changed_baseline_lists_the_changed_cases(tmp_path: Path) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    path = synthetic.parent / "baselines" / "synthetic.json"
    text = path.read_text()
    marker = '"id": "syn-004-ci-workflow"'
    head, tail = text.split(marker)
    path.write_text(head + marker + tail.replace('"final": "sensitive"', '"final": "logic"', 1))
    instance = materialize(synthetic, tmp_path)
    baseline = check_evaluation(instance, "baseline_match")
    assert not baseline.passed and meta_value(baseline.metadata, "compared") is True
    assert meta_value(baseline.metadata, "changed_cases") == 1
    assert meta_value(baseline.metadata, "changed_fields") == ["syn-004-ci-workflow: final logic → sensitive"]
    assert "--save-baseline" in meta_value(baseline.metadata, "accept_command")
    assert baseline.description == (
        "set synthetic: baseline decisions differ (1 changed case(s), 0 report field(s))"
    )


def test_checks_sensors_schedules_and_jobs_have_descriptions_and_the_schedule_is_on() -> None:
    specs = [spec for a in defs.assets or [] if isinstance(a, dg.AssetsDefinition) for spec in a.check_specs]
    assert {s.name for s in specs} == {
        "thresholds",
        "baseline_match",
        "baseline_usage",
        "no_regression",
        "risk_kappa_meets_target",
        "no_unredacted_secrets",
    }
    described = [s.description for s in specs]
    described += [s.description for s in defs.sensors or []]
    described += [s.description for s in defs.schedules or []]
    described += [defs.resolve_job_def(j.name).description for j in defs.jobs or []]
    assert len(described) == 10 and all(d and len(d) > 40 for d in described), described
    assert nightly_synthetic_schedule.default_status == dg.DefaultScheduleStatus.RUNNING


def test_the_evaluation_waits_on_no_materializable_asset_outside_it() -> None:
    """A set filled by `graft-eval export` or committed (synthetic) has no exported_cases materialization.

    The UI must not call that missing upstream data.
    """
    graph = defs.resolve_asset_graph()
    evaluation = {k for k in graph.get_all_asset_keys() if graph.get(k).group_name == EVALUATION_GROUP}
    outside = {p for k in evaluation for p in graph.get(k).parent_keys if p not in evaluation}
    assert outside == {case_files.key}
    assert not graph.get(case_files.key).is_materializable
    assert graph.get(case_files.key).parent_keys == {exported_cases.key}  # the lineage stays visible


def ticking(step_ms: int) -> Callable[[], int]:
    """A run clock that moves `step_ms` on every reading."""
    t = [0]

    def now_ms() -> int:
        t[0] += step_ms
        return t[0]

    return now_ms


def harness_log_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step_ms: int) -> list[str]:
    """What a 120-case harness step logs (not its Dagster events).

    Each reading of the run's clock moves `step_ms`.
    """
    monkeypatch.setattr(run_options, "monotonic_ms", ticking(step_ms))
    seeds = read_cases(open_set(SYNTHETIC_DIR, None))
    cs = make_synthetic_set(tmp_path / "big")
    for n in range(120):
        seed = seeds[n % len(seeds)]
        write_case(cs, seed.model_copy(update={"id": f"syn-{n:05d}-{seed.id.removeprefix('syn-')[4:]}"}))
    instance = materialize(cs.dir, tmp_path, selection=[harness_run])
    (run,) = instance.get_runs()
    return [
        e.user_message
        for e in instance.all_logs(run.run_id)
        if e.step_key == "harness_run" and e.dagster_event is None and e.user_message
    ]


def test_harness_logs_progress_summaries_and_failures_not_one_event_per_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    messages = harness_log_lines(tmp_path, monkeypatch, step_ms=50)  # about 6 s of run time
    # A message (an event) is a summary, the failed cases since the last one listed below it.
    lines = [line for message in messages for line in message.split("\n")]
    assert all(message.split("\n")[0].startswith(("progress: ", "done: ")) for message in messages)
    summaries = [line for line in lines if line.startswith("progress: ")]
    failures = [line for line in lines if line.startswith("syn-")]
    assert 1 <= len(summaries) <= 9  # at most one per tenth of the run (or per 10 s)
    shares = [int(line.split("(")[1].split(" %")[0]) for line in summaries]
    assert shares == sorted(shares) and all(b - a >= 10 for a, b in itertools.pairwise(shares))
    assert "about 0 s left" not in "\n".join(lines)
    assert [line for line in lines if line.startswith("done: 120 of 120 cases (100 %), 8 unavailable")]
    assert len(failures) == 8 and all(" unavailable (" in line for line in failures)
    assert len(messages) == len(summaries) + 1  # was one event per case (120), then one per failure


def test_a_harness_step_under_a_second_logs_no_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    messages = harness_log_lines(tmp_path, monkeypatch, step_ms=1)  # well under a second
    assert len(messages) == 1  # the failures still show, in one event at the end
    lines = messages[0].split("\n")
    assert len(lines) == 8 and all(" unavailable (" in line for line in lines)
