"""The export pipeline (spec E9-E16, T9, U-EXP-1..10) against the in-process fake GitHub API."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import graft_eval_pipeline.evalset.export.cases as export_cases
from graft_eval_pipeline.evalset.export.candidates import CandidateList, collect_candidates
from graft_eval_pipeline.evalset.export.cases import build_case, export_sampled
from graft_eval_pipeline.evalset.export.options import (
    CandidateSettings,
    ExportSettings,
    SampleSettings,
    WindowNames,
    check_repository,
    merge_bound,
)
from graft_eval_pipeline.evalset.export.redact import RedactOptions
from graft_eval_pipeline.evalset.export.run import ExportSummary, run_export
from graft_eval_pipeline.evalset.export.sample import choose_sample
from graft_eval_pipeline.evalset.sets.case_schema import PilotSource
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.env import EvalEnv
from graft_eval_pipeline.evalset.sets.errors import EvalAbort, EvalError
from graft_eval_pipeline.evalset.sets.paths import SCHEMA_DIR
from graft_eval_pipeline.evalset.sets.store import CaseSet, list_case_ids, open_set, read_case
from graft_eval_pipeline.github.auth import TokenAuth
from graft_eval_pipeline.github.client import GitHubClient
from graft_eval_pipeline.github.rate_limit import RateLimiter, RateLimitOptions
from graft_eval_pipeline_tests.builders import NOW, made_up, make_pilot_set
from graft_eval_pipeline_tests.fake_github import (
    ABUSE_LIMIT_MESSAGE,
    SECONDARY_LIMIT_MESSAGE,
    FakeClock,
    FakeCommit,
    FakeFile,
    FakeGitHub,
    FakeIssue,
    FakePull,
    RateBudget,
)

REPO = "fictional-org/shop-demo"
SET_ID = "pilot-acme"
FROM = datetime(2026, 6, 1, tzinfo=UTC)
TO = datetime(2026, 6, 30, 23, 59, 59, tzinfo=UTC)
CASE_SCHEMA = SCHEMA_DIR / "eval-case.v1.schema.json"
AGENT = "Graft-Agent: fictional-agent\nGraft-Model: model-x"


class Env:
    """A pilot set, the fake API, an injected clock and a client wired to them."""

    def __init__(self, tmp_path: Path, budget: RateBudget | None = None, **limits: Any) -> None:
        self.key = parse_key(generate_key())
        self.cs = make_pilot_set(tmp_path / SET_ID, key=self.key, globs=["services/billing/**"])
        self.clock = FakeClock(NOW.timestamp())
        self.fake = FakeGitHub(REPO, clock=self.clock.now, budget=budget)
        limiter = RateLimiter(RateLimitOptions(**limits), sleep=self.clock.sleep, now=self.clock.now)
        self.gh = GitHubClient(
            auth=TokenAuth("test-token"),
            limiter=limiter,
            base_url="https://github.fake",
            transport=self.fake.transport(),
        )
        self.lines: list[str] = []

    def agent_pull(self, n: int, day: int = 10, **over: Any) -> FakePull:
        at = FROM + timedelta(days=day, minutes=n)
        over.setdefault("commits", [FakeCommit(f"Change {n}\n\n{AGENT}")])
        over.setdefault("title", f"Secret title {n}")
        return self.fake.add_pull(FakePull(n, updated_at=at, merged_at=at, **over))

    def run(
        self, *, redact: RedactOptions | None = None, dry_run: bool = False, **sample: Any
    ) -> ExportSummary:
        settings = ExportSettings(
            CandidateSettings(REPO, FROM, TO), SampleSettings(**sample), redact or RedactOptions(), dry_run
        )
        return run_export(self.gh, self.cs, settings, now=lambda: NOW, emit=self.lines.append)

    def collect(self, **over: Any) -> CandidateList:
        return collect_candidates(self.gh, CandidateSettings(REPO, FROM, TO, **over))


def files_requests(fake: FakeGitHub) -> list[int]:
    return [int(p.split("/")[-2]) for p in fake.paths(r".*/pulls/\d+/files")]


def test_U_EXP_1_listing_pages_date_window_and_stage_one_sees_exactly_the_merged_in_range(
    tmp_path: Path,
) -> None:
    env = Env(tmp_path)
    env.fake.max_per_page = 4
    add = env.fake.add_pull
    add(FakePull(1, updated_at=TO + timedelta(days=2), merged_at=TO + timedelta(days=1)))  # after
    for n, day in ((2, 20), (3, 15), (5, 8), (6, 3)):
        env.agent_pull(n, day)
    add(FakePull(4, updated_at=FROM + timedelta(days=12), merged_at=None))  # closed, not merged
    add(FakePull(7, updated_at=FROM - timedelta(days=1), merged_at=FROM - timedelta(days=2)))  # before
    collected = env.collect(author="any")
    assert len(env.fake.paths(rf"/repos/{REPO}/pulls")) == 2  # two pages, via Link rel="next"
    assert [c.pr_number for c in collected.candidates] == [2, 3, 5, 6]
    assert sorted(set(int(p.split("/")[-1]) for p in env.fake.paths(r".*/pulls/\d+"))) == [2, 3, 5, 6]
    assert collected.listed == 4


def test_U_EXP_1_listing_stops_at_the_first_pr_updated_before_from(tmp_path: Path) -> None:
    env = Env(tmp_path)
    env.fake.max_per_page = 3
    env.agent_pull(1, 5)
    env.agent_pull(2, 4)
    for n in range(3, 9):  # updated before the window: the rest of page 1 and two more pages
        env.fake.add_pull(
            FakePull(n, updated_at=FROM - timedelta(days=n), merged_at=FROM - timedelta(days=n))
        )
    assert [c.pr_number for c in env.collect().candidates] == [1, 2]
    assert len(env.fake.paths(rf"/repos/{REPO}/pulls")) == 1


def test_U_EXP_2_author_agent_keeps_trailer_and_bot_and_drops_humans(tmp_path: Path) -> None:
    env = Env(tmp_path)
    env.agent_pull(1)
    env.agent_pull(2, commits=[FakeCommit("Human change")])
    env.agent_pull(3, user_login="helper[bot]", user_type="Bot", commits=[FakeCommit("Bot change")])
    collected = env.collect(author="agent")
    assert [(c.pr_number, c.author_kind_reason) for c in collected.candidates] == [(3, "bot"), (1, "trailer")]
    assert collected.candidates[1].agent == "fictional-agent" and collected.candidates[1].model == "model-x"
    assert collected.dropped_by_author == 1


def test_U_EXP_2_author_bot_makes_no_commit_request(tmp_path: Path) -> None:
    env = Env(tmp_path)
    env.agent_pull(1)  # trailer, but a human account: not a bot
    env.agent_pull(2, user_login="helper[bot]", user_type="Bot")
    env.agent_pull(3, user_login="agent-account")
    collected = env.collect(author="bot", agent_logins=("Agent-Account",))
    assert sorted(c.pr_number for c in collected.candidates) == [2, 3]
    assert env.fake.paths(r".*/commits") == []
    assert env.fake.paths(r".*/pulls/1") == []  # filtered on the listing, no stage 1
    assert collected.dropped_by_author == 1


def test_U_EXP_2_author_any_keeps_humans(tmp_path: Path) -> None:
    env = Env(tmp_path)
    env.agent_pull(1, commits=[FakeCommit("Human change")])
    (candidate,) = env.collect(author="any").candidates
    assert (candidate.author_kind, candidate.author_kind_reason) == ("human", "none")


def test_U_EXP_3_stage_two_only_for_sampled_prs_and_stage_one_keeps_no_patch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = Env(tmp_path)
    for n in range(1, 7):
        env.agent_pull(n, files=[FakeFile(f"src/m{n}.py", patch=f"@@ -1 +1 @@\n+PATCH-TEXT-{n}")])
    built: list[Any] = []
    real_build = build_case

    def spy(*args: Any, **kwargs: Any) -> Any:
        case = real_build(*args, **kwargs)
        built.append(case)
        return case

    monkeypatch.setattr(export_cases, "build_case", spy)
    collected = env.collect()
    stage_one_log = len(env.fake.log)
    dumped = collected.model_dump_json()
    assert "PATCH-TEXT" not in dumped and "Secret title" not in dumped and "src/m" not in dumped
    sample = choose_sample(collected.candidates, SampleSettings(2, 1, seed=1))
    export_sampled(env.gh, env.cs, sample.picks, redact=RedactOptions(), now=lambda: NOW)
    sampled = {c.pr_number for c in sample.picks}
    stage_two = [p.split("?")[0] for _, p in env.fake.log[stage_one_log:]]
    assert stage_two and all(int(p.split("/")[5]) in sampled for p in stage_two)
    assert sorted(c.inputs.pr.number for c in built) == sorted(sampled)
    assert all(c.inputs.files[0].patch.endswith(f"PATCH-TEXT-{c.inputs.pr.number}") for c in built)


def test_U_EXP_4_written_case_is_sealed_valid_unlabeled_with_source_from_the_api(tmp_path: Path) -> None:
    env = Env(tmp_path)
    pull = env.agent_pull(
        7,
        body="Implements the task.",
        commits=[FakeCommit("Work"), FakeCommit(f"More\n\n{AGENT}\nGraft-Task: #5")],
        files=[FakeFile("services/billing/invoice.py", additions=60, deletions=2)],
    )
    env.fake.add_issue(FakeIssue(5, title="Task five", body="Do the thing."))
    env.run(size=5)
    case_id = f"{SET_ID}--shop-demo-7"
    assert list_case_ids(env.cs) == [case_id]
    sealed = (env.cs.dir / "cases" / f"{case_id}.case.enc").read_text(encoding="utf-8")
    assert json.loads(sealed)["graftEval"] == "enc-v1" and pull.title not in sealed
    case = read_case(open_set(env.cs.dir, env.key), case_id)
    Draft202012Validator(json.loads(CASE_SCHEMA.read_text(encoding="utf-8"))).validate(case.to_json_dict())
    assert case.labels == [] and case.adjudicated is None and case.fake_llm is None
    src = case.source
    assert isinstance(src, PilotSource)
    detail = pull.detail(REPO)
    assert (src.repository, src.pr_number, src.head_sha, src.base_sha) == (
        REPO,
        7,
        detail["head"]["sha"],
        detail["base"]["sha"],
    )
    assert src.merged_at == pull.merged_at and src.exported_at == NOW
    assert (src.author_kind, src.author_kind_reason, src.agent, src.model) == (
        "agent",
        "trailer",
        "fictional-agent",
        "model-x",
    )
    assert case.floor_config.extra_sensitive_globs == ["services/billing/**"]
    assert case.inputs.issue is not None and case.inputs.issue.number == 5
    assert case.inputs.pr.title == pull.title and case.inputs.files[0].patch == pull.files[0].patch
    assert env.lines[0] == f"exported {case_id} (M/sensitive, redactions: 0)"


def test_U_EXP_5_rerun_writes_nothing_new_and_makes_no_stage_two_request(tmp_path: Path) -> None:
    env = Env(tmp_path)
    for n in range(1, 5):
        env.agent_pull(n)
    env.run(size=3)
    ids = list_case_ids(env.cs)
    mtimes = {p.name: p.stat().st_mtime_ns for p in (env.cs.dir / "cases").iterdir()}
    env.fake.log.clear()
    summary = env.run(size=3)
    assert list_case_ids(env.cs) == ids and len(ids) == 3
    assert {p.name: p.stat().st_mtime_ns for p in (env.cs.dir / "cases").iterdir()} == mtimes
    assert summary.result is not None and summary.result.skipped_existing == ids
    assert summary.stage2_requests == 0
    assert sorted(files_requests(env.fake)) == [1, 2, 3, 4]  # stage 1 only, once per candidate


def test_U_EXP_6_empty_consent_ref_is_refused_before_any_request(tmp_path: Path) -> None:
    env = Env(tmp_path)
    env.agent_pull(1)
    set_file = env.cs.dir / "set.json"
    meta = json.loads(set_file.read_text(encoding="utf-8"))
    meta["consentRef"] = ""
    set_file.write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(EvalError, match="consentRef"):
        open_set(env.cs.dir, env.key)
    hand_made = CaseSet(env.cs.dir, env.cs.meta.model_copy(update={"consent_ref": " "}), env.key)
    with pytest.raises(EvalError, match="consent"):
        run_export(
            env.gh, hand_made, ExportSettings(CandidateSettings(REPO, FROM, TO)), now=lambda: NOW, emit=print
        )
    assert env.fake.log == []


def test_U_EXP_7_a_404_on_one_pr_is_skipped_and_counted(tmp_path: Path) -> None:
    env = Env(tmp_path)
    for n in range(1, 4):
        env.agent_pull(n)
    env.fake.fail(rf"/repos/{REPO}/pulls/2", 404, times=None)
    summary = env.run(size=10)
    assert summary.missing == [2]
    assert list_case_ids(env.cs) == [f"{SET_ID}--shop-demo-1", f"{SET_ID}--shop-demo-3"]
    assert any("gone (404/410): 1" in line for line in env.lines)


def test_U_EXP_7_a_410_in_stage_two_is_skipped_too(tmp_path: Path) -> None:
    env = Env(tmp_path)
    for n in range(1, 3):
        env.agent_pull(n)
    picks = env.collect().candidates
    env.fake.fail(rf"/repos/{REPO}/pulls/1/files", 410, times=None)
    result = export_sampled(env.gh, env.cs, picks, redact=RedactOptions(), now=lambda: NOW)
    assert result.missing == [1]
    assert [e.case_id for e in result.exported] == [f"{SET_ID}--shop-demo-2"]


def test_U_EXP_7_other_errors_abort_with_exit_2_and_keep_what_was_written(tmp_path: Path) -> None:
    env = Env(tmp_path)
    for n in range(1, 4):
        env.agent_pull(n)
    picks = env.collect().candidates
    env.fake.fail(rf"/repos/{REPO}/pulls/1", 422, times=None)  # exported last (sorted by number)
    with pytest.raises(EvalError) as err:
        export_sampled(
            env.gh, env.cs, sorted(picks, key=lambda c: -c.pr_number), redact=RedactOptions(), now=lambda: NOW
        )
    assert err.value.exit_code == 2 and "422" in str(err.value)
    assert env.clock.sleeps == []  # a 4xx is not retried
    assert list_case_ids(env.cs) == [f"{SET_ID}--shop-demo-2", f"{SET_ID}--shop-demo-3"]


def test_U_EXP_8_rate_limit_at_zero_sleeps_until_reset_and_completes(tmp_path: Path) -> None:
    start = NOW.timestamp()
    env = Env(tmp_path, budget=RateBudget(limit=5000, remaining=0, reset=start + 100))
    for n in range(1, 3):
        env.agent_pull(n)
    summary = env.run(size=5)
    assert env.clock.sleeps == [101.0]
    assert len(list_case_ids(env.cs)) == 2
    assert summary.rate_limit_waits == 1
    assert env.lines[-1].endswith("rate-limit waits: 1 (101 s)")


def test_U_EXP_8_a_wait_over_max_wait_aborts_with_exit_3(tmp_path: Path) -> None:
    env = Env(
        tmp_path, budget=RateBudget(limit=5000, remaining=0, reset=NOW.timestamp() + 3600), max_wait_s=60
    )
    env.agent_pull(1)
    with pytest.raises(EvalAbort) as err:
        env.run()
    assert err.value.reason == "rate_limit_wait" and err.value.exit_code == 3
    assert env.clock.sleeps == []


def test_U_EXP_9_dry_run_writes_nothing_and_stays_in_stage_one(tmp_path: Path) -> None:
    env = Env(tmp_path)
    for n in range(1, 6):
        env.agent_pull(n, body=f"Fixes #{n + 100}")
    before = sorted(str(p) for p in env.cs.dir.rglob("*"))
    summary = env.run(size=2, min_per_stratum=1, dry_run=True)
    assert sorted(str(p) for p in env.cs.dir.rglob("*")) == before
    assert sorted(files_requests(env.fake)) == [1, 2, 3, 4, 5]  # one stage-1 page each
    assert env.fake.paths(r".*/issues/\d+") == []
    assert summary.result is None and summary.stage2_requests == 0
    picked = ", ".join(f"#{c.pr_number}" for c in summary.sample.picks)
    assert f"sampled PRs: {picked}" in env.lines
    assert not any(line.startswith("exported ") for line in env.lines)


def test_U_EXP_10_a_token_in_the_body_is_redacted_in_the_case(tmp_path: Path) -> None:
    env = Env(tmp_path)
    token = "ghp_" + made_up(36, seed=1)
    env.agent_pull(1, body=f"Use {token} to test.\nContact ops@corp.example")
    env.run(redact=RedactOptions(emails=True))
    case = read_case(env.cs, f"{SET_ID}--shop-demo-1")
    assert token not in case.model_dump_json() and "ops@corp.example" not in case.inputs.pr.body
    assert isinstance(case.source, PilotSource)
    assert [r.to_json_dict() for r in case.source.redactions] == [
        {"kind": "email", "count": 1},
        {"kind": "github_token", "count": 1},
    ]
    assert env.lines[0] == f"exported {SET_ID}--shop-demo-1 (S/source, redactions: 2)"


def test_sample_metadata_records_strata_populations_and_is_saved_sealed(tmp_path: Path) -> None:
    env = Env(tmp_path)
    for n in range(1, 9):
        files = [FakeFile(".github/workflows/ci.yml")] if n <= 2 else [FakeFile(f"src/f{n}.py")]
        env.agent_pull(n, files=files)
    summary = env.run(size=4, min_per_stratum=2)
    assert {k: (v.population, v.sampled) for k, v in summary.sample.strata.items()} == {
        "S/sensitive": (2, 2),
        "S/source": (6, 2),
    }
    (saved,) = (env.cs.dir / "exports").iterdir()
    assert saved.name.endswith(".json.enc")
    assert "  S/source: 6 candidates, 2 sampled" in env.lines


def test_no_output_line_carries_a_title_body_or_path(tmp_path: Path) -> None:
    env = Env(tmp_path)
    env.agent_pull(1, body="Body words", files=[FakeFile("src/very_private_name.py")])
    env.run()
    text = "\n".join(env.lines)
    assert "Secret title" not in text and "Body words" not in text and "very_private_name" not in text


def test_progress_is_reported_per_stage(tmp_path: Path) -> None:
    env = Env(tmp_path)
    for n in range(1, 4):
        env.agent_pull(n)
    seen: list[tuple[str, int, int]] = []
    progress: Callable[[str, int, int], None] = lambda *a: seen.append(a)  # noqa: E731
    run_export(
        env.gh,
        env.cs,
        ExportSettings(CandidateSettings(REPO, FROM, TO)),
        now=lambda: NOW,
        emit=env.lines.append,
        progress=progress,
    )
    assert seen[:3] == [("stage 1", 1, 3), ("stage 1", 2, 3), ("stage 1", 3, 3)]
    assert seen[-1] == ("stage 2", 3, 3)


def test_export_window_takes_whole_days_or_iso_times_and_names_a_bad_bound() -> None:
    assert merge_bound("2026-06-01", "--from", end_of_day=False) == datetime(2026, 6, 1, tzinfo=UTC)
    assert merge_bound("2026-06-30", "--to", end_of_day=True) == datetime(
        2026, 6, 30, 23, 59, 59, 999999, tzinfo=UTC
    )
    assert merge_bound("2026-06-01T12:00:00Z", "--from", end_of_day=False) == datetime(
        2026, 6, 1, 12, tzinfo=UTC
    )
    with pytest.raises(EvalError, match="--to '2026-13-01' is not a date"):
        merge_bound("2026-13-01", "--to", end_of_day=True)
    assert check_repository("fictional-org/shop-demo") == "fictional-org/shop-demo"
    with pytest.raises(EvalError, match="is not owner/name"):
        check_repository("shop-demo")


def test_export_settings_hold_each_rule_once_in_the_words_of_the_shell() -> None:
    env = EvalEnv(
        eval_dir=Path("/nonexistent"),
        agent_logins=("agent-bot",),
        agent_coauthor_emails=("agent@example.test",),
    )
    config_names = WindowNames(merged_from="merged_from", merged_to="merged_to")
    window = CandidateSettings.from_text(
        config_names, env, repo=REPO, merged_from="2026-06-01", merged_to="2026-06-30"
    )
    assert (window.merged_from, window.merged_to) == (
        FROM,
        datetime(2026, 6, 30, 23, 59, 59, 999999, tzinfo=UTC),
    )
    assert (window.agent_logins, window.agent_coauthor_emails) == (("agent-bot",), ("agent@example.test",))
    given = CandidateSettings.from_text(
        config_names, env, repo=REPO, merged_from="2026-06-01", merged_to="2026-06-30", agent_logins=[]
    )
    assert given.agent_logins == ()  # given (even empty) wins over the environment
    with pytest.raises(EvalError, match="merged_to '30 June' is not a date"):
        CandidateSettings.from_text(
            config_names, env, repo=REPO, merged_from="2026-06-01", merged_to="30 June"
        )
    with pytest.raises(EvalError, match="ends before it starts"):
        CandidateSettings(REPO, TO, FROM)
    with pytest.raises(EvalError, match="is not owner/name"):
        CandidateSettings("shop-demo", FROM, TO)
    with pytest.raises(EvalError, match="max candidates is 0"):
        CandidateSettings(REPO, FROM, TO, max_candidates=0)
    with pytest.raises(EvalError, match="sample size is 0"):
        SampleSettings(size=0)
    with pytest.raises(EvalError, match="min per stratum is -1"):
        SampleSettings(min_per_stratum=-1)


# --- GitHub as it really answers (issue 10, item 4) ----------------------------------------------


def in_backoff_window(sleeps: list[float], attempts: list[int]) -> bool:
    """Each wait lies in [2^(a+1) * 0.5, 2^(a+1)) s: exponential backoff with jitter."""
    return len(sleeps) == len(attempts) and all(
        2.0 * 2**a * 0.5 <= s < 2.0 * 2**a for s, a in zip(sleeps, attempts, strict=True)
    )


def test_a_5xx_burst_and_dropped_connections_are_retried_and_the_export_completes(tmp_path: Path) -> None:
    env = Env(tmp_path)
    env.agent_pull(1)
    env.fake.drop_connections(2)  # the listing: two failed connects, then it answers
    env.fake.server_errors(rf"/repos/{REPO}/pulls/1")  # 502, 503, 504, then the PR
    summary = env.run()
    assert list_case_ids(env.cs) == [f"{SET_ID}--shop-demo-1"]
    assert env.fake.dropped == [f"/repos/{REPO}/pulls", f"/repos/{REPO}/pulls"]
    assert in_backoff_window(env.clock.sleeps, [0, 1, 0, 1, 2])
    assert summary.rate_limit_waits == 0  # backoff is not a rate-limit wait


def test_a_5xx_that_outlasts_the_retries_stops_with_exit_3_and_a_rerun_resumes(tmp_path: Path) -> None:
    env = Env(tmp_path)
    for n in range(1, 4):
        env.agent_pull(n)
    picks = sorted(env.collect().candidates, key=lambda c: -c.pr_number)  # #1 last
    env.fake.fail(rf"/repos/{REPO}/pulls/1", 503, times=None)
    with pytest.raises(EvalAbort) as err:
        export_sampled(env.gh, env.cs, picks, redact=RedactOptions(), now=lambda: NOW)
    assert err.value.exit_code == 3 and err.value.reason == "github_unavailable"
    assert "503" in str(err.value) and "after 5 retries" in str(err.value) and "re-run" in str(err.value)
    assert in_backoff_window(env.clock.sleeps, [0, 1, 2, 3, 4])
    assert list_case_ids(env.cs) == [f"{SET_ID}--shop-demo-2", f"{SET_ID}--shop-demo-3"]
    env.fake.failures.clear()
    result = export_sampled(env.gh, env.cs, picks, redact=RedactOptions(), now=lambda: NOW)
    assert [e.pr_number for e in result.exported] == [1] and len(result.skipped_existing) == 2


def test_a_renamed_repository_and_a_transferred_issue_are_followed(tmp_path: Path) -> None:
    env = Env(tmp_path)
    old = "fictional-org/shop-demo-old"
    env.fake.renamed_from.add(old)
    env.agent_pull(1, body="Fixes #5")
    env.fake.transfer_issue(5, FakeIssue(9, title="Moved issue"), to_repo_id=700002)
    options = ExportSettings(CandidateSettings(repo=old, merged_from=FROM, merged_to=TO))
    run_export(env.gh, env.cs, options, now=lambda: NOW, emit=env.lines.append)
    case = read_case(env.cs, f"{SET_ID}--shop-demo-old-1")
    assert case.inputs.repository_full_name == REPO
    assert case.inputs.issue is not None and (case.inputs.issue.number, case.inputs.issue.title) == (
        9,
        "Moved issue",
    )
    assert any(p.startswith("/repositories/") for p in env.fake.paths())


def test_an_answer_of_another_shape_stops_the_export_with_exit_2_and_names_the_route(tmp_path: Path) -> None:
    env = Env(tmp_path)
    env.agent_pull(1, body="Fixes #5")
    env.fake.fail(rf"/repos/{REPO}/issues/5", 200, message="Moved Permanently")  # an error object, 200
    with pytest.raises(EvalError) as err:
        env.run()
    assert type(err.value) is EvalError and err.value.exit_code == 2
    assert f"GET /repos/{REPO}/issues/5 with an unexpected body (expected an issue" in str(err.value)
    assert list_case_ids(env.cs) == []


@pytest.mark.parametrize("message", [SECONDARY_LIMIT_MESSAGE, ABUSE_LIMIT_MESSAGE])
def test_a_secondary_limit_403_without_retry_after_waits_and_the_export_completes(
    tmp_path: Path, message: str
) -> None:
    env = Env(tmp_path)
    env.agent_pull(1)
    env.fake.secondary_limit(rf"/repos/{REPO}/pulls/1", times=2, message=message)
    summary = env.run()
    assert env.clock.sleeps == [60.0, 120.0]  # at least a minute, then exponential
    assert summary.rate_limit_waits == 2 and list_case_ids(env.cs) == [f"{SET_ID}--shop-demo-1"]
