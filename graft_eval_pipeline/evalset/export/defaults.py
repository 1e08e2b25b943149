"""The defaults of `graft-eval export` and of the Dagster export assets' config: their one home.

Kept apart from the steps, which load the GitHub client and the secret rules, so the CLI can
show them without paying for either in commands that never export.
"""

DEFAULT_SAMPLE = 40  # cases per export
DEFAULT_MIN_PER_STRATUM = 2  # every non-empty stratum gets at least this many (population allowing)
DEFAULT_MAX_CANDIDATES = 400  # PRs merged in the window that stage 1 looks at
DEFAULT_SAMPLE_SEED = 1  # seeds the stratified sample (and its frame), so an export can be drawn again
