"""Fake-mode harness benchmark: real commits, real-sized diffs, the generated set, start-up.

Throughput and memory on real commits, on real-sized diffs and on the generated set, the
whole-process start-up of `graft-eval run`, the synthetic `dagster asset materialize`, and (with
--before) this code against an older commit, round by round.

Run: .venv/bin/python bench/bench_harness.py [--only commits|generated|real|startup|memory]
     [--sizes 1000,10000] [--commit-sizes 1000,2000] [--skip-materialize]
     [--before REV [--rounds 5]]

Workloads and their targets (issues 16 and 27):
- real commits (`bench/real_commits.py`: the first 1,000 and 2,000 cases of the real-commit
  corpus, minified bundles and source maps included): >= 1,600 cases/s at 2,000 (whole process,
  CPU time);
- the generated set (the 30 synthetic cases cycled under new ids) at 1,000 and 10,000:
  >= 1,500 cases/s;
- real-sized diffs (bench/real_diffs.py, mean >= 30 kB of patch per case) at 1,000 and 10,000:
  peak resident memory < 500 MB at 10,000, time ratio 10k/1k <= 10.5;
- memory (`--only memory`): 2,000 and 16,000 real commits (the corpus cycled), each set with one
  170 MB case added: peak resident memory at 16,000 within 2x of 2,000;
- `graft-eval run --set eval/synthetic` < 0.5 s wall as a whole process; the materialize < 20 s.

Each timed run is a child process of its own (so its peak memory is its own), which imports the
code first and then times what `graft-eval run` does after parsing its flags: load and validate
every case, generate, score, build the report and write report.json, report.md and
cases.parquet (to a temporary folder). Each figure is printed with its CPU time (the machine is
shared: wall time moves with the other work on it, CPU time much less) and the load average.

`--before REV` checks out commit REV in a temporary git worktree and runs the whole process,
`python -m graft_eval_pipeline.cli run --set <set> --out <tmp>`, of REV and of this code in
alternating rounds on the 1,000 and 2,000 real commits and on 10,000 generated cases (the host's
load moves both alike), both trees byte-compiled first, and prints each round and the
min/median/max of the per-round ratios of CPU time (REV / now: above 1 is faster now) and of wall
time.

The materialize runs the venv's `graft-eval sets sync` and `dagster` as subprocesses against a
temporary DAGSTER_HOME (and an empty GRAFT_EVAL_DIR, so no pilot set is touched); only the
materialize is timed. Afterwards eval/synthetic is left as it was: the run folder it wrote is
removed, and the asset files and cache/ (the stored set scan) are put back as they were (new ones
removed, rewritten ones restored).
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
sys.path.insert(0, str(REPO / "bench"))  # real_diffs, real_commits
SYNTHETIC = REPO / "eval" / "synthetic"
SIZES = (1_000, 10_000)
COMMIT_SIZES = (1_000, 2_000)
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
        label: dict[str, object] = {
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
    started, cpu_started = time.perf_counter(), time.process_time()

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
    cpu = time.process_time() - cpu_started
    print(
        json.dumps(
            {"run_s": ran - started, "total_s": done - started, "cpu_s": cpu, "peak_mb": peak_rss_mb()}
        )
    )


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
    """Peak resident set size of this process since it started its program.

    On Linux its VmHWM: `ru_maxrss` is not the program's own there, since a child started by
    vfork takes its parent's peak at exec (the kernel keeps the larger of the two), and this
    benchmark's parent holds the corpus and builds the 170 MB case: every memory figure of a
    child read the parent's ~730 MB. Elsewhere `ru_maxrss` (KiB; bytes on macOS).
    """
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
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
    runs = SYNTHETIC / "runs"
    runs_before = entries(runs)
    # The materialize rewrites the asset files and the stored set scan (cache/): keep them.
    kept = [SYNTHETIC / "assets", SYNTHETIC / "cache"]
    before = {folder: (entries(folder), folder.is_dir()) for folder in kept}
    with tempfile.TemporaryDirectory() as tmp:
        home, eval_dir = Path(tmp, "dagster_home"), Path(tmp, "eval")
        home.mkdir()
        eval_dir.mkdir()
        shutil.copy2(REPO / "dagster.yaml", home / "dagster.yaml")
        for folder in kept:
            if folder.is_dir():
                shutil.copytree(folder, Path(tmp, "saved", folder.name))
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
            for folder, (paths, existed) in before.items():
                saved = Path(tmp, "saved", folder.name)
                for path in entries(folder):
                    remove(path)
                for path in paths:
                    if (saved / path.name).is_dir():
                        shutil.copytree(saved / path.name, path)
                    else:
                        shutil.copy2(saved / path.name, path)
                if not existed and folder.is_dir():
                    folder.rmdir()


def report_sizes(
    name: str, results: dict[int, dict[str, float]], patch_kb: float | None = None, target: str = ""
) -> None:
    for size, fig in results.items():
        extra = f", {patch_kb * size / 1000 / fig['total_s']:5.1f} MB of patch/s" if patch_kb else ""
        print(
            f"{name} {size:>6} cases: {fig['total_s']:7.2f} s ({fig['run_s']:.2f} s evaluate), "
            f"{size / fig['total_s']:7.0f} cases/s{extra} (CPU {fig['cpu_s']:.2f} s: "
            f"{size / fig['cpu_s']:.0f} cases/s), peak {fig['peak_mb']:5.0f} MB{target}"
        )
    if len(results) == 2:
        small, large = sorted(results)
        print(
            f"{name} time ratio {large // 1000}k/{small // 1000}k: "
            f"{results[large]['total_s'] / results[small]['total_s']:.2f}"
        )


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f})"


def whole_process(set_dir: Path, code_dir: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of `graft-eval run --set set_dir` as one process.

    The package is imported from `code_dir` (a checkout of another commit, or this one).
    """
    os.sync()
    with tempfile.TemporaryDirectory() as out, open(Path(out) / "stderr", "w+b") as errors:
        env = {**os.environ, "PYTHONPATH": str(code_dir)}
        env.pop("GRAFT_EVAL_KEY", None)
        args = [sys.executable, "-m", "graft_eval_pipeline.cli", "run", "--set", str(set_dir)]
        started = time.perf_counter()
        child = subprocess.Popen(
            [*args, "--out", f"{out}/r"], cwd=code_dir, env=env, stdout=subprocess.DEVNULL, stderr=errors
        )
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        if status != 0:
            errors.seek(0)
            sys.exit(f"graft-eval run in {code_dir} on {set_dir} failed:\n{errors.read()[-3000:].decode()}")
    return wall, usage.ru_utime + usage.ru_stime


def spread(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


def before_after(sets: list[tuple[str, Path, int]], before: str, rounds: int) -> None:
    """Whole-process runs of commit `before` and of this code in alternating rounds on each set.

    `before` is checked out in a temporary git worktree; prints each round and the
    min/median/max of the ratios.
    """
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "before"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), before], cwd=REPO, check=True)
        try:
            # Both trees byte-compiled, as an install is: with PYTHONDONTWRITEBYTECODE set (as on some
            # hosts) a tree without compiled files pays about 0.1 s of CPU a process to compile its
            # modules, and one with them left by a test run does not (bench_dagster.py does the same).
            for root in (tree, REPO):
                subprocess.run(
                    [sys.executable, "-m", "compileall", "-q", str(root / "graft_eval_pipeline")], check=True
                )
            for name, set_dir, size in sets:
                cpu_ratios, wall_ratios, cpu_now = [], [], []
                for n in range(rounds):
                    old_wall, old_cpu = whole_process(set_dir, tree)
                    new_wall, new_cpu = whole_process(set_dir, REPO)
                    cpu_ratios.append(old_cpu / new_cpu)
                    wall_ratios.append(old_wall / new_wall)
                    cpu_now.append(size / new_cpu)
                    print(
                        f"  {name} {size}, round {n + 1}: {before} {old_wall:.2f} s wall / "
                        f"{old_cpu:.2f} s CPU "
                        f"({size / old_cpu:.0f} cases/s), now {new_wall:.2f} s / {new_cpu:.2f} s "
                        f"({size / new_cpu:.0f} cases/s): {old_cpu / new_cpu:.2f}x CPU; {load()}"
                    )
                print(
                    f"{name} {size} whole process against {before}, min / median / max of {rounds} rounds: "
                    f"CPU {spread(cpu_ratios)}x, wall {spread(wall_ratios)}x; "
                    f"now {spread(cpu_now)} cases/s of CPU"
                )
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False)


BIG_CASE_MB = 170


def add_big_case(set_dir: Path) -> None:
    """One case of about BIG_CASE_MB MB, added under its own id.

    A real commit whose first file carries a minified-style patch of that size (long lines of
    code-like text).
    """
    from real_commits import corpus_lines, labelled

    document = json.loads(corpus_lines()[0])
    line = "+" + "var a=function(b){return b&&b.c?d(b):e};" * 2_000
    lines = (BIG_CASE_MB * 1_000_000) // len(line)
    patch = "@@ -0,0 +1," + str(lines) + " @@\n" + "\n".join([line] * lines)
    files = document["inputs"]["files"]
    files[0] = {**files[0], "patch": patch, "additions": lines, "deletions": 0, "status": "added"}
    document["id"] = "syn-99999-big-case"
    text = json.dumps(labelled(document, 0), indent=2) + "\n"
    (set_dir / "cases" / f"{document['id']}.case.json").write_text(text, encoding="utf-8")


def memory(root: Path) -> None:
    """Peak memory at 2,000 and 16,000 real commits, each set with one 170 MB case."""
    from real_commits import build_real_commit_set, corpus_lines

    lines = corpus_lines()
    peaks = {}
    for size in (2_000, 16_000):
        set_dir = build_real_commit_set(root, size, lines, name=f"memory-{size}")
        add_big_case(set_dir)
        fig = timed_run(set_dir)
        peaks[size] = fig["peak_mb"]
        print(
            f"memory: {size} real commits + one {BIG_CASE_MB} MB case: peak {fig['peak_mb']:.0f} MB, "
            f"{fig['total_s']:.1f} s (CPU {fig['cpu_s']:.1f} s); {load()}"
        )
        shutil.rmtree(set_dir)
    print(f"memory: 16k / 2k peak {peaks[16_000] / peaks[2_000]:.2f} (target <= 2)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="generated and real-diff sizes")
    parser.add_argument("--commit-sizes", default=",".join(map(str, COMMIT_SIZES)), help="real-commit sizes")
    parser.add_argument("--skip-materialize", action="store_true")
    parser.add_argument("--only", choices=["commits", "generated", "real", "startup", "memory"], default=None)
    parser.add_argument(
        "--before",
        metavar="REV",
        default=None,
        help="also run commit REV against this code, whole process, in alternating rounds",
    )
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each set with --before")
    args = parser.parse_args()
    if args.child:
        child_run(*args.child)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    commit_sizes = [int(s) for s in args.commit_sizes.split(",")]
    compared: list[tuple[str, Path, int]] = []
    print(load())
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "commits"):
            from real_commits import build_real_commit_set, corpus_lines

            lines = corpus_lines()
            commits: dict[int, dict[str, float]] = {}
            for size in commit_sizes:
                set_dir = build_real_commit_set(Path(tmp), size, lines)
                commits[size] = timed_run(set_dir)
                compared.append(("real commits", set_dir, size))
            report_sizes("real commits", commits, target=" (target >= 1,600 cases/s at 2,000)")
        if args.only in (None, "generated"):
            generated = {}
            for size in sizes:
                set_dir = build_set(Path(tmp), size)
                generated[size] = timed_run(set_dir)
                if size == max(sizes):
                    compared.append(("generated", set_dir, size))
            report_sizes("generated", generated, target=" (target >= 1,500 cases/s)")
        if args.only in (None, "real"):
            texts = real_case_texts()
            real: dict[int, dict[str, float]] = {}
            patch_kb = 0.0
            for size in sizes:
                set_dir, patch_kb = build_real_set(Path(tmp), size, texts)
                real[size] = timed_run(set_dir)
                shutil.rmtree(set_dir)
            print(f"real-diff set: {len(texts)} PRs cycled, mean {patch_kb:.1f} kB of patch per case")
            report_sizes("real-diff", real, patch_kb)
            print("  targets: peak < 500 MB at 10k, ratio 10k/1k <= 10.5")
        if args.only == "memory":
            memory(Path(tmp))
        if args.before is not None and compared:
            before_after(compared, args.before, args.rounds)
    if args.only in (None, "startup"):
        best, median = startup_seconds()
        print(
            f"graft-eval run --set eval/synthetic (whole process): best {best:.2f} s, "
            f"median {median:.2f} s (target < 0.5)"
        )
    if args.only is None and not args.skip_materialize:
        print(f"synthetic dagster asset materialize: {timed_materialize():.1f} s (target < 20)")
    print(load())


if __name__ == "__main__":
    main()
