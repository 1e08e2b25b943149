"""Run: the card engine over a case set, fake or live (options, case pool, live planning with
budget and cache), into per-case rows.

What other stages, `defs/` and `cli/` may use; everything else is internal to the stage.
"""

from typing import TYPE_CHECKING

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
from graft_eval_pipeline.evalset.run.results import drop_other_card_results, read_card_results
from graft_eval_pipeline.lazy import lazy_exports

if TYPE_CHECKING:
    from graft_eval_pipeline.evalset.run.live import anthropic_llm, require_live_env
    from graft_eval_pipeline.evalset.run.progress_bar import TerminalBar

# Live mode (the SDK, the batch ledger, the secret check) and the terminal bar (rich) load on
# first use (graft_eval_pipeline/lazy.py): a fake run that is not on a terminal needs neither.
__getattr__ = lazy_exports(
    __name__, {"anthropic_llm": "live", "require_live_env": "live", "TerminalBar": "progress_bar"}
)

__all__ = [
    "DEFAULT_CONCURRENCY_TEXT",
    "DEFAULT_MAX_COST_USD",
    "DEFAULT_MAX_TOKENS",
    "Estimate",
    "RunOptions",
    "RunSettings",
    "SettingNames",
    "TerminalBar",
    "anthropic_llm",
    "cached_result",
    "collector_policy",
    "drop_other_card_results",
    "fake_result",
    "generate_options",
    "read_card_results",
    "require_live_env",
    "run_harness",
]
