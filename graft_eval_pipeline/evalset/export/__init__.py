"""Export: merged agent PRs from GitHub to sealed cases, in three steps, with redaction and rescan.

The steps are candidates.py, sample.py and cases.py, chained by run.py for the CLI; redaction is
redact.py and rescan rescan.py.

What other stages, `defs/` and `cli/` may use without importing the GitHub client or the secret
rules: the defaults. Every step calls GitHub or the secret rules, so `graft-eval export`, `rescan`
and the Dagster export assets import them by their module path (graft_eval_pipeline/heavy.py).
"""

from graft_eval_pipeline.evalset.export.defaults import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MIN_PER_STRATUM,
    DEFAULT_SAMPLE,
    DEFAULT_SAMPLE_SEED,
)

__all__ = [
    "DEFAULT_MAX_CANDIDATES",
    "DEFAULT_MIN_PER_STRATUM",
    "DEFAULT_SAMPLE",
    "DEFAULT_SAMPLE_SEED",
]
