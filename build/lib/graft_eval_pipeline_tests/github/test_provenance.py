"""Provenance classification (design section 4): trailer → coauthor → login → bot → human."""

from __future__ import annotations

from typing import Any

from graft_eval_pipeline.github.provenance import compute_provenance, task_issue_number


def pr(login: str = "alice", user_type: str = "User") -> dict[str, Any]:
    return {"number": 7, "user": {"login": login, "type": user_type}}


def commit(message: str) -> dict[str, Any]:
    return {"sha": "a" * 40, "commit": {"message": message}}


LOGINS = ("devin-ai-integration[bot]", "Agent-Bot")
EMAILS = ("agent@fictional.example",)


def test_trailer_wins_and_carries_the_model() -> None:
    commits = [
        commit("Start\n\nCo-authored-by: Agent <agent@fictional.example>"),
        commit("Finish\n\nGraft-Agent: fictional-agent\nGraft-Model: model-x-1\nGraft-Task: #12"),
    ]
    p = compute_provenance(pr("agent-bot", "Bot"), commits, LOGINS, EMAILS)
    assert (p.author_kind, p.reason, p.agent, p.model, p.task_issue_number) == (
        "agent",
        "trailer",
        "fictional-agent",
        "model-x-1",
        12,
    )


def test_coauthor_email_is_case_insensitive() -> None:
    commits = [commit("Fix\n\nCo-authored-by: Helper Agent <AGENT@fictional.example>")]
    p = compute_provenance(pr(), commits, LOGINS, EMAILS)
    assert (p.author_kind, p.reason, p.agent) == ("agent", "coauthor", "Helper Agent")


def test_login_in_the_agent_list() -> None:
    p = compute_provenance(pr("agent-bot"), [commit("x")], LOGINS, EMAILS)
    assert (p.reason, p.agent) == ("login", "agent-bot")


def test_bot_author_type() -> None:
    p = compute_provenance(pr("renovate[bot]", "Bot"), [], (), ())
    assert (p.author_kind, p.reason, p.agent) == ("agent", "bot", "renovate[bot]")


def test_human_otherwise_and_a_trailer_mentioned_mid_line_does_not_count() -> None:
    commits = [
        commit("Docs: explain the Graft-Agent: trailer\n\nCo-authored-by: Bob <bob@fictional.example>")
    ]
    p = compute_provenance(pr(), commits, LOGINS, EMAILS)
    assert (p.author_kind, p.reason, p.agent, p.model) == ("human", "none", None, None)


def test_task_issue_number_is_the_first_graft_task_trailer() -> None:
    assert task_issue_number([commit("a"), commit("b\n\ngraft-task: #41"), commit("Graft-Task: #42")]) == 41
    assert task_issue_number([commit("Graft-Task: 41")]) is None
