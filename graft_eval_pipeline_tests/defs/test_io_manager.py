"""The sealed IO manager (design §5) through real `dagster.materialize` runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

from graft_eval_pipeline.card.models import CamelModel
from graft_eval_pipeline.defs.io_manager import SealedIOManager
from graft_eval_pipeline.defs.resources import CaseSetsResource, case_sets_resource
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.errors import EvalError
from graft_eval_pipeline.evalset.sets.stamped import stamp_value, unstamp
from graft_eval_pipeline_tests.builders import make_pilot_set, make_synthetic_set
from graft_eval_pipeline_tests.conftest import InstanceWith

SECRET_GOAL = "Rotate the ledger reconciliation window"


class Summary(CamelModel):
    case_ids: list[str]
    goal_text: str


class NewSummary(CamelModel):
    """Summary after a code change: caseIds is one string now, so a stored Summary no longer fits."""

    case_ids: str
    goal_text: str


partitions = dg.DynamicPartitionsDefinition(name="case_set")


@dg.asset(partitions_def=partitions)
def upstream_summary() -> Summary:
    return Summary(case_ids=["c-1", "c-2"], goal_text=SECRET_GOAL)


@dg.asset(partitions_def=partitions)
def downstream_digest(upstream_summary: Summary) -> dict[str, object]:
    return {"count": len(upstream_summary.case_ids), "goal": upstream_summary.goal_text}


@dg.asset(partitions_def=partitions, name="downstream_digest")
def new_digest(upstream_summary: NewSummary) -> int:
    return len(upstream_summary.case_ids)


def _sets(tmp_path: Path, eval_key: str | dg.EnvVar | None) -> CaseSetsResource:
    return CaseSetsResource(
        eval_dir=str(tmp_path / "eval-root"),
        synthetic_dir=str(tmp_path / "repo" / "eval" / "synthetic"),
        eval_key=eval_key,
    )


KEY_FROM_ENV = dg.EnvVar("GRAFT_EVAL_KEY")


def _io(tmp_path: Path, eval_key: str | dg.EnvVar | None = KEY_FROM_ENV) -> SealedIOManager:
    return SealedIOManager(sets=_sets(tmp_path, eval_key))


def _make_set(tmp_path: Path, set_id: str, key: bytes | None) -> Path:
    if set_id == "synthetic":
        return make_synthetic_set(tmp_path / "repo" / "eval" / "synthetic").dir
    return make_pilot_set(tmp_path / "eval-root" / set_id, key=key).dir


def _run(
    tmp_path: Path,
    set_id: str,
    instance: dg.DagsterInstance,
    selection: list[dg.AssetsDefinition] | None = None,
    *,
    raise_on_error: bool = True,
) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [upstream_summary, downstream_digest],
        selection=selection,
        partition_key=set_id,
        instance=instance,
        resources={"io_manager": _io(tmp_path)},
        raise_on_error=raise_on_error,
    )


def _errors(result: dg.ExecuteInProcessResult) -> str:
    return " ".join(
        event.step_failure_data.error.to_string()
        for event in result.all_events
        if event.is_step_failure and event.step_failure_data.error is not None
    )


def test_pilot_round_trip_is_sealed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance_with: InstanceWith
) -> None:
    key_text = generate_key()
    monkeypatch.setenv("GRAFT_EVAL_KEY", key_text)
    folder = _make_set(tmp_path, "pilot-acme", parse_key(key_text))
    result = _run(tmp_path, "pilot-acme", instance_with("pilot-acme"))
    assert result.success
    assert result.output_for_node("downstream_digest") == {"count": 2, "goal": SECRET_GOAL}
    files = sorted(p.relative_to(folder).as_posix() for p in (folder / "assets").iterdir())
    assert files == ["assets/downstream_digest.json.enc", "assets/upstream_summary.json.enc"]
    for name in files:
        raw = (folder / name).read_text()
        assert (folder / name).stat().st_mode & 0o777 == 0o600
        assert '"graftEval": "enc-v1"' in raw
        for fragment in ("ledger", "reconciliation", "c-1", "caseIds", "count"):
            assert fragment not in raw
    metadata = result.asset_materializations_for_node("upstream_summary")[0].metadata
    assert metadata["sealed"].value is True
    assert key_text not in str(metadata)


def test_synthetic_round_trip_is_plain_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance_with: InstanceWith
) -> None:
    monkeypatch.setenv("GRAFT_EVAL_KEY", generate_key())
    folder = _make_set(tmp_path, "synthetic", None)
    result = _run(tmp_path, "synthetic", instance_with("synthetic"))
    assert result.success
    assert result.output_for_node("downstream_digest") == {"count": 2, "goal": SECRET_GOAL}
    stamp, value = unstamp((folder / "assets" / "upstream_summary.json").read_text(), "upstream")
    assert value == '{"caseIds": ["c-1", "c-2"], "goalText": "' + SECRET_GOAL + '"}'
    assert stamp.run_id == result.run_id
    metadata = result.asset_materializations_for_node("upstream_summary")[0].metadata
    assert metadata["written_by_run"].value == result.run_id
    assert metadata["value_sha256"].value == stamp.sha256
    assert not list((folder / "assets").glob("*.enc"))


def test_synthetic_materializes_without_a_key(tmp_path: Path, instance_with: InstanceWith) -> None:
    _make_set(tmp_path, "synthetic", None)
    sets = case_sets_resource({"GRAFT_EVAL_DIR": str(tmp_path / "eval-root")})
    assert sets.eval_key is None
    result = dg.materialize(
        [upstream_summary, downstream_digest],
        partition_key="synthetic",
        instance=instance_with("synthetic"),
        resources={"io_manager": _io(tmp_path, sets.eval_key)},
    )
    assert result.success


def test_factory_wires_the_key_through_env_var() -> None:
    sets = case_sets_resource({"GRAFT_EVAL_KEY": "set", "GRAFT_EVAL_DIR": "/somewhere"})
    assert isinstance(sets.eval_key, dg.EnvVar) and sets.eval_key.env_var_name == "GRAFT_EVAL_KEY"
    assert isinstance(sets.eval_dir, dg.EnvVar) and sets.eval_dir.env_var_name == "GRAFT_EVAL_DIR"


def test_file_copied_to_another_set_fails_to_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance_with: InstanceWith
) -> None:
    key_text = generate_key()
    monkeypatch.setenv("GRAFT_EVAL_KEY", key_text)
    set_a = _make_set(tmp_path, "pilot-acme", parse_key(key_text))
    set_b = _make_set(tmp_path, "pilot-beta", parse_key(key_text))
    instance = instance_with("pilot-acme", "pilot-beta")
    assert _run(tmp_path, "pilot-acme", instance).success
    (set_b / "assets").mkdir(mode=0o700)
    shutil.copy(set_a / "assets" / "upstream_summary.json.enc", set_b / "assets")
    with pytest.raises(Exception, match="moved from another set") as err:
        _run(tmp_path, "pilot-beta", instance, selection=[downstream_digest])
    assert SECRET_GOAL not in str(err.value)
    assert not (set_b / "assets" / "downstream_digest.json.enc").exists()


def test_wrong_key_fails_with_the_clear_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance_with: InstanceWith
) -> None:
    _make_set(tmp_path, "pilot-acme", parse_key(generate_key()))
    monkeypatch.setenv("GRAFT_EVAL_KEY", generate_key())
    result = dg.materialize(
        [upstream_summary, downstream_digest],
        partition_key="pilot-acme",
        instance=instance_with("pilot-acme"),
        resources={"io_manager": _io(tmp_path)},
        raise_on_error=False,
    )
    assert not result.success
    assert "wrong GRAFT_EVAL_KEY for set pilot-acme" in _errors(result)


def test_pilot_without_key_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance_with: InstanceWith
) -> None:
    monkeypatch.delenv("GRAFT_EVAL_KEY", raising=False)
    _make_set(tmp_path, "pilot-acme", parse_key(generate_key()))
    manager = _io(tmp_path, case_sets_resource({}).eval_key)
    result = dg.materialize(
        [upstream_summary],
        partition_key="pilot-acme",
        instance=instance_with("pilot-acme"),
        resources={"io_manager": manager},
        raise_on_error=False,
    )
    assert not result.success
    assert "GRAFT_EVAL_KEY is not set" in _errors(result)


def test_a_stored_value_of_an_older_shape_fails_without_quoting_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance_with: InstanceWith
) -> None:
    monkeypatch.setenv("GRAFT_EVAL_KEY", generate_key())
    _make_set(tmp_path, "synthetic", None)
    instance = instance_with("synthetic")
    assert _run(tmp_path, "synthetic", instance).success
    with pytest.raises(EvalError, match=r"assets/upstream_summary\.json of set synthetic: caseIds") as err:
        dg.materialize(
            [upstream_summary, new_digest],
            selection=[new_digest],
            partition_key="synthetic",
            instance=instance,
            resources={"io_manager": _io(tmp_path)},
        )
    assert SECRET_GOAL not in str(err.value)


def _latest_run(instance: dg.DagsterInstance) -> str:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("upstream_summary"), asset_partitions=["synthetic"]),
        limit=1,
    ).records
    return records[0].run_id


def test_a_value_of_another_run_is_refused_naming_both_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance_with: InstanceWith
) -> None:
    """Two machines share the instance, not the set folder.

    This folder holds run A's value while the instance's latest materialization is run B's. The step
    refuses it and names both.
    """
    monkeypatch.setenv("GRAFT_EVAL_KEY", generate_key())
    folder = _make_set(tmp_path, "synthetic", None)
    instance = instance_with("synthetic")
    first = _run(tmp_path, "synthetic", instance)
    kept = (folder / "assets" / "upstream_summary.json").read_text()
    second = _run(tmp_path, "synthetic", instance, selection=[upstream_summary])
    assert first.run_id != second.run_id == _latest_run(instance)
    (folder / "assets" / "upstream_summary.json").write_text(kept)  # run A's value is back
    result = _run(tmp_path, "synthetic", instance, selection=[downstream_digest], raise_on_error=False)
    assert not result.success
    message = _errors(result)
    assert f"stale value: this machine's set folder holds run {first.run_id}'s" in message
    assert f"expected run {second.run_id}'s" in message
    assert SECRET_GOAL not in message


def test_a_run_loads_its_own_value_even_when_another_run_materialized_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance_with: InstanceWith
) -> None:
    """Within one run, a step expects the value its own run wrote.

    When a writer that ignored the hold replaced it in between (here a step of the same run plays
    that writer), it is refused.
    """
    monkeypatch.setenv("GRAFT_EVAL_KEY", generate_key())
    folder = _make_set(tmp_path, "synthetic", None)
    stored = folder / "assets" / "upstream_summary.json"

    @dg.asset(partitions_def=partitions, deps=[upstream_summary])
    def writer() -> int:
        stored.write_text(stamp_value('{"caseIds": [], "goalText": "other"}', "other-run")[0])
        return 0

    result = _read_after(tmp_path, writer, instance_with("synthetic"))
    assert not result.success
    assert (
        f"stale value: this machine's set folder holds run other-run's asset upstream_summary of set "
        f"synthetic, expected run {result.run_id}'s" in _errors(result)
    )


def test_a_value_without_its_stamp_or_with_another_hash_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance_with: InstanceWith
) -> None:
    monkeypatch.setenv("GRAFT_EVAL_KEY", generate_key())
    folder = _make_set(tmp_path, "synthetic", None)
    instance = instance_with("synthetic")
    assert _run(tmp_path, "synthetic", instance).success
    stored = folder / "assets" / "upstream_summary.json"
    header, _, value = stored.read_text().partition("\n")
    stored.write_text(value)  # what older code wrote: no stamp
    result = _run(tmp_path, "synthetic", instance, selection=[downstream_digest], raise_on_error=False)
    assert "records no run that wrote it" in _errors(result)
    stored.write_text(header + "\n" + value.replace("c-2", "c-3"))  # edited after the stamp
    result = _run(tmp_path, "synthetic", instance, selection=[downstream_digest], raise_on_error=False)
    assert "does not match its own hash" in _errors(result)
    run_id = unstamp(header + "\n" + value, "x")[0].run_id
    stored.write_text(stamp_value(value.replace("c-2", "c-3"), run_id)[0])  # re-stamped, same run
    result = _run(tmp_path, "synthetic", instance, selection=[downstream_digest], raise_on_error=False)
    assert (
        f"stale value: asset upstream_summary of set synthetic of run {run_id} is not the value"
        in _errors(result)
    )


def test_within_a_run_the_kept_value_is_handed_on_and_a_later_run_reads_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance_with: InstanceWith
) -> None:
    """The step after the writer in the same run gets the very object; another run parses the file.

    Both are equal, and the file is written (sealed in a pilot set) either way.
    """
    monkeypatch.setenv("GRAFT_EVAL_KEY", generate_key())
    folder = _make_set(tmp_path, "synthetic", None)
    made: list[Summary] = []
    seen: list[Summary] = []

    @dg.asset(partitions_def=partitions, name="upstream_summary")
    def writer() -> Summary:
        made.append(Summary(case_ids=["c-1", "c-2"], goal_text=SECRET_GOAL))
        return made[-1]

    @dg.asset(partitions_def=partitions, name="downstream_digest")
    def reader(upstream_summary: Summary) -> int:
        seen.append(upstream_summary)
        return len(upstream_summary.case_ids)

    instance = instance_with("synthetic")
    resources = {"io_manager": _io(tmp_path)}
    first = dg.materialize(
        [writer, reader], partition_key="synthetic", instance=instance, resources=resources
    )
    assert first.success and seen[0] is made[0]
    assert (folder / "assets" / "upstream_summary.json").is_file()
    second = dg.materialize(
        [writer, reader],
        selection=[reader],
        partition_key="synthetic",
        instance=instance,
        resources=resources,
    )
    assert second.success and seen[1] is not made[0] and seen[1] == made[0]


def test_within_a_run_a_file_restamped_in_between_is_refused_despite_the_kept_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance_with: InstanceWith
) -> None:
    """The kept value is handed on only while the file holds it: same run id, another hash fails."""
    monkeypatch.setenv("GRAFT_EVAL_KEY", generate_key())
    folder = _make_set(tmp_path, "synthetic", None)
    stored = folder / "assets" / "upstream_summary.json"

    @dg.asset(partitions_def=partitions, deps=[upstream_summary])
    def writer() -> int:  # re-stamps the file with this run's id
        this_run = unstamp(stored.read_text(), "upstream")[0].run_id  # written by this run's first step
        stored.write_text(stamp_value('{"caseIds": [], "goalText": "other"}', this_run)[0])
        return 0

    result = _read_after(tmp_path, writer, instance_with("synthetic"))
    assert not result.success
    assert f"of run {result.run_id} is not the value that run recorded" in _errors(result)


def _read_after(
    tmp_path: Path, writer: dg.AssetsDefinition, instance: dg.DagsterInstance
) -> dg.ExecuteInProcessResult:
    """Materialize upstream_summary, then `writer` (which tampers with its file), then a reader of it."""

    @dg.asset(partitions_def=partitions)
    def reader(upstream_summary: Summary, writer: int) -> int:
        return len(upstream_summary.case_ids)

    return dg.materialize(
        [upstream_summary, writer, reader],
        partition_key="synthetic",
        instance=instance,
        resources={"io_manager": _io(tmp_path)},
        raise_on_error=False,
    )
