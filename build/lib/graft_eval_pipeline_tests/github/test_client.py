"""GitHub client, auth and PR reads against the in-process fake API (no network)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from graft_eval_pipeline.github.auth import AppAuth, TokenAuth
from graft_eval_pipeline.github.client import GitHubClient
from graft_eval_pipeline.github.errors import GitHubError
from graft_eval_pipeline.github.pulls import (
    build_card_inputs,
    fetch_intent_inputs,
    get_issue,
    get_pull,
    linked_issue_number,
    list_commits,
    list_files,
    list_merged_pulls,
)
from graft_eval_pipeline.github.rate_limit import RateLimiter, RateLimitOptions
from graft_eval_pipeline_tests.fake_github import T0, FakeClock, FakeFile, FakeGitHub, FakeIssue, FakePull

REPO = "fictional-org/shop-demo"


def client(fake: FakeGitHub, clock: FakeClock, auth: TokenAuth | AppAuth | None = None) -> GitHubClient:
    limiter = RateLimiter(RateLimitOptions(), sleep=clock.sleep, now=clock.now)
    return GitHubClient(
        auth=auth or TokenAuth("test-token"),
        limiter=limiter,
        base_url="https://github.fake",
        transport=fake.transport(),
    )


def setup() -> tuple[FakeGitHub, FakeClock]:
    clock = FakeClock(T0.timestamp())
    return FakeGitHub(REPO, clock=clock.now), clock


def test_token_auth_is_sent_and_a_wrong_token_fails_with_auth() -> None:
    fake, clock = setup()
    fake.add_pull(FakePull(1))
    assert get_pull(client(fake, clock), REPO, 1)["number"] == 1
    with pytest.raises(GitHubError) as err:
        get_pull(client(fake, clock, TokenAuth("wrong")), REPO, 1)
    assert err.value.kind == "auth" and err.value.status == 401


def test_app_auth_signs_a_jwt_exchanges_it_and_refreshes_the_token_before_expiry() -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    clock = FakeClock(T0.timestamp())
    fake = FakeGitHub(REPO, clock=clock.now, token=None, app_id="4242", app_public_key=key.public_key())
    fake.add_pull(FakePull(1))
    gh = client(fake, clock, AppAuth("4242", key, 77, clock.now))
    get_pull(gh, REPO, 1)
    get_pull(gh, REPO, 1)
    assert fake.paths(r"/app/installations/77/access_tokens") == ["/app/installations/77/access_tokens"]
    clock.t += 3600 - 200  # within the refresh margin of the one-hour token
    get_pull(gh, REPO, 1)
    assert len(fake.installation_tokens) == 2


def test_app_auth_with_the_wrong_key_is_refused() -> None:
    key, other = (rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(2))
    clock = FakeClock(T0.timestamp())
    fake = FakeGitHub(REPO, clock=clock.now, token=None, app_id="4242", app_public_key=key.public_key())
    with pytest.raises(GitHubError) as err:
        get_pull(client(fake, clock, AppAuth("4242", other, 77, clock.now)), REPO, 1)
    assert err.value.kind == "auth"


def test_pages_follow_link_next_and_404_is_not_found() -> None:
    fake, clock = setup()
    for n in range(1, 8):
        fake.add_pull(FakePull(n, updated_at=T0 + timedelta(hours=n)))
    gh = client(fake, clock)
    pages = list(gh.pages(f"/repos/{REPO}/pulls", {"state": "closed", "per_page": 3}))
    assert [len(p) for p, _ in pages] == [3, 3, 1]
    assert [has_next for _, has_next in pages] == [True, True, False]
    assert [pr["number"] for p, _ in pages for pr in p] == [7, 6, 5, 4, 3, 2, 1]
    with pytest.raises(GitHubError) as err:
        get_pull(gh, REPO, 99)
    assert err.value.kind == "not_found"


def test_file_listing_reads_30_pages_of_the_3000_file_cap_and_the_inputs_say_truncated() -> None:
    fake, clock = setup()
    fake.add_pull(FakePull(1, files=[FakeFile(f"src/f{i}.py") for i in range(3050)]))
    gh = client(fake, clock)
    listing = list_files(gh, REPO, 1, with_patches=False)
    assert len(listing.files) == 3000
    assert all(f.patch is None for f in listing.files)
    assert len(fake.paths(r".*/files")) == 30
    inputs = build_card_inputs(REPO, get_pull(gh, REPO, 1), listing, None)
    assert inputs.listing_truncated and inputs.too_large


def test_stage_two_inputs_keep_patches_and_mark_a_capped_listing() -> None:
    fake, clock = setup()
    pull = fake.add_pull(FakePull(1, body="Fixes #5", files=[FakeFile("a.py")], changed_files=3001))
    fake.add_issue(FakeIssue(5, title="Issue five"))
    gh = client(fake, clock)
    inputs = fetch_intent_inputs(gh, REPO, get_pull(gh, REPO, 1), task_issue_number=None)
    assert inputs.files[0].patch == pull.files[0].patch
    assert inputs.issue is not None and inputs.issue.number == 5
    assert inputs.listing_truncated and inputs.too_large


def test_linked_issue_prefers_a_closing_keyword_then_the_task_trailer() -> None:
    assert linked_issue_number("This resolves #12 and more", 40) == 12
    assert linked_issue_number("Closes: #3", None) == 3
    assert linked_issue_number("See #12 (related)", 40) == 40
    assert linked_issue_number("Fixes other-org/repo#12", None) is None


def test_too_large_thresholds() -> None:
    from graft_eval_pipeline.github.pulls import FileListing

    pr = {
        "number": 1,
        "title": "t",
        "body": None,
        "additions": 10_000,
        "deletions": 10_000,
        "changed_files": 0,
    }
    assert not build_card_inputs(REPO, pr, FileListing([], False), None).too_large
    pr["deletions"] = 10_001
    assert build_card_inputs(REPO, pr, FileListing([], False), None).too_large


# --- redirects (issue 10, item 4) ------------------------------------------------------------------

OLD = "fictional-org/shop-demo-old"


def test_a_renamed_repository_is_followed_for_the_listing_the_pull_and_its_files() -> None:
    fake, clock = setup()
    fake.renamed_from.add(OLD)
    for n in (1, 2):
        fake.add_pull(FakePull(n, updated_at=T0 + timedelta(hours=n), merged_at=T0 + timedelta(hours=n)))
    gh = client(fake, clock)
    listed = list(list_merged_pulls(gh, OLD, T0, T0 + timedelta(days=1)))
    assert [pr["number"] for pr in listed] == [2, 1]
    assert get_pull(gh, OLD, 2)["base"]["repo"]["full_name"] == REPO
    assert [f.path for f in list_files(gh, OLD, 2, with_patches=False).files] == ["src/app.py"]
    assert fake.paths(r"/repos/fictional-org/shop-demo-old/.*") == [
        f"/repos/{OLD}/pulls",
        f"/repos/{OLD}/pulls/2",
        f"/repos/{OLD}/pulls/2/files",
    ]
    assert fake.paths(r"/repositories/\d+/.*") == [
        f"/repositories/{fake.repo_id}/pulls",
        f"/repositories/{fake.repo_id}/pulls/2",
        f"/repositories/{fake.repo_id}/pulls/2/files",
    ]
    assert set(fake.authorization_log) == {"Bearer test-token"}  # kept on the same-host hop
    assert gh.limiter.stats.requests == len(fake.log) == 6  # each hop is a request


def test_a_transferred_issue_is_followed_to_its_new_repository() -> None:
    fake, clock = setup()
    fake.transfer_issue(5, FakeIssue(9, title="Moved issue", body="Now elsewhere"), to_repo_id=700002)
    issue = get_issue(client(fake, clock), REPO, 5)
    assert issue is not None and (issue.number, issue.title, issue.body) == (
        9,
        "Moved issue",
        "Now elsewhere",
    )
    assert fake.paths() == [f"/repos/{REPO}/issues/5", "/repositories/700002/issues/9"]


def recording(
    handler: Callable[[httpx.Request], httpx.Response],
) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    return httpx.MockTransport(record), seen


def mock_client(transport: httpx.BaseTransport, clock: FakeClock | None = None) -> GitHubClient:
    clock = clock or FakeClock(T0.timestamp())
    limiter = RateLimiter(RateLimitOptions(), sleep=clock.sleep, now=clock.now, rand=lambda: 0.5)
    return GitHubClient(
        auth=TokenAuth("test-token"), limiter=limiter, base_url="https://api.github.fake", transport=transport
    )


def test_a_redirect_to_another_host_drops_the_authorization_header() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.github.fake":
            return httpx.Response(301, headers={"Location": "https://elsewhere.fake/repositories/7/issues/3"})
        return httpx.Response(200, json={"number": 3, "title": "t", "body": None})

    transport, seen = recording(handler)
    issue = get_issue(mock_client(transport), REPO, 3)
    assert issue is not None and issue.number == 3
    assert [r.url.host for r in seen] == ["api.github.fake", "elsewhere.fake"]
    assert seen[0].headers["authorization"] == "Bearer test-token"
    assert "authorization" not in seen[1].headers


def test_redirects_are_capped_at_five_hops() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(301, headers={"Location": f"{request.url.path}/x"})

    transport, seen = recording(handler)
    with pytest.raises(GitHubError) as err:
        get_pull(mock_client(transport), REPO, 1)
    assert err.value.kind == "unexpected" and "more than 5 times" in str(err.value)
    assert len(seen) == 6


def test_a_redirect_without_location_is_an_error_not_data() -> None:
    transport, _ = recording(lambda request: httpx.Response(301, json={"message": "Moved Permanently"}))
    with pytest.raises(GitHubError) as err:
        get_issue(mock_client(transport), REPO, 5)
    assert err.value.kind == "unexpected" and err.value.status == 301


def test_a_next_page_on_another_host_is_refused_and_gets_no_token() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        link = '<https://elsewhere.fake/repos/o/r/pulls/1/commits?page=2>; rel="next"'
        return httpx.Response(200, json=[{"commit": {"message": "m"}}], headers={"Link": link})

    transport, seen = recording(handler)
    with pytest.raises(GitHubError) as err:
        list_commits(mock_client(transport), REPO, 1)
    assert err.value.kind == "unexpected" and "another host" in str(err.value)
    assert [r.url.host for r in seen] == ["api.github.fake"]


# --- answers of another shape (issue 10, item 4) ------------------------------------------------

MOVED = {
    "message": "Moved Permanently",
    "url": "https://api.github.fake/repositories/7",
    "documentation_url": "d",
}
PULL = FakePull(1).detail(REPO)
Read = Callable[[GitHubClient], Any]


def _listing(gh: GitHubClient) -> Any:
    return list(list_merged_pulls(gh, REPO, T0, T0))


def _pull(gh: GitHubClient) -> Any:
    return get_pull(gh, REPO, 1)


def _issue(gh: GitHubClient) -> Any:
    return get_issue(gh, REPO, 5)


def _commits(gh: GitHubClient) -> Any:
    return list_commits(gh, REPO, 1)


def _files(gh: GitHubClient) -> Any:
    return list_files(gh, REPO, 1, with_patches=True)


SHAPES: list[tuple[str, Read, Any, str]] = [
    ("listing is an object", _listing, MOVED, "no list of items"),
    ("listing of strings", _listing, ["x"], "a list of pull requests"),
    ("pull without times", _pull, {"number": 1}, "field 'updated_at'"),
    ("pull with a text count", _pull, {**PULL, "additions": "12"}, "field 'additions'"),
    ("pull with a bad time", _pull, {**PULL, "merged_at": "soon"}, "field 'merged_at'"),
    ("pull without base repo", _pull, {**PULL, "base": {"sha": "a"}}, "field 'base.repo'"),
    ("issue is a redirect body", _issue, MOVED, "field 'number'"),
    ("issue is a list", _issue, [MOVED], "expected an issue"),
    ("commit is text", _commits, [{"commit": "x"}], "field 'commit'"),
    ("file without a name", _files, [{"status": "added"}], "field 'filename'"),
]


@pytest.mark.parametrize(("read", "body", "expected"), [s[1:] for s in SHAPES], ids=[s[0] for s in SHAPES])
def test_an_answer_of_another_shape_is_a_clear_github_error(read: Read, body: Any, expected: str) -> None:
    transport, _ = recording(lambda request: httpx.Response(200, json=body))
    with pytest.raises(GitHubError) as err:
        read(mock_client(transport))
    assert err.value.kind == "unexpected"
    assert "GitHub API answered GET /repos/" in str(err.value) and expected in str(err.value)
    assert "Moved Permanently" not in str(err.value)  # never the body itself


def test_an_answer_that_is_not_json_is_a_clear_github_error() -> None:
    transport, _ = recording(lambda request: httpx.Response(200, text="<html>unicorn</html>"))
    with pytest.raises(GitHubError) as err:
        get_pull(mock_client(transport), REPO, 1)
    assert err.value.kind == "unexpected" and "not JSON" in str(err.value) and "unicorn" not in str(err.value)


def test_a_5xx_through_the_client_is_retried_then_a_server_error() -> None:
    clock = FakeClock(T0.timestamp())
    transport, seen = recording(
        lambda request: httpx.Response(502, text=json.dumps({"message": "Server Error"}))
    )
    with pytest.raises(GitHubError) as err:
        get_pull(mock_client(transport, clock), REPO, 1)
    assert err.value.kind == "server" and err.value.status == 502 and "after 5 retries" in str(err.value)
    assert len(seen) == 6 and clock.sleeps == [1.5, 3.0, 6.0, 12.0, 24.0]


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (httpx.Response(307, headers={"Location": "https://elsewhere.fake/t"}), "only GET follows them"),
        (httpx.Response(201, json={"message": "Moved Permanently"}), "with no installation token"),
    ],
    ids=["redirected", "no token"],
)
def test_the_app_token_exchange_is_never_redirected_and_its_answer_is_checked(
    answer: httpx.Response, expected: str
) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    clock = FakeClock(T0.timestamp())
    transport, seen = recording(lambda request: answer)
    limiter = RateLimiter(RateLimitOptions(), sleep=clock.sleep, now=clock.now)
    gh = GitHubClient(auth=AppAuth("4242", key, 77, clock.now), limiter=limiter, transport=transport)
    with pytest.raises(GitHubError) as err:
        get_pull(gh, REPO, 1)
    assert err.value.kind == "unexpected" and expected in str(err.value)
    assert [r.url.path for r in seen] == ["/app/installations/77/access_tokens"]
