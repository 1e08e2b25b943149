"""GitHub client, auth and PR reads against the in-process fake API (no network)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from graft_eval_pipeline.github.auth import AppAuth, TokenAuth
from graft_eval_pipeline.github.client import GitHubClient
from graft_eval_pipeline.github.errors import GitHubError
from graft_eval_pipeline.github.pulls import (
    build_card_inputs,
    fetch_intent_inputs,
    get_pull,
    linked_issue_number,
    list_files,
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
