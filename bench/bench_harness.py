"""Fake-mode harness benchmark: throughput, memory, start-up and the synthetic materialization.

Fake-mode harness: throughput and memory at 1,000 and 10,000 cases of a generated set and of
real-sized diffs, the whole-process start-up of `graft-eval run`, and the synthetic `dagster asset
materialize`.

Run: .venv/bin/python bench/bench_harness.py [--skip-materialize] [--sizes 1000,10000]
     [--only generated|real|startup] [--before 722182c [--pairs 2]]

Targets (issue 16): generated set >= 1,500 cases/s; real-sized diffs (mean >= 30 kB of patch per
case, bench/real_diffs.py) peak resident memory < 500 MB at 10,000 cases, time ratio 10k/1k
<= 10.5, and >= 2x the throughput measured before the streaming harness; `graft-eval run --set
eval/synthetic` < 0.5 s wall as a whole process; the materialize < 20 s. `--before REV` measures
the 2x: `run_eval` of commit REV (722182c is the harness before streaming, checked out in a
temporary git worktree) and of this code, back to back on the largest real-diff set, in pairs
(the host's load moves both alike).

Each timed run is a child process of its own (so its peak memory is its own), which imports the
code first and then times what `graft-eval run` does after parsing its flags: load and validate
every case, generate, score, build the report and write report.json, report.md and
cases.parquet (to a temporary folder). The generated set is the 30 synthetic cases cycled under
new ids; the real-diff set cycles the PRs of the real-diff corpus the same way, each with a gold
label so every case is scored.
The materialize runs the venv's `graft-eval sets sync` and `dagster` as subprocesses against a
temporary DAGSTER_HOME (and an empty GRAFT_EVAL_DIR, so no pilot set is touched); only the
materialize is timed. Afterwards eval/synthetic is left as it was: the run folder it wrote is
removed, and the asset files are put back as they were (new ones removed, rewritten ones restored).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SYNTHETIC = REPO / "eval" / "synthetic"
SIZES = (1_000, 10_000)
NOW = datetime(2026, 10, 15, tzinfo=UTC)
VENV_BIN = Path(sys.executable).parent
STARTUP_RUNS = 7
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


def _new_set(root: Path, name: str) -> Path:
    from graft_eval_pipeline.evalset.sets.store import create_set

    set_dir = root / name
    create_set(
        set_dir,
        set_id=name,
        kind="synthetic",
        description="harness benchmark",
        consent_ref=None,
        default_floor_config=None,
        key=None,
        now=NOW,
    )
    return set_dir


def build_set(root: Path, size: int) -> Path:
    """A synthetic-kind set of `size` cases: the 30 seed cases cycled under new ids."""
    from graft_eval_pipeline.evalset.sets.case_schema import dump_case
    from graft_eval_pipeline.evalset.sets.store import open_set, read_cases

    seeds = read_cases(open_set(SYNTHETIC, None))
    set_dir = _new_set(root, f"bench-{size}")
    for n in range(size):
        seed = seeds[n % len(seeds)]
        case = seed.model_copy(update={"id": f"syn-{n:05d}-{seed.id.removeprefix('syn-')[4:]}"})
        (set_dir / "cases" / f"{case.id}.case.json").write_text(dump_case(case), encoding="utf-8")
    return set_dir


ID_MARK = "syn-real-base-case"


def real_case_texts() -> list[str]:
    """One case document per real-diff PR, its id left as ID_MARK; gold risk cycles the classes."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from real_diffs import load_corpus

    from graft_eval_pipeline.card.models import CardInputs
    from graft_eval_pipeline.evalset.sets.case_schema import EvalCase, dump_case

    texts = []
    for n, line in enumerate(load_corpus()):
        label = {
            "labeler": "bench",
            "labeledAt": "2026-10-15T00:00:00Z",
            "guideVersion": "lg-1",
            "risk": ("trivial", "logic", "sensitive")[n % 3],
            "outOfScope": [],
            "goal": "Release upgrade.",
            "keyBehaviorChanges": [],
            "shouldFlag": False,
            "confidence": "medium",
            "notes": "",
        }
        case = EvalCase.model_validate(
            {
                "schemaVersion": 1,
                "id": ID_MARK,
                "source": {"kind": "synthetic", "author": "bench", "createdAt": "2026-10-15"},
                "tags": ["real-diff"],
                "floorConfig": {"extraSensitiveGlobs": []},
                "inputs": CardInputs.model_validate_json(line).to_json_dict(),
                "labels": [label],
                "adjudicated": None,
                "fakeLlm": None,
            }
        )
        texts.append(dump_case(case))
    return texts


def build_real_set(root: Path, size: int, texts: list[str]) -> tuple[Path, float]:
    """A synthetic-kind set of `size` real-diff cases; returns it and its mean patch kB per case."""
    set_dir = _new_set(root, f"real-{size}")
    for n in range(size):
        text = texts[n % len(texts)]
        case_id = f"syn-r{n:05d}"
        (set_dir / "cases" / f"{case_id}.case.json").write_text(
            text.replace(f'"id": "{ID_MARK}"', f'"id": "{case_id}"', 1), encoding="utf-8"
        )
    full, rest = divmod(size, len(texts))
    per_cycle = [_patch_bytes(t) for t in texts]
    total = full * sum(per_cycle) + sum(per_cycle[:rest])
    return set_dir, total / size / 1000


def _patch_bytes(case_text: str) -> int:
    files = json.loads(case_text)["inputs"]["files"]
    return sum(len(f["patch"].encode("utf-8")) for f in files if f["patch"] is not None)


def child_run(set_dir: Path, out_dir: Path) -> None:
    """In a child process: import, then time evaluate and the report files; print JSON figures."""
    from graft_eval_pipeline.evalset.evaluate import Evaluation, evaluate_then
    from graft_eval_pipeline.evalset.report import load_thresholds, publish_run
    from graft_eval_pipeline.evalset.run import RunOptions
    from graft_eval_pipeline.evalset.scoring import GitInfo
    from graft_eval_pipeline.evalset.sets import THRESHOLDS_FILE, open_set

    cs = open_set(set_dir, None)
    options = RunOptions(set=cs, now=lambda: NOW, git=lambda: GitInfo(commit=None, dirty=None))
    started = time.perf_counter()

    def publish(evaluation: Evaluation) -> float:  # the synthetic-kind set keeps titles and cards
        ran = time.perf_counter()
        publish_run(
            cs,
            evaluation.report,
            thresholds=load_thresholds(THRESHOLDS_FILE),
            strict=False,
            out=out_dir,
            details=evaluation.details,
        )
        return ran

    ran = evaluate_then(options, None, publish)  # as `graft-eval run`: one collector policy throughout
    done = time.perf_counter()
    print(json.dumps({"run_s": ran - started, "total_s": done - started, "peak_mb": peak_rss_mb()}))


def timed_run(set_dir: Path) -> dict[str, float]:
    os.sync()  # the set was just written: flush it first, or the run races the write-back
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(set_dir), str(Path(out) / "run")],
            capture_output=True,
            text=True,
            cwd=REPO,
        )
    if done.returncode != 0:
        sys.exit(f"the timed run of {set_dir} failed:\n{done.stderr[-3000:]}")
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


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


def startup_seconds() -> tuple[float, float]:
    """Whole-process wall time of `graft-eval run --set eval/synthetic` (report to a temp folder).

    Best and median of STARTUP_RUNS runs, after one warm-up run.
    """
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ}
        env.pop("GRAFT_EVAL_KEY", None)
        for n in range(STARTUP_RUNS + 1):
            args = [str(VENV_BIN / "graft-eval"), "run", "--set", str(SYNTHETIC), "--out", f"{tmp}/{n}"]
            started = time.perf_counter()
            done = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True)
            elapsed = time.perf_counter() - started
            if done.returncode != 0:
                sys.exit(f"graft-eval run exited {done.returncode}:\n{done.stderr[-2000:]}")
            if n:
                times.append(elapsed)
    return min(times), statistics.median(times)


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


def report_sizes(name: str, results: dict[int, dict[str, float]], patch_kb: float | None = None) -> None:
    for size, fig in results.items():
        extra = f", {patch_kb * size / 1000 / fig['total_s']:5.1f} MB of patch/s" if patch_kb else ""
        print(
            f"{name} {size:>6} cases: {fig['total_s']:7.2f} s ({fig['run_s']:.2f} s evaluate), "
            f"{size / fig['total_s']:7.0f} cases/s{extra}, peak {fig['peak_mb']:5.0f} MB"
        )
    if len(results) == 2:
        small, large = sorted(results)
        print(
            f"{name} time ratio {large // 1000}k/{small // 1000}k: "
            f"{results[large]['total_s'] / results[small]['total_s']:.2f}"
        )


BEFORE_SCRIPT = """
import json, sys, time
from datetime import UTC, datetime
from pathlib import Path
from graft_eval_pipeline.evalset.evaluate import run_eval
from graft_eval_pipeline.evalset.run import RunOptions
from graft_eval_pipeline.evalset.scoring import GitInfo
from graft_eval_pipeline.evalset.sets import open_set
options = RunOptions(
    set=open_set(Path(sys.argv[1]), None),
    now=lambda: datetime(2026, 10, 15, tzinfo=UTC),
    git=lambda: GitInfo(commit=None, dirty=None),
)
started = time.perf_counter()
run_eval(options)
print(json.dumps({"run_s": time.perf_counter() - started}))
"""


def run_eval_seconds(set_dir: Path, code_dir: Path) -> float:
    """`run_eval` alone over the set, in a child process importing the package from `code_dir`.

    `code_dir` is a checkout of another commit, or this one: the like-for-like figure of a
    before/after pair. Both versions' `run_eval(RunOptions(set=..., now=..., git=...))` have this
    signature.
    """
    os.sync()
    done = subprocess.run(
        [sys.executable, "-c", BEFORE_SCRIPT, str(set_dir)],
        capture_output=True,
        text=True,
        cwd=code_dir,
        env={**os.environ, "PYTHONPATH": str(code_dir)},
    )
    if done.returncode != 0:
        sys.exit(f"run_eval in {code_dir} failed:\n{done.stderr[-3000:]}")
    seconds: float = json.loads(done.stdout.strip().splitlines()[-1])["run_s"]
    return seconds


def before_after(set_dir: Path, size: int, before: str, pairs: int) -> None:
    """Back-to-back pairs of `run_eval` on the same set.

    The commit `before` (checked out in a temporary git worktree), then this code; prints each pair
    and the speed-ups.
    """
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "before"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), before], cwd=REPO, check=True)
        try:
            ratios = []
            for _ in range(pairs):
                old, new = run_eval_seconds(set_dir, tree), run_eval_seconds(set_dir, REPO)
                ratios.append(old / new)
                print(
                    f"  run_eval on {size} real-diff cases: {before} {old:.2f} s ({size / old:.0f} cases/s), "
                    f"now {new:.2f} s ({size / new:.0f} cases/s): {old / new:.2f}x"
                )
            print(f"  speed-up over {before}: {min(ratios):.2f}-{max(ratios):.2f}x (target >= 2x)")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--skip-materialize", action="store_true")
    parser.add_argument("--only", choices=["generated", "real", "startup"], default=None)
    parser.add_argument(
        "--before",
        metavar="REV",
        default=None,
        help="also time run_eval of commit REV against this code on the largest real-diff set, in pairs",
    )
    parser.add_argument("--pairs", type=int, default=2, help="before/after pairs with --before")
    args = parser.parse_args()
    if args.child:
        child_run(*args.child)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "generated"):
            generated = {size: timed_run(build_set(Path(tmp), size)) for size in sizes}
            report_sizes("generated", generated)
            print("  targets: >= 1,500 cases/s")
        if args.only in (None, "real"):
            texts = real_case_texts()
            real: dict[int, dict[str, float]] = {}
            patch_kb = 0.0
            for size in sizes:
                set_dir, patch_kb = build_real_set(Path(tmp), size, texts)
                real[size] = timed_run(set_dir)
                if args.before is None or size != max(sizes):
                    shutil.rmtree(set_dir)
            print(f"real-diff set: {len(texts)} PRs cycled, mean {patch_kb:.1f} kB of patch per case")
            report_sizes("real-diff", real, patch_kb)
            print("  targets: peak < 500 MB at 10k, ratio 10k/1k <= 10.5, >= 2x the throughput before")
            if args.before is not None:
                before_after(Path(tmp) / f"real-{max(sizes)}", max(sizes), args.before, args.pairs)
    if args.only in (None, "startup"):
        best, median = startup_seconds()
        print(
            f"graft-eval run --set eval/synthetic (whole process): best {best:.2f} s, "
            f"median {median:.2f} s (target < 0.5)"
        )
    if args.only is None and not args.skip_materialize:
        print(f"synthetic dagster asset materialize: {timed_materialize():.1f} s (target < 20)")


if __name__ == "__main__":
    main()
