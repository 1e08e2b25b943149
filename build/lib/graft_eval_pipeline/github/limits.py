"""The defaults of the rate-limit flags (`graft-eval export`, the GitHub resource): their one home.

Kept apart from rate_limit.py, which imports httpx, so the CLI can show them without loading the
HTTP stack for commands that never reach GitHub.
"""

DEFAULT_MIN_REMAINING = 50  # pause before the hourly budget drops below this
DEFAULT_MAX_WAIT_S = 15 * 60  # the longest single wait before the export stops (resumable)
DEFAULT_MAX_REQUESTS = 5000  # requests one export may send
