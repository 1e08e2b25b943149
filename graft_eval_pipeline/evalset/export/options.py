"""What one export is asked to do: the options of `graft-eval export` and their checks.

`ExportOptions` is what `run_export` takes; `merge_bound` and `check_repository` read the export
window and the repository the same way for the CLI and the Dagster assets. `Progress` is the
callback each step reports to (the CLI draws a bar from it on a terminal).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Literal

from graft_eval_pipeline.evalset.export.defaults import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MIN_PER_STRATUM,
    DEFAULT_SAMPLE,
    DEFAULT_SAMPLE_SEED,
)
from graft_eval_pipeline.evalset.export.redact import RedactOptions
from graft_eval_pipeline.evalset.sets import EvalError

AuthorFilter = Literal["agent", "bot", "any"]
# (stage name, done, total): the CLI draws a progress bar from it on a TTY.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class ExportOptions:
    repo: str
    merged_from: datetime
    merged_to: datetime
    author: AuthorFilter = "agent"
    agent_logins: tuple[str, ...] = ()
    agent_coauthor_emails: tuple[str, ...] = ()
    sample: int = DEFAULT_SAMPLE
    min_per_stratum: int = DEFAULT_MIN_PER_STRATUM
    max_candidates: int = DEFAULT_MAX_CANDIDATES
    seed: int = DEFAULT_SAMPLE_SEED
    redact: RedactOptions = field(default_factory=RedactOptions)
    dry_run: bool = False


def merge_bound(text: str, option: str, *, end_of_day: bool) -> datetime:
    """--from/--to: a date (whole UTC days, --to inclusive) or an ISO time (UTC when no offset)."""
    try:
        if len(text) == 10:
            day = datetime.combine(date.fromisoformat(text), datetime.min.time(), UTC)
            return day + timedelta(days=1, microseconds=-1) if end_of_day else day
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise EvalError(f"{option} {text!r} is not a date (YYYY-MM-DD) or an ISO time") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def check_repository(repo: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo):
        raise EvalError(f"repository {repo!r} is not owner/name")
    return repo
