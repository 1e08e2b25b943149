"""Fake-mode harness throughput: run_eval over 1,000 and 10,000 copies of the synthetic cases.

Run: .venv/bin/python bench/bench_harness.py
Targets: >= 1,000 cases/s, time(10k) / time(1k) <= 11, peak resident memory < 1 GB.
The time covers the whole run: load and validate every case, generate, score, build the report.
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from graft_eval_pipeline.evalset.case_schema import dump_case
from graft_eval_pipeline.evalset.harness import RunOptions, run_eval
from graft_eval_pipeline.evalset.report_schema import GitInfo
from graft_eval_pipeline.evalset.store import create_set, open_set, read_cases

SYNTHETIC = Path(__file__).resolve().parent.parent / "eval" / "synthetic"
SIZES = (1_000, 10_000)
NOW = datetime(2026, 10, 15, tzinfo=UTC)


def build_set(root: Path, size: int) -> Path:
    """A synthetic-kind set of `size` cases: the 30 seed cases cycled under new ids."""
    seeds = read_cases(open_set(SYNTHETIC, None))
    set_dir = root / f"bench-{size}"
    create_set(
        set_dir,
        set_id=f"bench-{size}",
        kind="synthetic",
        description="harness benchmark",
        consent_ref=None,
        default_floor_config=None,
        key=None,
        now=NOW,
    )
    for n in range(size):
        seed = seeds[n % len(seeds)]
        case = seed.model_copy(update={"id": f"syn-{n:05d}-{seed.id.removeprefix('syn-')[4:]}"})
        (set_dir / "cases" / f"{case.id}.case.json").write_text(dump_case(case), encoding="utf-8")
    return set_dir


def timed_run(set_dir: Path) -> float:
    options = RunOptions(
        set=open_set(set_dir, None),
        now=lambda: NOW,
        git=lambda: GitInfo(commit=None, dirty=None),
    )
    started = time.perf_counter()
    run_eval(options)
    return time.perf_counter() - started


def peak_rss_mb() -> float:
    """Peak resident set size of this process (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def main() -> None:
    times = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in SIZES:
            set_dir = build_set(Path(tmp), size)
            times[size] = timed_run(set_dir)
            print(f"{size:>6} cases: {times[size]:7.2f} s, {size / times[size]:8.0f} cases/s")
    ratio = times[SIZES[1]] / times[SIZES[0]]
    print(f"time ratio 10k/1k: {ratio:.2f} (target <= 11)")
    print(f"peak resident memory: {peak_rss_mb():.0f} MB (target < 1024)")


if __name__ == "__main__":
    main()
