"""The modules that start-up must not load, each with the only modules that may import it.

Why: a fake `graft-eval run` must start in well under half a second (bench/bench_harness.py
measures it), and imports are most of that. So there is one rule instead of lazy attributes:
the packages' `__init__` facades, `cli/` and `evalset/evaluate.py` import plainly and never
reach, through their module-level imports, a library of `HEAVY_LIBRARIES` or a module of
`HEAVY_MODULES`. A heavy module is imported by its own path, only where it is needed: a
function-local import in the one command that needs it, or at the top of a module that only
that command (or Dagster asset) imports. A module that imports one at its top is heavy too, so
it is not in a facade either and is imported the same way.

graft_eval_pipeline_tests/test_boundaries.py reads this table: no facade, `cli/` module or
evaluate.py reaches a heavy module at import; a module of `HEAVY_MODULES` is imported only by
the modules (or packages) named beside it; a deep import into a stage or `card/` is allowed only
for a heavy module; a function-local import in `cli/` loads a heavy module (else it belongs at
the top). run/test_streaming.py checks that a fake run loads none of them.
"""

from __future__ import annotations

# Third-party libraries that cost tens to hundreds of milliseconds to import.
HEAVY_LIBRARIES: tuple[str, ...] = (
    "anthropic",  # the Anthropic SDK (live runs)
    "httpx",  # the GitHub client's HTTP stack (export)
    "httpx2",  # the SDK's HTTP stack
    "rich",  # the progress bar on a terminal
    "re2",  # the secret rules' and --redact-pattern's linear-time regexes
    "numpy",  # the paired bootstrap of a comparison
    "pandas",  # never used by the package (tests only)
    "scipy",  # never used by the package (tests only)
    "dagster",  # the Dagster shell (defs/), `sets sync` and a Dagster run's hold
)

# Ours: module -> the modules or packages that may import it (a package covers its modules).
HEAVY_MODULES: dict[str, tuple[str, ...]] = {
    # The GitHub REST client (httpx): the export steps and the Dagster GitHub resource.
    "graft_eval_pipeline.github.client": (
        "graft_eval_pipeline.github",
        "graft_eval_pipeline.evalset.export",
        "graft_eval_pipeline.defs.resources",
    ),
    # The live Anthropic client (the SDK and httpx2): built only where live mode needs a client.
    "graft_eval_pipeline.card.anthropic_llm": ("graft_eval_pipeline.evalset.run.live",),
    # Live mode (planning, caps, the limiter, the batch phases): a live run, and `run --live`.
    "graft_eval_pipeline.evalset.run.live": (
        "graft_eval_pipeline.evalset.run.harness",
        "graft_eval_pipeline.cli.run",
        "graft_eval_pipeline.defs.assets.evaluation",
    ),
    # The batch ledger (--batch): live mode only.
    "graft_eval_pipeline.evalset.run.batch": ("graft_eval_pipeline.evalset.run.live",),
    # rich's progress bar: `graft-eval run` on a terminal.
    "graft_eval_pipeline.evalset.run.progress_bar": ("graft_eval_pipeline.cli.run",),
    # The secret rules (an RE2 scan over a compiled catalogue): export's redaction (and with it
    # rescan) and live mode's check of each prompt.
    "graft_eval_pipeline.secrets": (
        "graft_eval_pipeline.evalset.export.redact",
        "graft_eval_pipeline.evalset.run.secret_check",
    ),
}
