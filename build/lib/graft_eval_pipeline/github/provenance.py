"""Who wrote a PR: an agent or a human (design section 4, the spec's step-2 classifier).

First match wins: a `Graft-Agent:` commit trailer, a `Co-authored-by:` e-mail in the agent list,
the PR author's login in the agent list, an author of type Bot, else human. Inputs are the raw
GitHub JSON of the PR and its commits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

AuthorKind = Literal["agent", "human"]
AuthorKindReason = Literal["trailer", "coauthor", "login", "bot", "none"]

# Git trailers: "Key: value" on its own line; keys are case-insensitive.
_AGENT = re.compile(r"^graft-agent:[ \t]*(\S.*?)[ \t]*$", re.IGNORECASE | re.MULTILINE)
_MODEL = re.compile(r"^graft-model:[ \t]*(\S+)[ \t]*$", re.IGNORECASE | re.MULTILINE)
_TASK = re.compile(r"^graft-task:[ \t]*#(\d+)\b", re.IGNORECASE | re.MULTILINE)
_COAUTHOR = re.compile(r"^co-authored-by:[ \t]*(.*?)[ \t]*<([^<>\s]+)>", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Provenance:
    author_kind: AuthorKind
    reason: AuthorKindReason
    agent: str | None
    model: str | None
    task_issue_number: int | None


def _message(commit: Mapping[str, Any]) -> str:
    return str((commit.get("commit") or {}).get("message") or "")


def task_issue_number(commits: Sequence[Mapping[str, Any]]) -> int | None:
    """The first `Graft-Task: #N` over the commits (oldest first, as GitHub lists them)."""
    for commit in commits:
        match = _TASK.search(_message(commit))
        if match:
            return int(match.group(1))
    return None


def _lowered(values: Iterable[str]) -> frozenset[str]:
    return frozenset(v.strip().lower() for v in values if v.strip())


def compute_provenance(
    pr: Mapping[str, Any],
    commits: Sequence[Mapping[str, Any]],
    agent_logins: Iterable[str],
    agent_coauthor_emails: Iterable[str],
) -> Provenance:
    messages = [_message(c) for c in commits]
    task = task_issue_number(commits)
    for message in messages:
        agent = _AGENT.search(message)
        if agent:
            model = _MODEL.search(message)
            return Provenance("agent", "trailer", agent.group(1), model.group(1) if model else None, task)
    emails = _lowered(agent_coauthor_emails)
    for message in messages:
        for name, email in _COAUTHOR.findall(message):
            if email.lower() in emails:
                return Provenance("agent", "coauthor", name or email, None, task)
    user = pr.get("user") or {}
    login = str(user.get("login") or "")
    if login and login.lower() in _lowered(agent_logins):
        return Provenance("agent", "login", login, None, task)
    if user.get("type") == "Bot":
        return Provenance("agent", "bot", login or None, None, task)
    return Provenance("human", "none", None, None, task)
