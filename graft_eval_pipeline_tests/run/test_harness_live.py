"""Live mode of the harness with an injected client (U-HAR-2 to -8).

Estimate, confirmation, caps, cache, concurrency and per-model metering. No network: the client is
`FakeLive`.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest

from graft_eval_pipeline.card.llm import LlmFailure, LlmReply, LlmRequest, Usage
from graft_eval_pipeline.card.options import MAX_OUTPUT_TOKENS, Models
from graft_eval_pipeline.card.prepare import prepare_card_inputs
from graft_eval_pipeline.evalset.evaluate import run_eval
from graft_eval_pipeline.evalset.run.budget import Budget
from graft_eval_pipeline.evalset.run.options import RunOptions, generate_options
from graft_eval_pipeline.evalset.scoring.pricing import PRICES, upper_bound_estimate
from graft_eval_pipeline.evalset.sets.errors import EvalAbort, EvalError
from graft_eval_pipeline.evalset.sets.store import CaseSet, read_case, write_case
from graft_eval_pipeline_tests.builders import make_file, make_inputs
from graft_eval_pipeline_tests.live_fakes import (
    CALL_USAGE,
    Confirm,
    Factory,
    FakeLive,
    case_ids,
    default_answer,
    live_options,
    live_set,
    writer_reply,
)


def case_estimate(cs: CaseSet, case_id: str, opts: RunOptions) -> tuple[float, int]:
    """The 8.12 upper bound of one case, computed from prepare and pricing directly."""
    case = read_case(cs, case_id)
    prepared = prepare_card_inputs(case.inputs, generate_options(case, opts.models, opts.timeout_ms))
    usd = upper_bound_estimate(
        prepared.floor.risk, prepared.estimated_tokens, opts.models.strong, MAX_OUTPUT_TOKENS
    )
    assert usd is not None
    return usd, prepared.estimated_tokens


def test_U_HAR_2_confirm_sees_the_estimate_once_and_declining_calls_nothing(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 3)
    factory, confirm = Factory(FakeLive()), Confirm(answer=False)
    lines: list[str] = []
    opts = live_options(cs, factory, confirm, progress=lines.append)
    with pytest.raises(EvalAbort) as err:
        run_eval(opts)
    assert err.value.reason == "declined" and err.value.exit_code == 3
    (estimate,) = confirm.seen
    per_case = [case_estimate(cs, i, opts) for i in case_ids(3)]
    assert estimate.cases_to_call == 3 and estimate.cases_cached == 0
    assert estimate.estimated_tokens == sum(t for _, t in per_case)
    assert estimate.upper_bound_usd == pytest.approx(sum(u for u, _ in per_case))
    assert lines == [estimate.summary()]  # printed before the question, and nothing after
    assert factory.built == 0 and factory.client.requests == [] and factory.client.closed == 0
    assert not (cs.dir / "cache").exists()


def test_U_HAR_2_accepted_run_builds_the_client_once_and_reports_live(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 3)
    factory, confirm = Factory(FakeLive()), Confirm()
    report = run_eval(live_options(cs, factory, confirm))
    assert len(confirm.seen) == 1 and factory.built == 1 and factory.client.closed == 1
    assert len(factory.client.requests) == 6  # trivial floor, null writer: fast writer + verifier
    assert report.llm == "live" and report.run.complete and report.run.cached_results == 0
    assert [r.status for r in report.cases] == ["ok"] * 3


def test_U_HAR_3_estimate_over_the_cost_cap_aborts_before_confirm(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 2)
    factory, confirm = Factory(FakeLive()), Confirm()
    lines: list[str] = []
    opts = live_options(cs, factory, confirm, max_cost_usd=0.01, progress=lines.append)
    with pytest.raises(EvalAbort, match=r"over the cost cap \$0\.01") as err:
        run_eval(opts)
    assert err.value.reason == "over_budget"
    assert confirm.seen == [] and factory.built == 0 and factory.client.requests == []
    assert len(lines) == 1 and lines[0].startswith("estimate: 2 case(s) to call, 0 cached")


def test_U_HAR_4_cost_cap_during_the_run_skips_the_rest(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 5)
    probe = live_options(cs, Factory(FakeLive()))
    usd, _ = case_estimate(cs, case_ids(5)[0], probe)
    # each case really costs 3 estimates (two Sonnet calls of 1.5 each): the upfront check passes
    # with a cap of 5 estimates, cases 1 and 2 start (spent 0 and 3 estimates), case 3 would
    # need 6 + 1 > 5
    tokens = math.ceil(1.5 * usd * 1e6 / PRICES["claude-sonnet-5-5"].input)

    def expensive(request: LlmRequest) -> LlmReply:
        reply = default_answer(request)
        return LlmReply(json=reply.json, usage=Usage(input_tokens=tokens), model="claude-sonnet-5-5")

    factory = Factory(FakeLive(expensive))
    lines: list[str] = []
    opts = live_options(cs, factory, max_cost_usd=5 * usd, concurrency=1, progress=lines.append)
    report = run_eval(opts)
    assert [r.skipped for r in report.cases] == [None, None, "budget", "budget", "budget"]
    assert len(factory.client.requests) == 4
    assert report.run.complete is False and report.run.skipped_budget == 3
    assert report.metrics.run_cases == 2 and report.metrics.skipped == 3
    skipped = report.cases[2]
    assert (skipped.final, skipped.status, skipped.usage.calls, skipped.cost_usd) == (None, None, 0, 0.0)
    assert skipped.floor == "trivial" and skipped.gold is not None
    assert f"{case_ids(5)[2]} floor trivial skipped (budget)" in lines


def test_U_HAR_4_token_cap_during_the_run(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 3)
    _, tokens = case_estimate(cs, case_ids(3)[0], live_options(cs, Factory(FakeLive())))
    # the first case fits; after it, its real tokens (2 calls x 1,200) plus the next estimate
    # are one token over the cap
    factory = Factory(FakeLive())
    report = run_eval(live_options(cs, factory, max_tokens=tokens + 2399, concurrency=1))
    assert [r.skipped for r in report.cases] == [None, "budget", "budget"]
    assert report.metrics.usage.input_tokens + report.metrics.usage.output_tokens == 2400


def test_budget_waits_for_cases_in_flight_before_skipping() -> None:
    async def scenario() -> list[bool]:
        budget = Budget(max_cost_usd=1.0, max_tokens=1000)
        assert await budget.reserve(0.6, 10)
        waiting = asyncio.create_task(budget.reserve(0.6, 10))  # does not fit while the first runs
        await asyncio.sleep(0)
        assert not waiting.done()
        await budget.settle((0.6, 10), (0.1, 5))  # the first really cost 0.1
        second = await waiting
        await budget.settle((0.6, 10), (0.5, 5))
        third = await budget.reserve(0.6, 10)  # 0.6 spent, nothing in flight: skipped
        return [second, third, budget.spent_usd == pytest.approx(0.6), budget.tokens == 10]

    assert asyncio.run(scenario()) == [True, False, True, True]


def test_U_HAR_5_second_run_is_all_cached_one_edit_reruns_one_case_no_cache_reruns_all(
    tmp_path: Path,
) -> None:
    cs = live_set(tmp_path, 4)
    first_client = FakeLive()
    first = run_eval(live_options(cs, Factory(first_client)))
    assert len(first_client.requests) == 8 and first.metrics.cost_usd_this_run == first.metrics.cost_usd
    assert len(list((cs.dir / "cache").iterdir())) == 4

    factory, confirm = Factory(FakeLive()), Confirm()
    second = run_eval(live_options(cs, factory, confirm))
    assert factory.client.requests == [] and factory.built == 0 and confirm.seen == []
    assert all(r.cached for r in second.cases) and second.run.cached_results == 4
    assert second.metrics.cost_usd_this_run == 0
    assert second.metrics.cost_usd == first.metrics.cost_usd
    assert [r.final for r in second.cases] == [r.final for r in first.cases]

    edited_id = case_ids(4)[2]
    edited = read_case(cs, edited_id)
    patch = make_file(patch="@@ -1,1 +1,1 @@\n-const a = 1;\n+const a = 3;")
    write_case(
        cs, edited.model_copy(update={"inputs": make_inputs([patch], pr=edited.inputs.pr.model_dump())})
    )
    factory, confirm = Factory(FakeLive()), Confirm()
    third = run_eval(live_options(cs, factory, confirm))
    assert [r.cached for r in third.cases] == [True, True, False, True]
    assert len(factory.client.requests) == 2 and confirm.seen[0].cases_to_call == 1
    assert confirm.seen[0].cases_cached == 3

    factory = Factory(FakeLive())
    fourth = run_eval(live_options(cs, factory, use_cache=False))
    assert len(factory.client.requests) == 8 and not any(r.cached for r in fourth.cases)
    assert len(list((cs.dir / "cache").iterdir())) == 5  # still writes: one more key for the edit


def test_U_HAR_6_retryable_failures_are_not_cached_but_too_large_is(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 1)
    too_large = read_case(cs, case_ids(1)[0]).model_copy(
        update={"id": "syn-950-huge", "inputs": make_inputs(too_large=True, pr={"title": "huge"})}
    )
    write_case(cs, too_large)

    def rate_limited(request: LlmRequest) -> LlmFailure:
        return LlmFailure(kind="rate_limited", detail="HTTP 429 rate_limit_error")

    first = run_eval(live_options(cs, Factory(FakeLive(rate_limited))))
    rows = {r.id: r for r in first.cases}
    assert rows[case_ids(1)[0]].failure_reason == "llm_rate_limited"
    assert rows["syn-950-huge"].failure_reason == "too_large"
    assert len(list((cs.dir / "cache").iterdir())) == 1

    confirm = Confirm()
    client = FakeLive()
    second = run_eval(live_options(cs, Factory(client), confirm))
    assert confirm.seen[0].cases_to_call == 1 and confirm.seen[0].cases_cached == 1
    assert {r.id: r.cached for r in second.cases} == {case_ids(1)[0]: False, "syn-950-huge": True}
    assert len(client.requests) == 2


def test_U_HAR_6_an_ok_card_whose_verifier_timed_out_is_not_cached(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 1)

    def verifier_times_out(request: LlmRequest) -> LlmReply | LlmFailure:
        if request.purpose == "verifier":
            return LlmFailure(kind="timeout", detail="request timed out")
        return default_answer(request)

    report = run_eval(live_options(cs, Factory(FakeLive(verifier_times_out))))
    (row,) = report.cases
    assert (row.status, row.verifier_status) == ("ok", "error")
    assert not (cs.dir / "cache").exists()


def test_U_HAR_7_never_more_than_concurrency_cases_in_flight(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 10)
    client = FakeLive(delay_s=0.002)
    run_eval(live_options(cs, Factory(client), concurrency=3))
    assert client.peak == 3
    client = FakeLive(delay_s=0.002)
    run_eval(live_options(cs, Factory(client), use_cache=False))
    assert client.peak == 4  # live default


def test_U_HAR_8_each_call_is_metered_and_priced_at_its_own_model(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 1)

    def escalating(request: LlmRequest) -> LlmReply:
        if request.purpose == "verifier":
            return default_answer(request)
        return LlmReply(json=writer_reply("logic"), usage=CALL_USAGE, model=f"{request.model}-20261001")

    client = FakeLive(escalating)
    report = run_eval(live_options(cs, Factory(client)))
    assert [(r.purpose, r.model) for r in client.requests] == [
        ("writer", "claude-haiku-5-5"),
        ("writerEscalated", "claude-sonnet-5-5"),
        ("verifier", "claude-sonnet-5-5"),
    ]
    (row,) = report.cases
    haiku, sonnet = PRICES["claude-haiku-5-5"], PRICES["claude-sonnet-5-5"]
    one = CALL_USAGE.input_tokens, CALL_USAGE.output_tokens
    expected = (
        one[0] * haiku.input + one[1] * haiku.output + 2 * (one[0] * sonnet.input + one[1] * sonnet.output)
    ) / 1e6
    assert row.usage.calls == 3 and row.cost_usd == pytest.approx(expected)
    assert row.cost_usd != pytest.approx(3 * (one[0] * sonnet.input + one[1] * sonnet.output) / 1e6)
    assert report.metrics.cost_usd == pytest.approx(expected)


def test_live_mode_refuses_an_unpriced_model_before_any_call(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 1)
    factory, confirm = Factory(FakeLive()), Confirm()
    with pytest.raises(EvalError, match=r"no price for model.*claude-mystery-9") as err:
        run_eval(live_options(cs, factory, confirm, models=Models(strong="claude-mystery-9")))
    assert err.value.exit_code == 2 and confirm.seen == [] and factory.built == 0


def test_live_progress_holds_no_case_text(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 2)
    lines: list[str] = []
    run_eval(live_options(cs, Factory(FakeLive()), progress=lines.append))
    run_eval(live_options(cs, Factory(FakeLive()), progress=lines.append))
    assert lines[0].startswith("estimate: 2 case(s) to call")
    assert f"{case_ids(2)[0]} floor trivial final trivial ok" in lines
    assert f"{case_ids(2)[0]} floor trivial final trivial ok cached" in lines
    assert not any("GOALTEXT" in line for line in lines)


def test_U_HAR_9_a_bad_case_aborts_a_live_run_with_its_id_before_any_call(tmp_path: Path) -> None:
    cs = live_set(tmp_path, 3)
    data = json.loads((cs.dir / "cases" / f"{case_ids(3)[0]}.case.json").read_text())
    data["id"] = "syn-999-broken"
    data["labels"][0]["risk"] = "catastrophic"
    (cs.dir / "cases" / "syn-999-broken.case.json").write_text(json.dumps(data))
    factory, confirm = Factory(FakeLive()), Confirm()
    with pytest.raises(EvalError, match="syn-999-broken"):
        run_eval(live_options(cs, factory, confirm))
    assert confirm.seen == [] and factory.built == 0 and factory.client.requests == []
