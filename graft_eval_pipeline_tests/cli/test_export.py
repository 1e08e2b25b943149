"""`graft-eval export` end to end (U-CLI-7) against the fake GitHub API on a loopback port."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline_tests.builders import make_pilot_set
from graft_eval_pipeline_tests.fake_github import FakeGitHub, agent_pull, serve

REPO = "fictional-org/shop-demo"
TITLE = "Quietly rework the invoice rounding"
MERGED = datetime(2026, 6, 10, 12, tzinfo=UTC)


@pytest.fixture
def pilot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    key = generate_key()
    for name in ("GRAFT_AGENT_LOGINS", "GRAFT_AGENT_COAUTHOR_EMAILS", "GITHUB_APP_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GRAFT_EVAL_KEY", key)
    monkeypatch.setenv("GRAFT_EVAL_GITHUB_TOKEN", "test-token")
    return make_pilot_set(tmp_path / "pilot-acme", key=parse_key(key)).dir


def fake_with_prs() -> FakeGitHub:
    fake = FakeGitHub(REPO)
    for n in (11, 12, 13):
        at = MERGED + timedelta(hours=n)
        fake.add_pull(agent_pull(n, at, title=f"{TITLE} {n}", path=f"src/billing/rounding_{n}.py"))
    return fake


def export_args(set_dir: Path, *extra: str) -> list[str]:
    return ["export", "--set", str(set_dir), "--repo", REPO, "--from", "2026-06-01", "--to", "2026-06-30",
            "--auth", "token", *extra]  # fmt: skip


def run_export(fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch, set_dir: Path, *extra: str) -> int:
    """`graft-eval export` against `fake` served on a local port; the exit code."""
    with serve(fake.app) as base_url:
        monkeypatch.setenv("GITHUB_API_URL", base_url)
        return main(export_args(set_dir, *extra))


def test_U_CLI_7_export_prints_case_ids_and_counts_never_a_title(
    pilot: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = fake_with_prs()
    assert run_export(fake, monkeypatch, pilot) == 0
    out, err = capsys.readouterr()
    ids = [f"pilot-acme--shop-demo-{n}" for n in (11, 12, 13)]
    for case_id in ids:
        assert f"exported {case_id} (S/source, redactions: 0)" in out
    assert "exported: 3, already present: 0, gone (404/410): 0" in out
    assert f"requests: {len(fake.log)} " in out
    assert TITLE not in out + err and "rounding_" not in out + err
    assert sorted(p.name for p in (pilot / "cases").iterdir()) == [f"{i}.case.enc" for i in ids]


def test_U_CLI_7_dry_run_prints_strata_and_pr_numbers_and_writes_nothing(
    pilot: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = fake_with_prs()
    assert run_export(fake, monkeypatch, pilot, "--dry-run", "--sample", "2", "--min-per-stratum", "1") == 0
    out = capsys.readouterr().out
    assert "  S/source: 3 candidates, 2 sampled" in out
    assert "sampled PRs: #" in out and "dry run: no stage-2 request, nothing written" in out
    assert list((pilot / "cases").iterdir()) == []


def test_export_usage_errors_exit_2_before_any_request(
    pilot: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")  # never reached
    assert main(export_args(pilot, "--max-wait", "soon")) == 2
    assert main(export_args(pilot, "--redact-pattern", "(")) == 2
    assert main([*export_args(pilot)[:-2], "--auth", "app"]) == 2  # no --installation-id
    assert main([*export_args(pilot)[:-2], "--repo", "not-a-repo"]) == 2
    monkeypatch.delenv("GRAFT_EVAL_GITHUB_TOKEN")
    assert main(export_args(pilot)) == 2
    err = capsys.readouterr().err
    assert "--installation-id" in err and "GRAFT_EVAL_GITHUB_TOKEN" in err
    monkeypatch.setenv("GRAFT_EVAL_GITHUB_TOKEN", "test-token")
    assert main([*export_args(pilot)[:-2], "--from", "2026-07-01"]) == 2  # after --to 2026-06-30
    assert "the export window ends before it starts" in capsys.readouterr().err
    assert main([*export_args(pilot)[:-2], "--from", "July"]) == 2
    assert "--from 'July' is not a date" in capsys.readouterr().err


def test_export_rate_limit_wait_over_max_wait_exits_3_and_reports_requests(
    pilot: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = fake_with_prs()
    fake.fail(rf"/repos/{REPO}/pulls/12", 429, times=None, headers={"Retry-After": "3600"})
    assert run_export(fake, monkeypatch, pilot, "--max-wait", "1m") == 3
    err = capsys.readouterr().err
    assert "--max-wait" in err and "stopped after" in err


def test_export_a_persistent_5xx_exits_3_with_a_resumable_message(
    pilot: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = fake_with_prs()
    fake.fail(rf"/repos/{REPO}/pulls/12", 503, times=None)
    # --max-wait 500ms leaves no room for the first backoff (at least 1 s): no real sleep here
    assert run_export(fake, monkeypatch, pilot, "--max-wait", "500ms") == 3
    err = capsys.readouterr().err
    assert "answered 503 for GET /repos/fictional-org/shop-demo/pulls/12 after 0 retries" in err
    assert "re-run the same export later to resume" in err and "Traceback" not in err
    assert TITLE not in err
