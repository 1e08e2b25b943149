"""RunSettings: the one home of the rules between run settings, and the RunOptions it builds.

RunSettings: the one home of the rules between run settings, in the words of each shell, and the
RunOptions both shells hand to the harness.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from graft_eval_pipeline.card.llm import LlmClient
from graft_eval_pipeline.cli.run import CLI_NAMES
from graft_eval_pipeline.defs.assets.evaluation import CONFIG_NAMES, LIVE_NEEDS_CONFIRMATION
from graft_eval_pipeline.evalset.run.budget import DEFAULT_MAX_COST_USD
from graft_eval_pipeline.evalset.run.options import RunSettings, SettingNames
from graft_eval_pipeline.evalset.sets import EvalEnv, EvalError, open_set
from graft_eval_pipeline_tests.builders import copy_synthetic
from graft_eval_pipeline_tests.live_fakes import Confirm


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (CLI_NAMES, "--batch sends live calls through the Message Batches API: add --live"),
        (CONFIG_NAMES, "`batch: true` sends live calls through the Message Batches API: set `mode: live`"),
    ],
)
def test_batch_needs_live(names: SettingNames, message: str) -> None:
    with pytest.raises(EvalError) as err:
        RunSettings(names, batch=True)
    assert str(err.value) == message
    assert RunSettings(names, live=True, batch=True).batch


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (CLI_NAMES, "--batch runs one trial of each case: drop --trials or --batch"),
        (CONFIG_NAMES, "`batch: true` runs one trial of each case: drop `trials` or `batch: true`"),
    ],
)
def test_batch_runs_one_trial(names: SettingNames, message: str) -> None:
    with pytest.raises(EvalError) as err:
        RunSettings(names, live=True, batch=True, trials=2)
    assert str(err.value) == message
    assert RunSettings(names, live=True, trials=2).trials == 2


def test_live_needs_a_cost_cap_and_fake_does_not() -> None:
    with pytest.raises(EvalError) as err:
        RunSettings(CONFIG_NAMES, live=True, max_cost_usd=None)
    assert str(err.value) == LIVE_NEEDS_CONFIRMATION
    assert RunSettings(CONFIG_NAMES, max_cost_usd=None).mode == "fake"


def test_run_options_carry_the_settings_and_the_live_client_only_when_live(tmp_path: Path) -> None:
    cs = open_set(copy_synthetic(tmp_path), None)
    env = EvalEnv(eval_dir=tmp_path)
    built: list[EvalEnv] = []

    def llm(e: EvalEnv) -> LlmClient:
        built.append(e)
        return cast(LlmClient, object())

    fake = RunSettings(CLI_NAMES, max_cost_usd=None, concurrency=3).run_options(
        cs, env, llm=llm, confirm=Confirm()
    )
    assert fake.mode == "fake" and fake.llm_factory is None and fake.confirm is None
    assert fake.max_cost_usd == DEFAULT_MAX_COST_USD and fake.effective_concurrency == 3
    live = RunSettings(CLI_NAMES, live=True, max_cost_usd=2.5, trials=2, use_cache=False).run_options(
        cs, env, llm=llm, confirm=Confirm()
    )
    assert live.mode == "live" and live.max_cost_usd == 2.5 and live.trials == 2 and not live.use_cache
    assert live.llm_factory is not None and live.confirm is not None and built == []
    live.llm_factory()
    assert built == [env]
