"""--trials N through the live mock transport (answers that vary per call) and in fake mode.

Each trial cached on its own, flaky cases, the worst-case view and the estimate times N.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from graft_eval_pipeline.card.llm import LlmReply, LlmRequest
from graft_eval_pipeline.cli.run import CLI_NAMES
from graft_eval_pipeline.evalset.evaluate import run_eval
from graft_eval_pipeline.evalset.run.budget import Estimate
from graft_eval_pipeline.evalset.run.options import RunSettings
from graft_eval_pipeline.evalset.sets.errors import EvalAbort, EvalError
from graft_eval_pipeline.evalset.sets.store import CaseSet
from graft_eval_pipeline_tests.builders import make_label, run_options
from graft_eval_pipeline_tests.live_fakes import (
    CALL_USAGE,
    GOAL_MARK,
    Confirm,
    Factory,
    FakeLive,
    default_answer,
    live_options,
    live_set,
    writer_reply,
)


class FlipsCaseZero:
    """Case 0's writer answers alternate between trivial and logic on its successive calls.

    Case 0's writer answers trivial, logic, trivial, ... on its successive calls; every other call
    gets the default (trivial writer, agreeing verifier).
    """

    def __init__(self) -> None:
        self.writer_calls: Counter[str] = Counter()

    def __call__(self, request: LlmRequest) -> LlmReply:
        if request.purpose == "writer" and f"{GOAL_MARK} change 0" in request.user:
            self.writer_calls["0"] += 1
            if self.writer_calls["0"] % 2 == 0:
                return LlmReply(json=writer_reply("logic"), usage=CALL_USAGE, model=f"{request.model}-x")
        return default_answer(request)


def logic_gold_set(root: Path, n: int) -> CaseSet:
    return live_set(root, n, labels=[make_label(risk="logic")])


def test_trials_are_cached_on_their_own_and_a_varying_case_is_flaky(tmp_path: Path) -> None:
    cs = logic_gold_set(tmp_path, 3)
    client = FakeLive(FlipsCaseZero())
    confirm = Confirm()
    report = run_eval(live_options(cs, Factory(client), confirm, trials=3))
    (estimate,) = confirm.seen
    assert estimate.cases_to_call == 9  # 3 cases x 3 trials
    assert report.trials is not None and report.trials.trials == 3
    assert [r.trial for r in report.cases] == [0, 0, 0]
    assert sorted((r.id, r.trial) for r in report.trials.rows) == sorted(
        (c.id, t) for c in report.cases for t in (1, 2)
    )
    ids = [c.id for c in report.cases]
    assert report.trials.flaky_cases == [ids[0]]
    first = report.trials.cases[0]
    assert first.finals == ["trivial", "logic", "trivial"] and not first.agreed
    assert first.under_share == pytest.approx(2 / 3, abs=1e-4)
    assert all(c.agreed and c.under_share == 1.0 for c in report.trials.cases[1:])
    under = report.trials.rates["underClassification"]
    assert (under.k, under.n) == (8, 9) and under.per_trial == [1.0, pytest.approx(0.6667), 1.0]
    assert (report.trials.under_any_trial.k, report.trials.under_any_trial.n) == (3, 3)
    # the standard metrics stay on trial 0
    assert report.metrics.run_cases == 3
    calls = len(client.requests)

    seen: list[Estimate] = []
    rerun = run_eval(live_options(cs, Factory(client), Confirm(), trials=3, on_estimate=seen.append))
    assert seen[0].cases_to_call == 0 and seen[0].cases_cached == 9
    assert len(client.requests) == calls  # every trial answered from its own cache entry
    assert rerun.trials is not None and rerun.trials.flaky_cases == [ids[0]]
    assert all(r.cached for r in [*rerun.cases, *rerun.trials.rows])


def test_trial_zero_keeps_the_single_run_cache_entry(tmp_path: Path) -> None:
    cs = logic_gold_set(tmp_path, 2)
    client = FakeLive()
    run_eval(live_options(cs, Factory(client), Confirm()))
    calls = len(client.requests)
    confirm = Confirm()
    run_eval(live_options(cs, Factory(client), confirm, trials=2))
    assert confirm.seen[0].cases_cached == 2 and confirm.seen[0].cases_to_call == 2
    assert len(client.requests) == 2 * calls


def test_the_estimate_multiplies_by_the_trials(tmp_path: Path) -> None:
    cs = logic_gold_set(tmp_path, 2)
    one, three = Confirm(answer=False), Confirm(answer=False)
    for confirm, trials in ((one, 1), (three, 3)):
        with pytest.raises(EvalAbort):  # declined: nothing is called
            run_eval(live_options(cs, Factory(FakeLive()), confirm, trials=trials))
    assert three.seen[0].upper_bound_usd == pytest.approx(3 * one.seen[0].upper_bound_usd)
    assert three.seen[0].estimated_tokens == 3 * one.seen[0].estimated_tokens


def test_batch_refuses_more_than_one_trial() -> None:
    with pytest.raises(EvalError, match=r"^--batch runs one trial of each case: drop --trials or --batch$"):
        RunSettings(CLI_NAMES, live=True, trials=2, batch=True)


def test_fake_trials_agree_and_report_no_flaky_case(tmp_path: Path) -> None:
    cs = logic_gold_set(tmp_path, 3)
    report = run_eval(run_options(cs, trials=3))
    assert report.trials is not None and report.trials.flaky_cases == []
    assert all(c.agreed and len(c.finals) == 3 for c in report.trials.cases)
    assert len(report.trials.rows) == 6 and len(report.cases) == 3
    single = run_eval(run_options(cs))
    assert single.trials is None and "trial" not in single.model_dump(by_alias=True)["cases"][0]
