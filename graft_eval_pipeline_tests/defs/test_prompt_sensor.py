"""prompt_change_sensor (design §5) and the live harness_run asset's guards (E19 in Dagster)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from graft_eval_pipeline.card.engine import engine_fingerprint
from graft_eval_pipeline.card.prompts import PROMPT_VERSION, prompt_fingerprint
from graft_eval_pipeline.definitions import defs
from graft_eval_pipeline.defs import sensors
from graft_eval_pipeline.defs.assets import evaluation
from graft_eval_pipeline.defs.assets.evaluation import harness_run
from graft_eval_pipeline.defs.io_manager import SealedIOManager
from graft_eval_pipeline.defs.jobs import evaluate_case_set_job
from graft_eval_pipeline.defs.resources import CaseSetsResource
from graft_eval_pipeline.defs.sensors import prompt_change_sensor
from graft_eval_pipeline.evalset.scoring.rows import HarnessRun
from graft_eval_pipeline.evalset.sets import LIVE_RERUN_FILE
from graft_eval_pipeline_tests.conftest import InstanceWith
from graft_eval_pipeline_tests.live_fakes import FakeLive, live_set

CURRENT_MODELS = "claude-haiku-5-5 / claude-sonnet-5-5"


pytestmark = pytest.mark.usefixtures("clean_env")


def report_event(instance: dg.DagsterInstance, set_id: str, **over: str) -> None:
    metadata = {
        "prompt_fingerprint": prompt_fingerprint(),
        "prompt_version": PROMPT_VERSION,
        "engine_fingerprint": engine_fingerprint(),
        "models": CURRENT_MODELS,
        "llm": "fake",
        **over,
    }
    instance.report_runless_asset_event(
        dg.AssetMaterialization(asset_key="eval_report", partition=set_id, metadata=metadata)
    )


def evaluate(instance: dg.DagsterInstance, tmp_path: Path) -> dg.SensorResult:
    sets = CaseSetsResource(eval_dir=str(tmp_path / "pilots"), synthetic_dir=str(tmp_path / "synthetic"))
    context = dg.build_sensor_context(instance=instance, resources={"case_sets": sets})
    result = prompt_change_sensor(context)
    assert isinstance(result, dg.SensorResult)
    return result


def run_requests(result: dg.SensorResult) -> list[dg.RunRequest]:
    assert result.run_requests is not None
    return list(result.run_requests)


def partition_of(request: dg.RunRequest) -> str:
    assert request.partition_key is not None
    return request.partition_key


def opt_in(tmp_path: Path, set_id: str, text: str) -> None:
    folder = tmp_path / "pilots" / set_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / LIVE_RERUN_FILE).write_text(text)


@pytest.fixture
def instance(instance_with: InstanceWith) -> dg.DagsterInstance:
    return instance_with("synthetic", "pilot-fresh", "pilot-old-prompt", "pilot-old-version", "pilot-never")


def test_stale_sets_are_rerun_fake_or_live_where_opted_in(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    report_event(instance, "synthetic", prompt_fingerprint="0" * 64)
    report_event(instance, "pilot-fresh")
    report_event(instance, "pilot-old-prompt", prompt_fingerprint="1" * 64)
    report_event(instance, "pilot-old-prompt")  # the newest report wins: up to date
    report_event(instance, "pilot-old-version", prompt_version="intent-v0")
    opt_in(tmp_path, "pilot-old-version", '{"maxCostUsd": 5}')
    opt_in(tmp_path, "pilot-fresh", '{"maxCostUsd": 5}')  # opted in, but nothing changed

    result = evaluate(instance, tmp_path)
    requests = {partition_of(r): r for r in run_requests(result)}
    assert sorted(requests) == ["pilot-old-version", "synthetic"]
    assert requests["synthetic"].run_config == {"ops": {"harness_run": {"config": {"mode": "fake"}}}}
    live = requests["pilot-old-version"].run_config["ops"]["harness_run"]["config"]
    assert live == {"mode": "live", "confirm_live": True, "max_cost_usd": 5.0}
    assert requests["pilot-old-version"].tags["graft/mode"] == "live"
    job = defs.resolve_job_def(evaluate_case_set_job.name)
    for request in requests.values():
        dg.validate_run_config(job, request.run_config)  # the config the job really accepts

    # the same state gives the same run keys: the daemon requests each set once per signature
    again = {partition_of(r): r.run_key for r in run_requests(evaluate(instance, tmp_path))}
    assert again == {k: r.run_key for k, r in requests.items()}


def test_a_model_change_makes_every_reported_set_stale(
    instance: dg.DagsterInstance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report_event(instance, "synthetic")
    report_event(instance, "pilot-fresh")
    assert evaluate(instance, tmp_path).skip_reason is not None
    monkeypatch.setenv("GRAFT_LLM_MODEL_STRONG", "claude-opus-5-5")
    result = evaluate(instance, tmp_path)
    assert sorted(partition_of(r) for r in run_requests(result)) == ["pilot-fresh", "synthetic"]
    assert all("claude-opus-5-5" in (r.run_key or "") for r in run_requests(result))


def test_a_new_fingerprint_gives_a_new_run_key(
    instance: dg.DagsterInstance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report_event(instance, "synthetic", prompt_fingerprint="0" * 64)
    (first,) = run_requests(evaluate(instance, tmp_path))
    monkeypatch.setattr(sensors, "prompt_fingerprint", lambda: "f" * 64)
    (second,) = run_requests(evaluate(instance, tmp_path))
    assert first.run_key != second.run_key and "f" * 64 in (second.run_key or "")


def test_a_broken_opt_in_file_falls_back_to_fake(instance: dg.DagsterInstance, tmp_path: Path) -> None:
    report_event(instance, "pilot-old-prompt", prompt_fingerprint="1" * 64)
    opt_in(tmp_path, "pilot-old-prompt", '{"maxCostUsd": -1}')
    (request,) = run_requests(evaluate(instance, tmp_path))
    assert request.run_config["ops"]["harness_run"]["config"] == {"mode": "fake"}


def test_sets_never_reported_are_left_alone(instance: dg.DagsterInstance, tmp_path: Path) -> None:
    result = evaluate(instance, tmp_path)
    assert result.run_requests == [] and result.skip_reason is not None
    assert "matches the current prompts and models" in (result.skip_reason.skip_message or "")


# --- the harness_run asset in live mode -------------------------------------------------------


def materialize_harness(
    instance_with: InstanceWith, tmp_path: Path, config: dict[str, Any], set_id: str = "live-demo"
) -> dg.ExecuteInProcessResult:
    sets = CaseSetsResource(eval_dir=str(tmp_path), synthetic_dir=str(tmp_path / "synthetic"))
    return dg.materialize(
        [harness_run],
        partition_key=set_id,
        instance=instance_with(set_id),
        resources={"case_sets": sets, "io_manager": SealedIOManager(sets=sets)},
        run_config={"ops": {"harness_run": {"config": config}}},
        raise_on_error=False,
    )


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> FakeLive:
    fake = FakeLive()
    monkeypatch.setattr(evaluation, "anthropic_llm", lambda _env: fake)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
    return fake


@pytest.mark.parametrize(
    "config",
    [{"mode": "live"}, {"mode": "live", "confirm_live": True}, {"mode": "live", "max_cost_usd": 5.0}],
)
def test_live_asset_needs_confirm_live_and_a_cost_cap_before_any_call(
    tmp_path: Path, client: FakeLive, config: dict[str, Any], instance_with: InstanceWith
) -> None:
    live_set(tmp_path, 2)
    result = materialize_harness(instance_with, tmp_path, config)
    assert not result.success
    failure = result.failure_data_for_node("harness_run")
    assert "confirm_live: true" in str(failure) and "max_cost_usd" in str(failure)
    assert client.requests == []


def test_live_asset_records_the_estimate_and_runs_under_the_cap(
    tmp_path: Path, client: FakeLive, instance_with: InstanceWith
) -> None:
    live_set(tmp_path, 3)
    config = {"mode": "live", "confirm_live": True, "max_cost_usd": 5.0}
    result = materialize_harness(instance_with, tmp_path, config)
    assert result.success
    metadata: dict[str, Any] = {
        k: v.value for k, v in result.asset_materializations_for_node("harness_run")[0].metadata.items()
    }
    assert metadata["mode"] == "live" and metadata["complete"] is True
    assert metadata["estimate_cases_to_call"] == 3 and metadata["estimate_cases_cached"] == 0
    assert metadata["estimate_tokens"] > 0 and 0 < metadata["estimate_upper_bound_usd"] <= 5.0
    assert metadata["calls"] == len(client.requests) == 6 and metadata["cost_usd_this_run"] > 0
    assert isinstance(result.output_for_node("harness_run"), HarnessRun)

    again = materialize_harness(instance_with, tmp_path, config)  # cached: no call, cost 0 this run
    metadata = {
        k: v.value for k, v in again.asset_materializations_for_node("harness_run")[0].metadata.items()
    }
    assert metadata["cached_results"] == 3 and metadata["calls"] == 0 and metadata["cost_usd_this_run"] == 0
    assert len(client.requests) == 6


def test_live_asset_refuses_an_estimate_over_its_cap(
    tmp_path: Path, client: FakeLive, instance_with: InstanceWith
) -> None:
    live_set(tmp_path, 3)
    result = materialize_harness(
        instance_with, tmp_path, {"mode": "live", "confirm_live": True, "max_cost_usd": 0.01}
    )
    assert not result.success
    assert "over the cost cap" in str(result.failure_data_for_node("harness_run"))
    assert client.requests == []


def test_live_asset_without_an_api_key_fails_before_any_call(
    tmp_path: Path, client: FakeLive, monkeypatch: pytest.MonkeyPatch, instance_with: InstanceWith
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    live_set(tmp_path, 1)
    result = materialize_harness(
        instance_with, tmp_path, {"mode": "live", "confirm_live": True, "max_cost_usd": 5.0}
    )
    assert not result.success and "ANTHROPIC_API_KEY is not set" in str(
        result.failure_data_for_node("harness_run")
    )
    assert client.requests == []


def test_opt_in_file_is_json_with_max_cost_usd(tmp_path: Path) -> None:
    opt_in(tmp_path, "pilot-x", json.dumps({"maxCostUsd": 2.5}))
    live = sensors.read_live_rerun(tmp_path / "pilots" / "pilot-x")
    assert live is not None and live.max_cost_usd == 2.5
    assert sensors.read_live_rerun(tmp_path / "pilots" / "pilot-y") is None


def test_a_change_of_the_card_engines_code_reruns_the_sets_like_a_prompt_change(
    instance: dg.DagsterInstance, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A floor rule or generate_card edited, prompts untouched (issue 26 item 7)."""
    report_event(instance, "synthetic")
    report_event(instance, "pilot-old-prompt", engine_fingerprint="0" * 64)  # made by older engine code
    (request,) = run_requests(evaluate(instance, tmp_path))
    assert partition_of(request) == "pilot-old-prompt" and engine_fingerprint() in (request.run_key or "")
    monkeypatch.setattr(sensors, "engine_fingerprint", lambda: "e" * 64)
    assert sorted(partition_of(r) for r in run_requests(evaluate(instance, tmp_path))) == [
        "pilot-old-prompt",
        "synthetic",
    ]
