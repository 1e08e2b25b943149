"""An export of 400 candidates / 40 sampled through the fake GitHub API, in-process.

Run: .venv/bin/python bench/bench_export.py

Prints the request count per stage, requests per exported case and the time per stage. The set
lives in a temporary folder outside any git tree; no network is used.
"""

from __future__ import annotations

import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from graft_eval_pipeline.evalset.export.candidates import collect_candidates
from graft_eval_pipeline.evalset.export.cases import export_sampled
from graft_eval_pipeline.evalset.export.options import CandidateSettings, SampleSettings
from graft_eval_pipeline.evalset.export.redact import RedactOptions
from graft_eval_pipeline.evalset.export.sample import choose_sample
from graft_eval_pipeline.evalset.sets.case_schema import FloorConfig
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.store import create_set
from graft_eval_pipeline.github.auth import TokenAuth
from graft_eval_pipeline.github.client import GitHubClient
from graft_eval_pipeline.github.rate_limit import RateLimiter, RateLimitOptions
from graft_eval_pipeline_tests.fake_github import FakeClock, FakeCommit, FakeFile, FakeGitHub, FakePull

REPO = "fictional-org/shop-demo"
FROM = datetime(2026, 1, 1, tzinfo=UTC)
TO = datetime(2026, 12, 31, tzinfo=UTC)
PATHS = ("src/app/module_{}.py", "tests/test_module_{}.py", "docs/page_{}.md", ".github/workflows/ci_{}.yml")


def fake_repo(n: int, seed: int = 1) -> FakeGitHub:
    rng = random.Random(seed)
    fake = FakeGitHub(REPO)
    for number in range(1, n + 1):
        at = FROM + timedelta(hours=number * 7)
        files = [
            FakeFile(
                rng.choice(PATHS).format(number * 10 + i),
                additions=rng.choice((1, 5, 40, 200, 900)),
                deletions=rng.choice((0, 3, 30)),
                patch="@@ -1,3 +1,3 @@\n" + "\n".join(f"+line {j} of the change" for j in range(30)),
            )
            for i in range(rng.randint(1, 12))
        ]
        trailer = "\n\nGraft-Agent: fictional-agent" if rng.random() < 0.7 else ""
        fake.add_pull(
            FakePull(
                number,
                title=f"Change {number}",
                body="Fixes #1" if rng.random() < 0.3 else "",
                updated_at=at,
                merged_at=at,
                files=files,
                commits=[FakeCommit(f"Commit {k}{trailer}") for k in range(rng.randint(1, 4))],
            )
        )
    return fake


def main() -> None:
    fake = fake_repo(400)
    clock = FakeClock(time.time())
    limiter = RateLimiter(RateLimitOptions(), sleep=clock.sleep, now=clock.now)
    gh = GitHubClient(
        auth=TokenAuth("test-token"),
        limiter=limiter,
        base_url="https://github.fake",
        transport=fake.transport(),
    )
    with tempfile.TemporaryDirectory() as tmp:
        key = parse_key(generate_key())
        cs = create_set(
            Path(tmp) / "pilot-bench",
            set_id="pilot-bench",
            kind="pilot",
            description="",
            consent_ref="bench",
            default_floor_config=FloorConfig(),
            key=key,
            now=datetime.now(UTC),
        )
        started = time.perf_counter()
        collected = collect_candidates(
            gh, CandidateSettings(REPO, FROM, TO, author="any", max_candidates=400)
        )
        stage1_s = time.perf_counter() - started
        sample = choose_sample(collected.candidates, SampleSettings(40, 2, seed=1))
        started = time.perf_counter()
        result = export_sampled(gh, cs, sample.picks, redact=RedactOptions(), now=lambda: datetime.now(UTC))
        stage2_s = time.perf_counter() - started
    exported = len(result.exported)
    total = collected.requests + result.requests
    print(f"candidates: {len(collected.candidates)}, sampled: {len(sample.picks)}, exported: {exported}")
    print(f"strata: {', '.join(f'{k} {v.sampled}/{v.population}' for k, v in sample.strata.items())}")
    per_candidate = collected.requests / len(collected.candidates)
    print(f"stage 1: {collected.requests} requests ({per_candidate:.2f} per candidate), {stage1_s:.2f} s")
    print(
        f"stage 2: {result.requests} requests ({result.requests / exported:.2f} per case), {stage2_s:.2f} s"
    )
    share = collected.requests / total
    print(f"total: {total} requests, {total / exported:.1f} per exported case; stage 1 share {share:.0%}")


if __name__ == "__main__":
    main()
