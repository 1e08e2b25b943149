"""Fake-mode harness throughput: run_eval over 1,000 and 10,000 copies of the synthetic cases,
then the wall time of the synthetic `dagster asset materialize`.

Run: .venv/bin/python bench/bench_harness.py
Targets: >= 1,000 cases/s, time(10k) / time(1k) <= 11, peak resident memory < 1 GB; the
materialize (evaluation group, synthetic partition) in < 20 s.
The run_eval time covers the whole run: load and validate every case, generate, score, build the
report. The materialize runs the venv's `graft-eval sets sync` and `dagster` as subprocesses
against a temporary DAGSTER_HOME (and an empty GRAFT_EVAL_DIR, so no pilot set is touched); only
the materialize is timed. Afterwards eval/synthetic is left as it was: the run folder it wrote is
removed, and the asset files are put back as they were (new ones removed, rewritten ones restored).
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from graft_eval_pipeline.evalset.evaluate import run_eval
from graft_eval_pipeline.evalset.run.options import RunOptions
from graft_eval_pipeline.evalset.scoring.report_schema import GitInfo
from graft_eval_pipeline.evalset.sets.case_schema import dump_case
from graft_eval_pipeline.evalset.sets.store import create_set, open_set, read_cases

REPO = Path(__file__).resolve().parent.parent
SYNTHETIC = REPO / "eval" / "synthetic"
SIZES = (1_000, 10_000)
NOW = datetime(2026, 10, 15, tzinfo=UTC)
VENV_BIN = Path(sys.executable).parent
MATERIALIZE = [
    "asset",
    "materialize",
    "-m",
    "graft_eval_pipeline.definitions",
    "--select",
    "group:evaluation",
    "--partition",
    "synthetic",
]


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


def run_tool(tool: str, args: list[str], env: dict[str, str]) -> None:
    """One of the venv's binaries, from the repository root; a failure ends the benchmark."""
    done = subprocess.run([str(VENV_BIN / tool), *args], cwd=REPO, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{tool} {' '.join(args)} exited {done.returncode}:\n{done.stderr[-2000:]}")


def entries(folder: Path) -> set[Path]:
    return set(folder.iterdir()) if folder.is_dir() else set()


def remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()


def timed_materialize() -> float:
    """Wall seconds of the synthetic materialize, leaving eval/synthetic as it found it."""
    runs, assets = SYNTHETIC / "runs", SYNTHETIC / "assets"
    runs_before, assets_before, had_assets = entries(runs), entries(assets), assets.is_dir()
    with tempfile.TemporaryDirectory() as tmp:
        home, eval_dir, saved = Path(tmp, "dagster_home"), Path(tmp, "eval"), Path(tmp, "assets")
        home.mkdir()
        eval_dir.mkdir()
        shutil.copy2(REPO / "dagster.yaml", home / "dagster.yaml")
        if had_assets:  # the materialize rewrites the asset files: keep the current ones
            shutil.copytree(assets, saved)
        env = {**os.environ, "DAGSTER_HOME": str(home), "GRAFT_EVAL_DIR": str(eval_dir)}
        env.pop("GRAFT_EVAL_KEY", None)
        try:
            run_tool("graft-eval", ["sets", "sync"], env)
            started = time.perf_counter()
            run_tool("dagster", MATERIALIZE, env)
            return time.perf_counter() - started
        finally:
            for path in entries(runs) - runs_before:
                remove(path)
            for path in entries(assets):
                remove(path)
            for path in assets_before:
                if (saved / path.name).is_dir():
                    shutil.copytree(saved / path.name, path)
                else:
                    shutil.copy2(saved / path.name, path)
            if not had_assets and assets.is_dir():
                assets.rmdir()


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
    print(f"synthetic dagster asset materialize: {timed_materialize():.1f} s (target < 20)")


if __name__ == "__main__":
    main()
