"""The Dagster code location end to end: definitions, the synthetic partition, checks, export."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

import dagster as dg
import pytest
from pydantic import TypeAdapter

from graft_eval_pipeline.definitions import defs
from graft_eval_pipeline.defs.assets.comparison import eval_comparison
from graft_eval_pipeline.defs.assets.evaluation import eval_metrics, eval_report, harness_run, loaded_case_set
from graft_eval_pipeline.defs.assets.export import (
    export_candidates,
    export_sample,
    exported_cases,
    rescanned_cases,
)
from graft_eval_pipeline.defs.assets.labeling import label_import, labeler_agreement
from graft_eval_pipeline.defs.io_manager import SealedIOManager
from graft_eval_pipeline.defs.resources import CaseSetsResource, GitHubResource
from graft_eval_pipeline.defs.schedules import nightly_synthetic_schedule
from graft_eval_pipeline.defs.sensors import case_set_registry_sensor
from graft_eval_pipeline.evalset.report.baseline import diff_reports
from graft_eval_pipeline.evalset.report.case_detail import case_details
from graft_eval_pipeline.evalset.report.files import load_report
from graft_eval_pipeline.evalset.run import read_card_results
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.paths import SYNTHETIC_BASELINE
from graft_eval_pipeline.evalset.sets.stamped import unstamp
from graft_eval_pipeline.evalset.sets.store import iter_cases, list_case_ids, open_set, read_case
from graft_eval_pipeline.github.auth import TokenAuth
from graft_eval_pipeline.github.client import GitHubClient
from graft_eval_pipeline.github.rate_limit import RateLimiter, RateLimitOptions
from graft_eval_pipeline_tests.builders import NOW, copy_synthetic, make_pilot_set
from graft_eval_pipeline_tests.conftest import InstanceWith, meta_value
from graft_eval_pipeline_tests.fake_github import FakeGitHub, agent_pull

EVALUATION = [
    label_import,
    labeler_agreement,
    loaded_case_set,
    harness_run,
    eval_metrics,
    eval_report,
    eval_comparison,
]
EXPORT = [export_candidates, export_sample, exported_cases]
EXPORT_WINDOW = {"repo": "fictional-org/shop-demo", "merged_from": "2026-06-01", "merged_to": "2026-06-30"}


def resources(sets: CaseSetsResource, github: GitHubResource | None = None) -> dict[str, object]:
    return {"case_sets": sets, "github": github or GitHubResource(), "io_manager": SealedIOManager(sets=sets)}


def materialize_synthetic(
    synthetic_dir: Path, tmp_path: Path, instance: dg.DagsterInstance
) -> dg.ExecuteInProcessResult:
    sets = CaseSetsResource(eval_dir=str(tmp_path / "pilots"), synthetic_dir=str(synthetic_dir))
    return dg.materialize(
        [*EVALUATION, *EXPORT],
        selection=EVALUATION,
        partition_key="synthetic",
        instance=instance,
        resources=resources(sets),
        raise_on_error=False,
    )


def check_results(result: dg.ExecuteInProcessResult) -> dict[str, bool]:
    return {e.check_name: e.passed for e in result.get_asset_check_evaluations()}


def test_definitions_load_and_validate() -> None:
    dg.Definitions.validate_loadable(defs)
    keys = {k.to_user_string() for k in defs.resolve_all_asset_keys()}
    assert keys == {a.key.to_user_string() for a in [*EVALUATION, *EXPORT, rescanned_cases]} | {"case_files"}


def test_synthetic_partition_materializes_and_every_check_passes(
    tmp_path: Path, instance_with: InstanceWith
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    result = materialize_synthetic(synthetic, tmp_path, instance_with("synthetic"))
    assert result.success
    # the synthetic set has one labeler: agreement is not measured, so its check is skipped
    assert check_results(result) == {
        "thresholds": True,
        "baseline_match": True,
        "baseline_usage": True,
        "no_regression": True,
        "risk_kappa_meets_target": True,
    }
    kappa = next(e for e in result.get_asset_check_evaluations() if e.check_name == "risk_kappa_meets_target")
    assert kappa.description == "skipped: no double-labelled pair (assign-double adds some)"
    assert meta_value(kappa.metadata, "skipped") is True

    (report_path,) = (synthetic / "runs").glob("*/report.json")
    dagster_report = load_report(report_path)
    assert diff_reports(load_report(SYNTHETIC_BASELINE), dagster_report).equal
    # the same report as `graft-eval run` writes, but for run id and times
    from graft_eval_pipeline.cli import main

    assert main(["run", "--set", str(synthetic), "--out", str(tmp_path / "cli-run")]) == 0
    assert diff_reports(load_report(tmp_path / "cli-run" / "report.json"), dagster_report).equal

    metadata = result.asset_materializations_for_node("eval_report")[0].metadata
    assert meta_value(metadata, "report").startswith(f"## Run {dagster_report.run_id}: set synthetic")
    assert meta_value(metadata, "report_md") == str(report_path.parent / "report.md")
    assert meta_value(metadata, "prompt_fingerprint") == dagster_report.prompt.prompt_fingerprint
    # fake mode: model-derived numbers are labeled scripted, with their counts and bounds
    assert meta_value(metadata, "model_numbers") == "scripted"
    records = {r.data["metric"]: r.data for r in meta_value(metadata, "metrics").records}
    uc = records["underClassificationFinal"]
    assert (uc["k"], uc["n"], uc["upper95"], uc["basis"]) == (0, 30, 0.0951, "scripted")
    assert records["underClassificationFloor"]["basis"] == "measured"
    harness_metadata = result.asset_materializations_for_node("harness_run")[0].metadata
    assert meta_value(harness_metadata, "model_numbers") == "scripted"


def test_what_a_run_hands_on_in_memory_equals_what_its_files_give(
    tmp_path: Path, instance_with: InstanceWith, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within a run each step gets the kept value and the report the kept case panels.

    A step of another run parses the files instead (and the report reads the cases and cards
    back): both must give the same, so the report is the same whichever a step got.
    """
    from graft_eval_pipeline.defs import io_manager, run_memo

    monkeypatch.setattr(io_manager, "forget_run", lambda run_id: None)  # look at them after the run
    synthetic = copy_synthetic(tmp_path, baseline=True)
    result = materialize_synthetic(synthetic, tmp_path, instance_with("synthetic"))
    assert result.success
    kept = {name: value for (run, name), value in run_memo._KEPT.items() if run == result.run_id}
    run_memo.forget_run(result.run_id)
    values = {name.removeprefix("value "): v for name, v in kept.items() if name.startswith("value ")}
    assert sorted(Path(p).name for p in values) == [
        "eval_metrics.json",
        "harness_run.json",
        "labeler_agreement.json",
    ]
    for path, (sha, value) in values.items():
        stamp, text = unstamp(Path(path).read_text(encoding="utf-8"), path)
        assert stamp.sha256 == sha and stamp.run_id == result.run_id
        assert TypeAdapter(type(value)).validate_python(json.loads(text)) == value
    harness = next(v for p, (_, v) in values.items() if p.endswith("harness_run.json"))
    (details,) = [v for name, v in kept.items() if name.startswith("case details ")]
    cs = open_set(synthetic, None)
    cards = dict(read_card_results(cs, harness.card_results))
    assert details == case_details(iter_cases(cs), cards, content=True) and len(details) == 30


def test_check_executions_are_recorded_per_case_set(tmp_path: Path, instance_with: InstanceWith) -> None:
    """Each set's check status is its own in the UI.

    The instance stores every check execution with the partition it ran for (they all had none when
    the checks were unpartitioned).
    """
    synthetic = copy_synthetic(tmp_path, baseline=True)
    instance = instance_with("synthetic")
    result = materialize_synthetic(synthetic, tmp_path, instance)
    assert result.success
    specs = [spec for asset in EVALUATION for spec in asset.check_specs]
    assert {spec.name for spec in specs} >= {"thresholds", "baseline_match", "risk_kappa_meets_target"}
    for spec in specs:
        assert spec.partitions_def == eval_report.partitions_def
        history = instance.event_log_storage.get_asset_check_execution_history(spec.key, limit=5)
        assert [record.partition for record in history] == ["synthetic"], spec.name


def test_a_changed_baseline_makes_the_blocking_check_fail(
    tmp_path: Path, instance_with: InstanceWith
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    baseline = synthetic.parent / "baselines" / "synthetic.json"
    data = json.loads(baseline.read_text())
    data["cases"][0]["final"] = "sensitive" if data["cases"][0]["final"] != "sensitive" else "trivial"
    baseline.write_text(json.dumps(data, indent=2) + "\n")

    result = materialize_synthetic(synthetic, tmp_path, instance_with("synthetic"))
    assert not result.success
    assert check_results(result)["baseline_match"] is False
    assert check_results(result)["thresholds"] is True


def test_metadata_carries_no_case_content(tmp_path: Path, instance_with: InstanceWith) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    result = materialize_synthetic(synthetic, tmp_path, instance_with("synthetic"))
    cases = [read_case(open_set(synthetic, None), i) for i in list_case_ids(open_set(synthetic, None))]
    secrets = {c.inputs.pr.title for c in cases} | {
        f.path for c in cases for f in c.inputs.files if "/" in f.path
    }
    text = json.dumps(
        [
            str(m.metadata)
            for node in ["harness_run", "eval_metrics", "eval_report", "eval_comparison", "loaded_case_set"]
            for m in result.asset_materializations_for_node(node)
        ]
    )
    assert [s for s in secrets if s in text] == []


def test_export_assets_refuse_the_synthetic_partition(tmp_path: Path, instance_with: InstanceWith) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    sets = CaseSetsResource(eval_dir=str(tmp_path / "pilots"), synthetic_dir=str(synthetic))
    result = dg.materialize(
        EXPORT,
        partition_key="synthetic",
        instance=instance_with("synthetic"),
        resources=resources(sets),
        run_config={"ops": {"export_candidates": {"config": EXPORT_WINDOW}}},
        raise_on_error=False,
    )
    assert not result.success
    failure = next(e for e in result.all_events if e.is_step_failure)
    error = failure.step_failure_data.error
    assert error is not None and "not a pilot set" in error.to_string()


def test_export_candidates_names_a_bad_window_by_its_config_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance_with: InstanceWith
) -> None:
    """The same rule as `graft-eval export --from/--to`, in the words of the asset's config."""
    key = generate_key()
    monkeypatch.setenv("GRAFT_EVAL_KEY", key)
    make_pilot_set(tmp_path / "pilots" / "pilot-acme", key=parse_key(key))
    sets = CaseSetsResource(
        eval_dir=str(tmp_path / "pilots"),
        synthetic_dir=str(tmp_path / "none"),
        eval_key=dg.EnvVar("GRAFT_EVAL_KEY"),
    )
    errors = []
    for window in ({"merged_from": "2026-07-01"}, {"merged_to": "end of June"}):
        result = dg.materialize(
            [export_candidates],
            partition_key="pilot-acme",
            instance=instance_with("pilot-acme"),
            resources=resources(sets, fake_github_resource(FakeGitHub("fictional-org/shop-demo"))),
            run_config={"ops": {"export_candidates": {"config": {**EXPORT_WINDOW, **window}}}},
            raise_on_error=False,
        )
        assert not result.success
        error = next(e for e in result.all_events if e.is_step_failure).step_failure_data.error
        assert error is not None
        errors.append(error.to_string())
    assert "the export window ends before it starts" in errors[0]
    assert "merged_to 'end of June' is not a date" in errors[1]


def fake_github_resource(fake: FakeGitHub) -> GitHubResource:
    """The export's GitHub access wired to the in-process fake API (credentials unused)."""

    class FakeGitHubResource(GitHubResource):
        def client(self) -> GitHubClient:
            limiter = RateLimiter(RateLimitOptions(), sleep=lambda _s: None, now=lambda: NOW.timestamp())
            return GitHubClient(
                auth=TokenAuth("test-token"),
                limiter=limiter,
                base_url="https://github.fake",
                transport=fake.transport(),
            )

    return FakeGitHubResource()


def test_export_assets_write_sealed_cases_into_a_pilot_partition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance_with: InstanceWith
) -> None:
    key = generate_key()
    monkeypatch.setenv("GRAFT_EVAL_KEY", key)
    make_pilot_set(tmp_path / "pilots" / "pilot-acme", key=parse_key(key))
    fake = FakeGitHub("fictional-org/shop-demo", clock=lambda: NOW.timestamp())
    for n in (1, 2, 3):
        at = datetime(2026, 6, 10, tzinfo=UTC) + timedelta(minutes=n)
        fake.add_pull(agent_pull(n, at, title=f"Secret title {n}", path=f"src/secret_{n}.py"))
    sets = CaseSetsResource(
        eval_dir=str(tmp_path / "pilots"),
        synthetic_dir=str(tmp_path / "none"),
        eval_key=dg.EnvVar("GRAFT_EVAL_KEY"),
    )
    result = dg.materialize(
        EXPORT,
        partition_key="pilot-acme",
        instance=instance_with("pilot-acme"),
        resources=resources(sets, fake_github_resource(fake)),
        run_config={
            "ops": {
                "export_candidates": {"config": EXPORT_WINDOW},
                "export_sample": {"config": {"sample": 2}},
            }
        },
    )
    assert result.success
    cs = open_set(tmp_path / "pilots" / "pilot-acme", parse_key(key))
    assert len(list_case_ids(cs)) == 2
    stored = sorted(p.name for p in (cs.dir / "assets").iterdir())
    assert stored == ["export_candidates.json.enc", "export_sample.json.enc", "exported_cases.json.enc"]
    on_disk = "".join(p.read_text() for p in (cs.dir / "assets").iterdir())
    metadata = json.dumps(
        [str(e.materialization.metadata) for e in result.get_asset_materialization_events()]
    )
    for n in (1, 2, 3):
        assert (
            f"Secret title {n}" not in on_disk + metadata and f"src/secret_{n}.py" not in on_disk + metadata
        )
    exported = result.asset_materializations_for_node("exported_cases")[0].metadata
    assert exported["exported"].value == 2


def _registry_requests(instance: dg.DagsterInstance, sets: CaseSetsResource) -> dict[str, list[str]]:
    result = case_set_registry_sensor(
        dg.build_sensor_context(instance=instance, resources={"case_sets": sets})
    )
    assert isinstance(result, dg.SensorResult)
    return {type(r).__name__: sorted(r.partition_keys) for r in result.dynamic_partitions_requests or []}


def test_registry_sensor_adds_new_sets_and_forgets_only_purged_ones(
    tmp_path: Path, instance_with: InstanceWith
) -> None:
    """A set this machine lacks may live on another machine that shares the instance.

    Only a set the purge log names stops being a partition.
    """
    synthetic = copy_synthetic(tmp_path, baseline=True)
    key = parse_key(generate_key())
    for set_id in ("pilot-a", "pilot-b"):
        make_pilot_set(tmp_path / "pilots" / set_id, key=key)
    instance = instance_with("pilot-elsewhere", "pilot-gone")
    sets = CaseSetsResource(eval_dir=str(tmp_path / "pilots"), synthetic_dir=str(synthetic))
    assert _registry_requests(instance, sets) == {
        "AddDynamicPartitionsRequest": ["pilot-a", "pilot-b", "synthetic"]
    }
    (tmp_path / "pilots" / "purge-log.jsonl").write_text(
        '{"setId": "pilot-gone", "purgedAt": "2026-11-30T10:00:00+00:00", "caseCount": 3, "by": "op"}\n'
        "not json\n"
    )
    assert _registry_requests(instance, sets) == {
        "AddDynamicPartitionsRequest": ["pilot-a", "pilot-b", "synthetic"],
        "DeleteDynamicPartitionsRequest": ["pilot-gone"],
    }


def test_sets_sync_prunes_absent_sets_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from graft_eval_pipeline.cli import main

    home = tmp_path / "dagster_home"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("GRAFT_EVAL_DIR", str(tmp_path / "pilots"))
    make_pilot_set(tmp_path / "pilots" / "pilot-a")
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("case_set", ["pilot-elsewhere"])
    assert main(["sets", "sync"]) == 0
    assert "added pilot-a, synthetic; removed none" in capsys.readouterr().out
    assert main(["sets", "sync", "--prune"]) == 0
    assert "added none; removed pilot-elsewhere" in capsys.readouterr().out
    with dg.DagsterInstance.get() as instance:
        assert sorted(instance.get_dynamic_partitions("case_set")) == ["pilot-a", "synthetic"]


def test_nightly_schedule_requests_the_synthetic_partition() -> None:
    context = dg.build_schedule_context(scheduled_execution_time=datetime(2026, 11, 29, 3, tzinfo=UTC))
    request = nightly_synthetic_schedule(context)
    assert isinstance(request, dg.RunRequest)
    assert request.partition_key == "synthetic"


@pytest.mark.parametrize("check", ["thresholds", "baseline_match"])
def test_report_checks_are_blocking(check: str) -> None:
    specs = {s.name: s for s in eval_report.check_specs}
    assert specs[check].blocking


def test_the_usage_check_is_a_warning_not_a_blocking_check() -> None:
    """Issue 26 item 5: baseline_usage showed as "a blocking asset check" with "Failed"."""
    spec = {s.name: s for s in eval_report.check_specs}["baseline_usage"]
    assert not spec.blocking
    assert spec.description is not None and spec.description.startswith("A warning, never blocking")


def test_label_inbox_flows_into_the_cases_and_low_kappa_warns(
    tmp_path: Path, instance_with: InstanceWith
) -> None:
    synthetic = copy_synthetic(tmp_path, baseline=True)
    cs = open_set(synthetic, None)
    ids = list_case_ids(cs)[:6]
    # a second labeler who calls everything sensitive: agreement with graft-synthetic is poor
    labels = {
        case_id: {
            "risk": "sensitive",
            "outOfScope": [],
            "goal": "g",
            "keyBehaviorChanges": [],
            "shouldFlag": False,
            "confidence": "low",
            "notes": "",
        }
        for case_id in ids
    }
    inbox = synthetic / "labels-inbox"
    inbox.mkdir()
    (inbox / "alice.json").write_text(json.dumps({"labeler": "alice", "labels": labels}))
    (inbox / "broken.json").write_text("{not json")
    sets = CaseSetsResource(eval_dir=str(tmp_path / "pilots"), synthetic_dir=str(synthetic))
    result = dg.materialize(
        [*EVALUATION, *EXPORT],
        selection=[label_import, labeler_agreement],
        partition_key="synthetic",
        instance=instance_with("synthetic"),
        resources=resources(sets),
    )
    assert result.success  # a warning check does not fail the run
    imported = result.asset_materializations_for_node("label_import")[0].metadata
    assert imported["imported_files"].value == 1
    assert imported["labels_by_labeler"].value == {"alice": 6}
    assert list(cast("list[str]", imported["bad_files"].value)) == ["broken.json"]
    assert (inbox / "broken.json").exists() and not (inbox / "alice.json").exists()
    assert [lbl.labeler for lbl in read_case(cs, ids[0]).labels] == ["graft-synthetic", "alice"]
    assert check_results(result) == {"risk_kappa_meets_target": False}
    (evaluation,) = result.get_asset_check_evaluations()
    assert evaluation.severity == dg.AssetCheckSeverity.WARN
    assert evaluation.description is not None
    assert evaluation.description.startswith("warning: risk kappa below 0.6 or undefined for ")
