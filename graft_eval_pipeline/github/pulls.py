"""Pull-request reads for the export (spec E10, E13): listing, PR, commits, files, linked issue.

Files come in two shapes: paths and counts only (stage 1, every candidate; patches are dropped
as each page is parsed) and with patches (stage 2, sampled PRs only, at most 30 pages of 100).

Every answer is checked against the fields read here before use: a body of another shape (an
error object with status 200, a list for an object, a field of the wrong type) is a
`GitHubError("unexpected")` naming the route and the field, never a TypeError or KeyError.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from graft_eval_pipeline.card import CardInputs, ChangedFile, IssueInfo, PullRequestInfo
from graft_eval_pipeline.github.client import GitHubClient
from graft_eval_pipeline.github.errors import GitHubError

PER_PAGE = 100
MAX_FILE_PAGES = 30
TOO_LARGE_LINES = 20_000
TOO_LARGE_FILES = 3000

# GitHub's closing keywords, same-repository form only ("Fixes #12", "closes: #12").
_CLOSING = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?[ \t]+#(\d+)\b", re.IGNORECASE)


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _repo_path(repo: str) -> str:
    return f"/repos/{repo}"


# --- the shapes read here: field -> accepted types, or a nested shape ---------------------------

_NONE = type(None)
_OPT_STR = (str, _NONE)
_TIME_FIELDS = frozenset({"updated_at", "merged_at"})
_PULL_SUMMARY: Mapping[str, Any] = {
    "number": (int,),
    "updated_at": (str,),
    "merged_at": _OPT_STR,
    "title": _OPT_STR,
    "body": _OPT_STR,
    "user": (Mapping, _NONE),
}
_PULL: Mapping[str, Any] = {
    **_PULL_SUMMARY,
    "additions": (int,),
    "deletions": (int,),
    "changed_files": (int,),
    "head": {"sha": (str,)},
    "base": {"sha": (str,), "repo": {"full_name": (str,)}},
}
_COMMIT: Mapping[str, Any] = {"commit": {"message": _OPT_STR}}
_FILE: Mapping[str, Any] = {
    "filename": (str,),
    "status": (str,),
    "additions": (int,),
    "deletions": (int,),
    "patch": _OPT_STR,
    "previous_filename": _OPT_STR,
}
_ISSUE: Mapping[str, Any] = {
    "number": (int,),
    "title": _OPT_STR,
    "body": _OPT_STR,
    "pull_request": (Mapping, _NONE),
}


def _unexpected(where: str, what: str, field: str | None = None) -> GitHubError:
    detail = f"; field {field!r} is missing or of the wrong type" if field else ""
    message = f"GitHub API answered {where} with an unexpected body (expected {what}{detail})"
    return GitHubError("unexpected", None, message)


def _field_ok(value: Any, types: tuple[type, ...], name: str) -> bool:
    if isinstance(value, bool) and bool not in types:
        return False  # a JSON true is not a count
    if not isinstance(value, types):
        return False
    if name in _TIME_FIELDS and isinstance(value, str):
        try:
            parse_time(value)
        except ValueError:
            return False
    return True


def _checked(
    value: Any, shape: Mapping[str, Any], where: str, what: str, prefix: str = ""
) -> Mapping[str, Any]:
    """`value` as an object with `shape`'s fields (optional ones may be absent), else GitHubError."""
    if not isinstance(value, Mapping):
        raise _unexpected(where, what, prefix.rstrip(".") or None)
    for name, spec in shape.items():
        field = value.get(name)
        if isinstance(spec, Mapping):
            _checked(field, spec, where, what, f"{prefix}{name}.")
        elif not _field_ok(field, spec, name):
            raise _unexpected(where, what, f"{prefix}{name}")
    return value


def list_merged_pulls(
    gh: GitHubClient, repo: str, merged_from: datetime, merged_to: datetime
) -> Iterator[Mapping[str, Any]]:
    """Closed PRs merged in [from, to], most recently updated first.

    Stops at the first PR updated before `from`: merged_at is never after updated_at, so no
    later page can hold a PR merged in range.
    """
    params: dict[str, str | int] = {
        "state": "closed",
        "sort": "updated",
        "direction": "desc",
        "per_page": PER_PAGE,
    }
    url = f"{_repo_path(repo)}/pulls"
    for page, _ in gh.pages(url, params):
        for item in page:
            pr = _checked(item, _PULL_SUMMARY, f"GET {url}", "a list of pull requests")
            if parse_time(pr["updated_at"]) < merged_from:
                return
            merged_at = pr.get("merged_at")
            if merged_at and merged_from <= parse_time(merged_at) <= merged_to:
                yield pr


def get_pull(gh: GitHubClient, repo: str, number: int) -> Mapping[str, Any]:
    url = f"{_repo_path(repo)}/pulls/{number}"
    return _checked(gh.get_json(url), _PULL, f"GET {url}", "a pull request")


def list_commits(gh: GitHubClient, repo: str, number: int) -> list[Mapping[str, Any]]:
    commits: list[Mapping[str, Any]] = []
    url = f"{_repo_path(repo)}/pulls/{number}/commits"
    for page, _ in gh.pages(url, {"per_page": PER_PAGE}):
        commits.extend(_checked(item, _COMMIT, f"GET {url}", "a list of commits") for item in page)
    return commits


@dataclass(frozen=True)
class FileListing:
    files: list[ChangedFile]
    truncated: bool


def _changed_file(item: Mapping[str, Any], with_patch: bool) -> ChangedFile:
    return ChangedFile(
        path=item["filename"],
        previous_path=item.get("previous_filename"),
        status=item["status"],
        additions=item.get("additions", 0),
        deletions=item.get("deletions", 0),
        patch=item.get("patch") if with_patch else None,
    )


def list_files(gh: GitHubClient, repo: str, number: int, *, with_patches: bool) -> FileListing:
    """At most 30 pages of 100; `truncated` when pages remain after the last one read."""
    files: list[ChangedFile] = []
    more = False
    url = f"{_repo_path(repo)}/pulls/{number}/files"
    for pages_read, (page, has_next) in enumerate(gh.pages(url, {"per_page": PER_PAGE}), start=1):
        files.extend(
            _changed_file(_checked(item, _FILE, f"GET {url}", "a list of files"), with_patches)
            for item in page
        )
        more = has_next
        if pages_read >= MAX_FILE_PAGES:
            break
    return FileListing(files=files, truncated=more)


def linked_issue_number(body: str, task_issue_number: int | None) -> int | None:
    """A closing keyword in the PR body wins; else the commits' `Graft-Task: #N`."""
    match = _CLOSING.search(body)
    return int(match.group(1)) if match else task_issue_number


def get_issue(gh: GitHubClient, repo: str, number: int) -> IssueInfo | None:
    """The linked issue, or None when it is gone or is a pull request."""
    url = f"{_repo_path(repo)}/issues/{number}"
    try:
        issue = _checked(gh.get_json(url), _ISSUE, f"GET {url}", "an issue")
    except GitHubError as err:
        if err.kind == "not_found":
            return None
        raise
    if issue.get("pull_request") is not None:
        return None
    return IssueInfo(number=issue["number"], title=issue.get("title") or "", body=issue.get("body") or "")


def build_card_inputs(
    repository_full_name: str, pr: Mapping[str, Any], listing: FileListing, issue: IssueInfo | None
) -> CardInputs:
    additions, deletions, changed = pr["additions"], pr["deletions"], pr["changed_files"]
    return CardInputs(
        repository_full_name=repository_full_name,
        pr=PullRequestInfo(
            number=pr["number"],
            title=pr.get("title") or "",
            body=pr.get("body") or "",
            additions=additions,
            deletions=deletions,
            changed_files=changed,
        ),
        issue=issue,
        files=listing.files,
        # GitHub lists at most 3,000 files: fewer files than the PR reports is a truncated view.
        listing_truncated=listing.truncated or len(listing.files) < changed,
        too_large=additions + deletions > TOO_LARGE_LINES or changed > TOO_LARGE_FILES,
    )


def fetch_intent_inputs(
    gh: GitHubClient, repo: str, pr: Mapping[str, Any], task_issue_number: int | None
) -> CardInputs:
    """Stage 2: the files with patches and the linked issue of one PR (the spec's fetchIntentInputs)."""
    listing = list_files(gh, repo, pr["number"], with_patches=True)
    issue_number = linked_issue_number(pr.get("body") or "", task_issue_number)
    issue = get_issue(gh, repo, issue_number) if issue_number is not None else None
    return build_card_inputs(pr["base"]["repo"]["full_name"], pr, listing, issue)
