"""The GitHub client against real recorded GitHub answers (octokit/fixtures), next to the fake.

The fake GitHub is this project's model of the API; these tests replay what GitHub itself sent
(status, raw headers, body; `github/data/octokit-fixtures`, see `github/data/README.md`) and check that the
fake's redirect has the same shape as GitHub's recorded one.
"""

from __future__ import annotations

from typing import Any

import httpx

from graft_eval_pipeline.github.auth import TokenAuth
from graft_eval_pipeline.github.client import GitHubClient
from graft_eval_pipeline.github.rate_limit import RateLimiter, RateLimitOptions
from graft_eval_pipeline_tests.fake_github import T0, FakeClock, FakeGitHub
from graft_eval_pipeline_tests.replay_github import Exchange, Replay, load_scenario

API = "https://api.github.com"
ORG = "octokit-fixture-org"
RENAMED = f"/repos/{ORG}/tmp-scenario-rename-repository-20220719044033126-ukeod"
PAGINATED = f"/repos/{ORG}/tmp-scenario-paginate-issues-20220719043836917-izyoe/issues"


def replay_client(replay: Replay, clock: FakeClock, **limits: Any) -> GitHubClient:
    limiter = RateLimiter(RateLimitOptions(**limits), sleep=clock.sleep, now=clock.now, rand=lambda: 0.5)
    return GitHubClient(
        auth=TokenAuth("replay-token"), limiter=limiter, base_url=API, transport=replay.transport()
    )


def recorded(scenario: str, method: str, path: str) -> Exchange:
    return next(e for e in load_scenario(scenario) if (e.method, e.path) == (method, path))


def test_githubs_recorded_301_for_a_renamed_repository_is_followed_with_the_token() -> None:
    moved = recorded("rename-repository", "GET", RENAMED)
    assert moved.status == 301  # the scenario is what it claims to be
    replay = Replay.scenario("rename-repository")
    gh = replay_client(replay, FakeClock(T0.timestamp()))
    repository = gh.get_json(RENAMED)
    assert repository["full_name"] == f"{ORG}/tmp-scenario-rename-repository-20220719044033126-ukeod-newname"
    assert [(r.method, r.url.path) for r in replay.requests] == [
        ("GET", RENAMED),
        ("GET", httpx.URL(dict(moved.headers)["Location"]).path),
    ]
    assert [r.headers["authorization"] for r in replay.requests] == ["Bearer replay-token"] * 2
    assert gh.limiter.stats.requests == 2


def test_githubs_recorded_link_headers_page_through_every_issue_and_its_budget_is_honoured() -> None:
    gets = [e for e in load_scenario("paginate-issues") if e.method == "GET"]
    reset = float(dict(gets[0].headers)["X-RateLimit-Reset"])
    clock = FakeClock(reset - 100)
    replay = Replay.scenario("paginate-issues")
    # a budget floor above GitHub's recorded remaining: the next request waits for the reset
    gh = replay_client(replay, clock, min_remaining=5000)
    pages = list(gh.pages(PAGINATED, {"per_page": 3}))
    assert [[issue["number"] for issue in page] for page, _ in pages] == [
        [i["number"] for i in g.body] for g in gets
    ]
    assert [has_next for _, has_next in pages] == [True] * (len(gets) - 1) + [False]
    assert [r.url.path for r in replay.requests[1:]] == [
        g.path for g in gets[1:]
    ]  # /repositories/<id>/issues
    assert clock.sleeps == [101.0]  # reset + 1 s, once; the clock is past the reset afterwards


def test_the_fakes_redirect_for_a_renamed_repository_has_githubs_recorded_shape() -> None:
    moved = recorded("rename-repository", "GET", RENAMED)
    clock = FakeClock(T0.timestamp())
    fake = FakeGitHub("fictional-org/shop-demo", clock=clock.now)
    fake.renamed_from.add("fictional-org/shop-demo-old")
    with httpx.Client(transport=fake.transport(), base_url="https://api.github.com") as http:
        answer = http.get(
            "/repos/fictional-org/shop-demo-old", headers={"Authorization": "Bearer test-token"}
        )
    github_headers = {k.lower(): v for k, v in moved.headers}
    body = answer.json()
    assert answer.status_code == moved.status
    assert body.keys() == moved.body.keys() and body["message"] == moved.body["message"]
    assert body["documentation_url"] == moved.body["documentation_url"]
    assert answer.headers["location"] == body["url"] and github_headers["location"] == moved.body["url"]
    assert answer.headers["content-type"].startswith("application/json")
    rate_headers = {k for k in github_headers if k.startswith("x-ratelimit-")}
    assert rate_headers and rate_headers <= set(answer.headers.keys())
