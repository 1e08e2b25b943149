"""Export step 1: the merged PRs of the window, each classified by author and placed in a stratum.

`collect_candidates` lists closed PRs merged in the window, then reads each candidate's PR,
commits and file paths and counts (patches dropped as each page is parsed). A `Candidate` holds
ids, counts, strata and provenance, never PR text, so the list can be stored and shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from graft_eval_pipeline.card import CamelModel
from graft_eval_pipeline.evalset.export.client import github_errors
from graft_eval_pipeline.evalset.export.options import AuthorFilter, CandidateSettings, Progress
from graft_eval_pipeline.evalset.sets import PathStratum, SizeStratum, path_stratum, size_stratum, stratum_key
from graft_eval_pipeline.github.client import GitHubClient
from graft_eval_pipeline.github.errors import GitHubError
from graft_eval_pipeline.github.provenance import AuthorKind, AuthorKindReason, compute_provenance
from graft_eval_pipeline.github.pulls import get_pull, list_commits, list_files, list_merged_pulls, parse_time


class Candidate(CamelModel):
    """One merged PR after stage 1: ids, counts, strata and provenance; never a title or a path."""

    repository: str
    pr_number: int
    updated_at: datetime
    merged_at: datetime
    additions: int
    deletions: int
    changed_files: int
    size_stratum: SizeStratum
    path_stratum: PathStratum
    author_kind: AuthorKind
    author_kind_reason: AuthorKindReason
    agent: str | None
    model: str | None
    task_issue_number: int | None

    @property
    def stratum(self) -> str:
        return stratum_key(self.size_stratum, self.path_stratum)


class CandidateList(CamelModel):
    """Stage-1 result: candidates (most recently updated first, as listed) and what was left out."""

    repository: str
    listed: int
    candidates: list[Candidate]
    dropped_by_author: int
    missing: list[int]
    requests: int


def _login_is_bot(pr: Mapping[str, Any], agent_logins: frozenset[str]) -> bool:
    user = pr.get("user") or {}
    return user.get("type") == "Bot" or str(user.get("login") or "").lower() in agent_logins


def collect_candidates(
    gh: GitHubClient,
    settings: CandidateSettings,
    *,
    extra_sensitive_globs: tuple[str, ...] = (),
    progress: Progress | None = None,
) -> CandidateList:
    """List, filter by merge date (and bot author), cap, then stage 1 for each candidate."""
    repo, author, agent_logins = settings.repo, settings.author, settings.agent_logins
    start_requests = gh.limiter.stats.requests
    logins = frozenset(login.lower() for login in agent_logins)
    listed: list[Mapping[str, Any]] = []
    merged_in_range = 0
    with github_errors():
        for pr in list_merged_pulls(gh, repo, settings.merged_from, settings.merged_to):
            merged_in_range += 1
            if author == "bot" and not _login_is_bot(pr, logins):
                continue
            listed.append(pr)
            if len(listed) >= settings.max_candidates:
                break
        candidates: list[Candidate] = []
        missing: list[int] = []
        dropped = merged_in_range - len(listed) if author == "bot" else 0
        for done, summary in enumerate(listed, start=1):
            candidate = _stage_one(
                gh,
                repo,
                summary["number"],
                author,
                agent_logins,
                settings.agent_coauthor_emails,
                extra_sensitive_globs,
            )
            if candidate is None:
                missing.append(summary["number"])
            elif author == "agent" and candidate.author_kind != "agent":
                dropped += 1
            else:
                candidates.append(candidate)
            if progress:
                progress("stage 1", done, len(listed))
    return CandidateList(
        repository=repo,
        listed=merged_in_range,
        candidates=candidates,
        dropped_by_author=dropped,
        missing=missing,
        requests=gh.limiter.stats.requests - start_requests,
    )


def _stage_one(
    gh: GitHubClient,
    repo: str,
    number: int,
    author: AuthorFilter,
    agent_logins: tuple[str, ...],
    agent_coauthor_emails: tuple[str, ...],
    extra_sensitive_globs: tuple[str, ...],
) -> Candidate | None:
    """PR, commits (not for --author bot) and paths of one PR; None when it is gone (404/410)."""
    try:
        pr = get_pull(gh, repo, number)
        commits = [] if author == "bot" else list_commits(gh, repo, number)
        listing = list_files(gh, repo, number, with_patches=False)
    except GitHubError as err:
        if err.kind == "not_found":
            return None
        raise
    provenance = compute_provenance(pr, commits, agent_logins, agent_coauthor_emails)
    return Candidate(
        repository=repo,
        pr_number=number,
        updated_at=parse_time(pr["updated_at"]),
        merged_at=parse_time(pr["merged_at"]),
        additions=pr["additions"],
        deletions=pr["deletions"],
        changed_files=pr["changed_files"],
        size_stratum=size_stratum(pr["additions"], pr["deletions"]),
        path_stratum=path_stratum(listing.files, extra_sensitive_globs),
        author_kind=provenance.author_kind,
        author_kind_reason=provenance.reason,
        agent=provenance.agent,
        model=provenance.model,
        task_issue_number=provenance.task_issue_number,
    )
