"""What one export is asked to do.

`ExportSettings`, built by `graft-eval export` and by the Dagster export assets, and the rules
between its settings.

An export has three steps, so its settings have three parts, one per step: `CandidateSettings`
(which merged PRs are candidates: step 1), `SampleSettings` (the stratified sample) and
`RedactOptions` (what is redacted besides secrets: step 2). The CLI builds all three into one
`ExportSettings` and `run_export` chains the steps; each Dagster export asset builds its own part
from its config and hands it to the same step function. Each rule (the repository's shape, a
window that does not end before it starts, the sample's bounds, a user pattern RE2 can run) is
checked once, where its part is built. `Progress` is the callback each step reports to (the CLI
draws a bar from it on a terminal).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
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
from graft_eval_pipeline.evalset.sets import EvalEnv, EvalError

AuthorFilter = Literal["agent", "bot", "any"]
# (stage name, done, total): the CLI draws a progress bar from it on a TTY.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class WindowNames:
    """How a shell names the export window in its messages: the CLI's flags or the config's keys."""

    merged_from: str
    merged_to: str


@dataclass(frozen=True)
class CandidateSettings:
    """Step 1: the repository, the merge window, who counts as the author, and the most PRs to take.

    The merge window is in UTC, both ends included. The author: `agent` (provenance says an agent
    wrote it), `bot` (a bot account or one of `agent_logins` opened it) or `any`. At most
    `max_candidates` PRs.
    """

    repo: str
    merged_from: datetime
    merged_to: datetime
    author: AuthorFilter = "agent"
    agent_logins: tuple[str, ...] = ()
    agent_coauthor_emails: tuple[str, ...] = ()
    max_candidates: int = DEFAULT_MAX_CANDIDATES

    def __post_init__(self) -> None:
        check_repository(self.repo)
        if self.merged_from > self.merged_to:
            raise EvalError(
                f"the export window ends before it starts ({self.merged_from.isoformat()} to "
                f"{self.merged_to.isoformat()}): swap the two ends"
            )
        if self.max_candidates < 1:
            raise EvalError(f"max candidates is {self.max_candidates}: it must be 1 or more")

    @classmethod
    def from_text(
        cls,
        names: WindowNames,
        env: EvalEnv,
        *,
        repo: str,
        merged_from: str,
        merged_to: str,
        author: AuthorFilter = "agent",
        agent_logins: Sequence[str] | None = None,
        agent_coauthor_emails: Sequence[str] | None = None,
        max_candidates: int = DEFAULT_MAX_CANDIDATES,
    ) -> CandidateSettings:
        """What the shells hand over.

        The window as the user wrote it (a date is the whole UTC day); agent logins and co-author
        e-mails from GRAFT_AGENT_LOGINS and GRAFT_AGENT_COAUTHOR_EMAILS when not given (None).
        """
        return cls(
            repo=check_repository(repo),
            merged_from=merge_bound(merged_from, names.merged_from, end_of_day=False),
            merged_to=merge_bound(merged_to, names.merged_to, end_of_day=True),
            author=author,
            agent_logins=tuple(agent_logins) if agent_logins is not None else env.agent_logins,
            agent_coauthor_emails=(
                tuple(agent_coauthor_emails)
                if agent_coauthor_emails is not None
                else env.agent_coauthor_emails
            ),
            max_candidates=max_candidates,
        )


@dataclass(frozen=True)
class SampleSettings:
    """The stratified sample.

    `size` PRs, at least `min_per_stratum` from each stratum that has them, drawn with `seed` (the
    same seed and candidates give the same sample).
    """

    size: int = DEFAULT_SAMPLE
    min_per_stratum: int = DEFAULT_MIN_PER_STRATUM
    seed: int = DEFAULT_SAMPLE_SEED

    def __post_init__(self) -> None:
        if self.size < 1:
            raise EvalError(f"sample size is {self.size}: it must be 1 or more")
        if self.min_per_stratum < 0:
            raise EvalError(f"min per stratum is {self.min_per_stratum}: it must be 0 or more")


@dataclass(frozen=True)
class ExportSettings:
    """A whole `graft-eval export`.

    The three steps' settings, and `dry_run` (step 1 and the sample only: nothing is written).
    """

    candidates: CandidateSettings
    sample: SampleSettings = field(default_factory=SampleSettings)
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
