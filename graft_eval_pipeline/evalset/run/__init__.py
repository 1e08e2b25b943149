"""Run: the card engine over a case set, fake or live, into per-case rows.

Options, the case pool, and live planning with budget and cache.

What other stages, `defs/` and `cli/` may use; everything else is internal to the stage. Live
mode (live.py: the SDK, the batch ledger, the secret check) and the terminal bar
(progress_bar.py: rich) are not here: `run --live`, a terminal and the Dagster harness asset
import them by their module path (graft_eval_pipeline/heavy.py).
"""

from graft_eval_pipeline.evalset.run.budget import DEFAULT_MAX_COST_USD, DEFAULT_MAX_TOKENS, Estimate
from graft_eval_pipeline.evalset.run.cache import cached_result
from graft_eval_pipeline.evalset.run.harness import collector_policy, fake_result, run_harness
from graft_eval_pipeline.evalset.run.options import (
    DEFAULT_CONCURRENCY_TEXT,
    RunOptions,
    RunSettings,
    SettingNames,
    generate_options,
)
from graft_eval_pipeline.evalset.run.pool import collector_paused
from graft_eval_pipeline.evalset.run.results import drop_other_card_results, read_card_results

__all__ = [
    "DEFAULT_CONCURRENCY_TEXT",
    "DEFAULT_MAX_COST_USD",
    "DEFAULT_MAX_TOKENS",
    "Estimate",
    "RunOptions",
    "RunSettings",
    "SettingNames",
    "cached_result",
    "collector_paused",
    "collector_policy",
    "drop_other_card_results",
    "fake_result",
    "generate_options",
    "read_card_results",
    "run_harness",
]
