"""Batch mode (issue 16 item 3) end to end against a mocked Message Batches API.

Phases built from the previous phase's answers, batch prices in the estimate, the caps and the rows,
the same cache, expired and errored requests, and a stopped run that resumes by polling.

The real Anthropic client runs on an `httpx2.MockTransport` (`BatchesApi`); polling waits in
virtual time; nothing reaches the network.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.cli import run as cli_run
from graft_eval_pipeline.defs.assets import evaluation
from graft_eval_pipeline.evalset.evaluate import run_eval
from graft_eval_pipeline.evalset.report import load_report
from graft_eval_pipeline.evalset.run import harness
from graft_eval_pipeline.evalset.run.batch import read_ledger, request_key
from graft_eval_pipeline.evalset.run.cache import read_entry
from graft_eval_pipeline.evalset.run.results import read_card_results
from graft_eval_pipeline.evalset.scoring.pricing import BATCH_PRICE_FACTOR, PRICES
from graft_eval_pipeline.evalset.sets import BATCHES_FILE
from graft_eval_pipeline.evalset.sets.crypto import generate_key
from graft_eval_pipeline.evalset.sets.env import EvalEnv
from graft_eval_pipeline.evalset.sets.errors import EvalAbort
from graft_eval_pipeline.evalset.sets.paths import card_results_file
from graft_eval_pipeline_tests.batch_fakes import (
    BatchesApi,
    batch_client,
    is_fast_writer,
    is_verifier,
    prompt_of,
)
from graft_eval_pipeline_tests.builders import NOW
from graft_eval_pipeline_tests.conftest import InstanceWith
from graft_eval_pipeline_tests.defs.test_prompt_sensor import materialize_harness
from graft_eval_pipeline_tests.live_fakes import (
    GOAL_MARK,
    Confirm,
    Factory,
    FakeLive,
    MessagesApi,
    case_ids,
    live_options,
    live_set,
)
from graft_eval_pipeline_tests.pacing_fakes import Stopped, VirtualTime
from graft_eval_pipeline_tests.run.test_live_secret_check import STRIPE, plant

API_KEY = "sk-test-not-a-real-key"
# every reply of the fake API: 1,200 input, 310 output, 900 cache-write and 4,000 cache-read tokens
USAGE = (1200, 310, 4000, 900)


pytestmark = pytest.mark.usefixtures("no_network", "clean_env")


def cache_entries(cs: Any) -> list[Any]:
    """The cached cards (the batch ledger shares the folder)."""
    return [p for p in (cs.dir / "cache").iterdir() if not p.name.startswith("batches.json")]


def standard_cost(model: str) -> float:
    p = PRICES[model]
    i, o, r, w = USAGE
    return (i * p.input + o * p.output + r * p.cache_read + w * p.cache_write) / 1e6


def batch_options(cs: Any, api: BatchesApi, vt: VirtualTime | None = None, **over: Any) -> Any:
    vt = vt or VirtualTime()
    factory = Factory(FakeLive())
    factory.client = batch_client(api)  # type: ignore[assignment]
    fields = {"batch": True, "clock": vt.clock, "sleep": vt.sleep, **over}
    return live_options(cs, factory, **fields)


def interactive_options(cs: Any, **over: Any) -> Any:
    api = MessagesApi(writer_risk="logic")
    factory = Factory(FakeLive())
    factory.client = batch_client(api)  # type: ignore[arg-type, assignment]
    vt = VirtualTime()
    return live_options(cs, factory, clock=vt.clock, sleep=vt.sleep, **over)


# --- phases, prices, cache ---------------------------------------------------------------------


def test_three_phases_each_built_from_the_previous_answers_at_batch_prices(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 3)
    api = BatchesApi(writer_risk="logic", polls_before_end=2)  # fast writers say logic: escalate
    vt, confirm, lines = VirtualTime(), Confirm(), list[str]()
    report = run_eval(batch_options(cs, api, vt, confirm=confirm, progress=lines.append))

    assert len(api.created) == 3  # writers, escalations, verifiers: one batch each
    writers, escalations, verifiers = (api.requests_of(b) for b in api.created)
    assert [p["model"] for p in writers] == ["claude-haiku-5-5"] * 3
    assert [p["model"] for p in escalations] == ["claude-sonnet-5-5"] * 3
    assert all(is_verifier(p) for p in verifiers) and len(verifiers) == 3
    assert all("timeout" not in p for p in writers + escalations + verifiers)
    # each verifier checks the card its case's escalated writer wrote (the PR title is its goal)
    assert sorted(GOAL_MARK in prompt_of(p) for p in verifiers) == [True] * 3
    assert api.interactive == [] and vt.sleeps == [5.0, 10.0] * 3  # two polls in progress, then ended

    assert [(r.status, r.final, r.usage.calls) for r in report.cases] == [("ok", "logic", 3)] * 3
    one_case = standard_cost("claude-haiku-5-5") + 2 * standard_cost("claude-sonnet-5-5")
    assert report.cases[0].cost_usd == pytest.approx(one_case * BATCH_PRICE_FACTOR, abs=1e-8)
    assert report.metrics.cost_usd == pytest.approx(3 * one_case * BATCH_PRICE_FACTOR, abs=1e-6)
    (estimate,) = confirm.seen
    assert estimate.batch and "at batch prices" in estimate.summary()

    info = report.run.batch
    assert info is not None
    assert (info.phases, info.batches, info.resumed_batches, info.requests) == (3, 3, 0, 9)
    assert (info.succeeded, info.errored, info.expired, info.retried_interactively) == (9, 0, 0, 0)
    assert info.wait_ms == 45_000
    assert read_ledger(cs, NOW).batches == []  # the run ended: nothing left to resume
    assert any(line.startswith("batch writers msgbatch_01: 3 request(s) submitted") for line in lines)
    assert not any(GOAL_MARK in line for line in lines)


def test_batch_cost_is_half_the_interactive_cost_of_the_same_answers(tmp_path: Path) -> None:
    batch_set, live = live_set(tmp_path / "b", 2), live_set(tmp_path / "i", 2)
    batch_confirm, live_confirm = Confirm(), Confirm()
    batched = run_eval(batch_options(batch_set, BatchesApi(writer_risk="logic"), confirm=batch_confirm))
    interactive = run_eval(interactive_options(live, confirm=live_confirm))
    assert [r.final for r in batched.cases] == [r.final for r in interactive.cases]
    for b, i in zip(batched.cases, interactive.cases, strict=True):
        assert i.cost_usd is not None
        assert b.usage == i.usage and b.cost_usd == pytest.approx(i.cost_usd * BATCH_PRICE_FACTOR, abs=1e-8)
    assert batch_confirm.seen[0].upper_bound_usd == pytest.approx(
        live_confirm.seen[0].upper_bound_usd * BATCH_PRICE_FACTOR
    )
    assert interactive.run.batch is None and batched.run.batch is not None


def test_results_enter_the_same_cache_as_interactive_calls(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 2)
    api = BatchesApi()
    first = run_eval(batch_options(cs, api))
    calls = len(api.created)
    interactive = interactive_options(cs)
    second = run_eval(interactive)  # not --batch: every card comes from the cache
    assert all(r.cached for r in second.cases) and second.metrics.cost_usd_this_run == 0
    assert second.metrics.cost_usd == pytest.approx(first.metrics.cost_usd)
    third = run_eval(batch_options(cs, api))
    assert all(r.cached for r in third.cases) and len(api.created) == calls
    stored = json.loads(cache_entries(cs)[0].read_text())
    assert all(call["batch"] is True for call in stored["result"]["calls"])
    entry = read_entry(cs, stored["key"])
    assert entry is not None and all(call.batch for call in entry.result.calls)


def test_identical_requests_are_sent_once_and_custom_ids_are_hashes() -> None:
    from graft_eval_pipeline.card.llm import LlmRequest

    a = LlmRequest("writer", "claude-haiku-5-5", "sys", "user", {"type": "object"}, 10, 1000)
    assert request_key(a) == request_key(
        LlmRequest("writer", "claude-haiku-5-5", "sys", "user", {"type": "object"}, 10, 5)
    )
    assert request_key(a) != request_key(
        LlmRequest("writer", "claude-haiku-5-5", "sys", "user2", {"type": "object"}, 10, 1000)
    )
    assert len(request_key(a)) == 64


# --- misses: expired, errored -------------------------------------------------------------------


def case_prompt(i: int) -> str:
    return f"{GOAL_MARK} change {i}"


def test_expired_and_transiently_errored_requests_are_retried_interactively(tmp_path: Path) -> None:
    def miss(params: dict[str, Any]) -> str | None:
        text = prompt_of(params)
        if is_fast_writer(params) and case_prompt(0) in text:
            return "expired"
        if is_fast_writer(params) and case_prompt(1) in text:
            return "errored:invalid_request_error"  # would fail again: reported, not retried
        if is_verifier(params) and case_prompt(2) in text:
            return "errored:overloaded_error"
        return None

    cs = live_set(tmp_path, 3)
    api = BatchesApi(miss=miss)
    lines: list[str] = []
    report = run_eval(batch_options(cs, api, progress=lines.append))
    rows = {r.id: r for r in report.cases}
    ids = sorted(rows)
    assert [rows[i].status for i in ids] == ["ok", "unavailable", "ok"]
    assert rows[ids[1]].failure_reason == "llm_unavailable" and rows[ids[1]].usage.calls == 1
    assert len(api.interactive) == 2  # case 0's writer and case 2's verifier
    assert [b["tool_choice"]["name"] for b in api.interactive] == ["submit_card", "submit_verification"]

    info = report.run.batch
    assert info is not None
    assert (info.requests, info.succeeded, info.errored, info.expired) == (5, 2, 2, 1)
    assert info.retried_interactively == 2
    haiku, sonnet = standard_cost("claude-haiku-5-5"), standard_cost("claude-sonnet-5-5")
    assert rows[ids[0]].cost_usd == pytest.approx(
        haiku + sonnet * BATCH_PRICE_FACTOR, abs=1e-8
    )  # writer at full price
    assert rows[ids[2]].cost_usd == pytest.approx(haiku * BATCH_PRICE_FACTOR + sonnet, abs=1e-8)
    assert "batch writers: 1 succeeded, 1 errored, 1 expired, 0 canceled" in lines
    # the errored case is not cached (unavailable is retryable), the others are
    assert len(cache_entries(cs)) == 2


def test_a_refused_batch_request_goes_to_the_fallback_model_interactively(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cs = live_set(tmp_path, 1)
    api = BatchesApi(refuse=is_fast_writer)
    env = EvalEnv.from_environ(
        {
            "ANTHROPIC_API_KEY": "test-key",
            "GRAFT_LLM_MAX_RETRIES": "0",
            "GRAFT_LLM_REFUSAL_FALLBACK": "claude-sonnet-5-5",
        }
    )
    factory = Factory(FakeLive())
    factory.client = batch_client(api, env)  # type: ignore[assignment]
    vt = VirtualTime()
    report = run_eval(live_options(cs, factory, batch=True, clock=vt.clock, sleep=vt.sleep))
    (row,) = report.cases
    assert row.status == "ok" and [b["model"] for b in api.interactive] == ["claude-sonnet-5-5"]
    assert report.run.batch is not None and report.run.batch.retried_interactively == 0


def test_without_budget_for_the_standard_price_a_missed_request_is_reported_not_retried(
    tmp_path: Path,
) -> None:
    cs = live_set(tmp_path, 1)
    probe = Confirm(answer=False)
    with pytest.raises(EvalAbort):
        run_eval(batch_options(cs, BatchesApi(), confirm=probe))
    estimate = probe.seen[0].upper_bound_usd
    api = BatchesApi(miss=lambda params: "expired" if is_fast_writer(params) else None)
    report = run_eval(batch_options(cs, api, max_cost_usd=1.5 * estimate))
    (row,) = report.cases
    assert (row.status, row.failure_reason) == ("unavailable", "llm_unavailable")
    assert api.interactive == [] and report.run.batch is not None
    assert report.run.batch.retried_interactively == 0 and report.run.batch.expired == 1


def test_caps_use_batch_prices(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 2)
    probe = Confirm(answer=False)
    with pytest.raises(EvalAbort):
        run_eval(interactive_options(cs, confirm=probe))
    standard = probe.seen[0].upper_bound_usd
    with pytest.raises(EvalAbort, match="over the cost cap"):
        run_eval(interactive_options(cs, max_cost_usd=0.75 * standard))
    report = run_eval(batch_options(cs, BatchesApi(), max_cost_usd=0.75 * standard))
    assert report.run.complete and [r.status for r in report.cases] == ["ok", "ok"]
    # a token cap that fits one case: the second is skipped (budget), decided up front
    api = BatchesApi()
    tokens = int(0.6 * probe.seen[0].estimated_tokens)
    report = run_eval(batch_options(live_set(tmp_path / "two", 2), api, max_tokens=tokens))
    assert [r.skipped for r in report.cases] == [None, "budget"] and report.run.complete is False
    assert sum(len(api.requests_of(b)) for b in api.created) == 2  # one writer, one verifier


def test_a_case_with_a_secret_in_its_prompt_is_skipped_and_not_sent_in_a_batch(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 3)
    leaky = case_ids(3)[1]
    plant(cs, leaky)
    api = BatchesApi()
    confirm, lines = Confirm(), list[str]()
    report = run_eval(batch_options(cs, api, confirm=confirm, progress=lines.append))
    rows = {r.id: r for r in report.cases}
    assert rows[leaky].skipped == "secret_detected" and rows[leaky].status is None
    assert [rows[i].status for i in sorted(rows) if i != leaky] == ["ok", "ok"]
    sent = [prompt_of(p) for b in api.created for p in api.requests_of(b)]
    assert len(sent) == 4 and not any(STRIPE in text for text in sent)  # two writers, two verifiers
    (estimate,) = confirm.seen
    assert (estimate.cases_to_call, estimate.cases_skipped_secret, estimate.batch) == (2, 1, True)
    assert report.run.skipped_budget == 0 and report.run.complete is False
    assert any(f"{leaky} floor" in line and "secret_detected" in line for line in lines)
    assert not any(STRIPE in line for line in lines)


def test_batch_rows_and_card_results_go_through_the_streaming_tally_and_file(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 3)
    ids = case_ids(3)
    plant(cs, ids[0])  # skipped before any batch: its row still comes first
    seen: list[str] = []
    options = batch_options(
        cs,
        BatchesApi(),
        card_results=card_results_file("r"),
        on_result=lambda case, _r: seen.append(case.id),
    )
    run = harness.run_harness(options)
    assert [r.id for r in run.rows] == ids and run.card_results == card_results_file("r")
    assert [r.skipped for r in run.rows] == ["secret_detected", None, None]
    stored = dict(read_card_results(cs, card_results_file("r")))
    assert sorted(stored) == sorted(seen) == ids[1:]
    assert all(call.batch for result in stored.values() for call in result.calls)
    assert run.run.batch is not None and run.run.batch.requests == 4


# --- a stopped run resumes by polling ------------------------------------------------------------


def test_a_stopped_run_resumes_its_batches_by_polling_not_resubmitting(tmp_path: Path) -> None:
    key = generate_key()
    from graft_eval_pipeline.evalset.sets.crypto import parse_key

    cs = live_set(tmp_path, 3, key=parse_key(key))
    api = BatchesApi(writer_risk="logic")
    api.hold = True
    with pytest.raises(Stopped):  # the operator stops the run while the writers' batch runs
        run_eval(batch_options(cs, api, VirtualTime(stop_after=2)))
    assert api.created == ["msgbatch_01"] and api.retrieved == ["msgbatch_01", "msgbatch_01"]
    assert not (cs.dir / "cache" / "batches.json").exists()
    sealed = (cs.dir / f"{BATCHES_FILE}.enc").read_bytes()
    assert b"msgbatch_01" not in sealed and GOAL_MARK.encode() not in sealed
    (record,) = read_ledger(cs, NOW).batches
    assert record.id == "msgbatch_01" and record.phase == "writer" and len(record.custom_ids) == 3
    assert cache_entries(cs) == []  # no card finished, nothing cached yet

    api.hold = False  # the batch ends meanwhile
    lines: list[str] = []
    report = run_eval(batch_options(cs, api, progress=lines.append))
    assert api.created == ["msgbatch_01", "msgbatch_02", "msgbatch_03"]  # writers not sent again
    assert api.results_read[0] == "msgbatch_01"
    assert "batch writers msgbatch_01: 3 request(s) resumed (in_progress)" in lines
    assert [r.status for r in report.cases] == ["ok"] * 3
    info = report.run.batch
    assert info is not None and (info.batches, info.resumed_batches) == (3, 1)
    assert read_ledger(cs, NOW).batches == []


def test_a_failing_batches_api_aborts_with_exit_3_and_keeps_the_record(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 2)
    api = BatchesApi()
    calls = {"n": 0}

    def flaky(request: httpx2.Request) -> httpx2.Response:
        if request.method == "GET" and calls["n"] == 0:
            calls["n"] += 1
            body = {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}
            return httpx2.Response(400, json=body)
        return api(request)

    factory = Factory(FakeLive())
    env_pool = httpx2.AsyncClient(transport=httpx2.MockTransport(flaky))
    from graft_eval_pipeline.evalset.run.live import anthropic_llm

    env = EvalEnv.from_environ({"ANTHROPIC_API_KEY": "test-key", "GRAFT_LLM_MAX_RETRIES": "0"})
    factory.client = anthropic_llm(env, http_client=env_pool, base_url="http://anthropic.invalid")  # type: ignore[assignment]
    vt = VirtualTime()
    with pytest.raises(
        EvalAbort, match=r"batch retrieve: HTTP 400 invalid_request_error.*run the same command"
    ) as err:
        run_eval(live_options(cs, factory, batch=True, clock=vt.clock, sleep=vt.sleep))
    assert err.value.exit_code == 3 and GOAL_MARK not in str(err.value)
    assert [b.id for b in read_ledger(cs, NOW).batches] == ["msgbatch_01"]
    report = run_eval(batch_options(cs, api))  # resumed: polled, not sent again
    assert api.created == ["msgbatch_01", "msgbatch_02"] and report.run.complete


def test_an_unreadable_ledger_is_an_error_naming_the_file(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 1)
    (cs.dir / "cache").mkdir(mode=0o700, exist_ok=True)
    (cs.dir / BATCHES_FILE).write_text('{"version": 1, "batches": [{"id": 3}]}')
    from graft_eval_pipeline.evalset.sets.errors import EvalError

    with pytest.raises(
        EvalError, match=r"cache/batches.json of set live-demo is not valid: batches\.0\.id: .*: delete it"
    ):
        run_eval(batch_options(cs, BatchesApi()))


# --- the CLI and Dagster ----------------------------------------------------------------------


def test_cli_batch_needs_live(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cs = live_set(tmp_path, 1)
    assert main(["run", "--set", str(cs.dir), "--batch"]) == 2
    assert "--batch sends live calls through the Message Batches API: add --live" in capsys.readouterr().err


def test_cli_live_batch_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    cs = live_set(tmp_path, 2)
    api = BatchesApi(polls_before_end=0)  # ended at the first poll: no real wait
    monkeypatch.setattr(cli_run, "LLM_FACTORY", lambda env: batch_client(api, env))
    assert main(["run", "--set", str(cs.dir), "--live", "--batch", "--yes"]) == 0
    err = capsys.readouterr().err
    assert "upper bound, at batch prices: half of standard" in err
    assert "batch writers msgbatch_01: 2 request(s) submitted" in err and GOAL_MARK not in err
    (run_dir,) = sorted((cs.dir / "runs").iterdir())
    report = load_report(run_dir / "report.json")
    assert report.run.batch is not None and report.run.batch.batches == 2 and report.run.complete


def test_dagster_harness_run_supports_batch(
    instance_with: InstanceWith, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    live_set(tmp_path, 2)
    api = BatchesApi(polls_before_end=0)
    monkeypatch.setattr(evaluation, "anthropic_llm", lambda env: batch_client(api, env))
    refused = materialize_harness(instance_with, tmp_path, {"mode": "fake", "batch": True})
    assert not refused.success and "set `mode: live`" in str(refused.failure_data_for_node("harness_run"))
    config = {"mode": "live", "confirm_live": True, "max_cost_usd": 5.0, "batch": True}
    result = materialize_harness(instance_with, tmp_path, config)
    assert result.success
    metadata = {
        k: v.value for k, v in result.asset_materializations_for_node("harness_run")[0].metadata.items()
    }
    assert metadata["batch"] is True and metadata["batches"] == 2 and metadata["batch_phases"] == 2
    assert metadata["batch_requests"] == 4 and len(api.created) == 2
