"""The Dagster path against the CLI on the same real-commit sets.

Whole-process wall and CPU time of `dagster asset materialize --select group:evaluation
--partition <set>` and of `graft-eval run --set <set>`, in alternating rounds, at 10, 1,000 and
5,000 cases.

Run: .venv/bin/python bench/bench_dagster.py [--sizes 10,1000,5000] [--generated 5000] [--rounds 2]

Targets (issue 27): the materialize within 1.5x of the CLI at 5,000 cases, and a fixed cost
(the intercept of the materialize's CPU time between the smallest and the largest real-commit
set) under 1.5 s. The per-case cost of each path is the slope between those two sets. Peak memory
of each process is printed beside it; each line names its target and whether it is met. Beside
them, Dagster's own floor: the same command on a definitions module of one partitioned asset that
does nothing, with the same instance and the in-process executor (what no pipeline of assets can
go below on this machine).

The sets are the real-commit corpus (bench/real_commits.py; 5,000 cycles its 2,000 cases),
labelled, and beside them the generated set (the 30 synthetic cases cycled, bench_harness.py's
`build_set`), in a temporary GRAFT_EVAL_DIR with a temporary DAGSTER_HOME (the repository's
dagster.yaml: SQLite storage, the in-process executor). The synthetic-kind sets are held to the
synthetic thresholds and baseline, which they fail: the materialize then exits 1 from its
blocking checks after every step has run, which counts as done; any other failure ends the bench.
The first round of a set has no earlier report to compare with; later rounds run the comparison
against the previous one, as a nightly re-run does.

The package is byte-compiled first: with PYTHONDONTWRITEBYTECODE set (as on some hosts) every
process would otherwise compile each of its modules from source, which the Dagster path (more
modules) pays more for than the CLI.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_harness import build_set
from real_commits import REPO, build_real_commit_set, corpus_lines

VENV_BIN = Path(sys.executable).parent
CHECKS_FAILED = "DagsterAssetCheckFailedError"


def timed(args: list[str], env: dict[str, str], *, checks_may_fail: bool) -> tuple[float, float, float]:
    """(wall s, CPU s, peak MB) of one process; a failure other than the blocking checks ends the bench."""
    with tempfile.TemporaryFile() as output:
        started = time.perf_counter()
        child = subprocess.Popen(args, cwd=REPO, env=env, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        output.seek(0)
        text = output.read().decode(errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code != 0 and not (checks_may_fail and code == 1 and CHECKS_FAILED in text and "STEP_FAILURE" in text):
        sys.exit(f"{' '.join(args[:3])} exited {code}:\n{text[-3000:]}")
    if checks_may_fail and text.count("STEP_FAILURE") > 1:
        sys.exit(f"more than the report's checks failed:\n{text[-3000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


FLOOR_DEFS = """
import dagster as dg

@dg.asset(partitions_def=dg.StaticPartitionsDefinition(["a"]))
def nothing() -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"n": 1})

defs = dg.Definitions(assets=[nothing], executor=dg.in_process_executor)
"""


def dagster_floor(tmp: str, env: dict[str, str], rounds: int) -> list[float]:
    """CPU seconds of `dagster asset materialize` of one asset that does nothing, per round."""
    module = Path(tmp, "floor_defs.py")
    module.write_text(FLOOR_DEFS, encoding="utf-8")
    args = [str(VENV_BIN / "dagster"), "asset", "materialize", "-f", str(module), "--select", "nothing"]
    return [timed([*args, "--partition", "a"], env, checks_may_fail=False)[1] for _ in range(rounds)]


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10,1000,5000")
    parser.add_argument("--generated", default="5000", help="generated-set sizes ('' for none)")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    generated = [int(s) for s in args.generated.split(",") if s]
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "graft_eval_pipeline")], check=True)
    print(load())
    with tempfile.TemporaryDirectory() as tmp:
        home, eval_dir = Path(tmp, "dagster_home"), Path(tmp, "eval")
        home.mkdir()
        eval_dir.mkdir()
        shutil.copy2(REPO / "dagster.yaml", home / "dagster.yaml")
        env = {**os.environ, "DAGSTER_HOME": str(home), "GRAFT_EVAL_DIR": str(eval_dir)}
        env.pop("GRAFT_EVAL_KEY", None)
        env.pop("GRAFT_EVAL_EXECUTOR", None)
        lines = corpus_lines()
        for size in sizes:
            build_real_commit_set(eval_dir, size, lines)
        del lines
        for size in generated:
            build_set(eval_dir, size)  # bench-<size>
        subprocess.run([str(VENV_BIN / "graft-eval"), "sets", "sync"], cwd=REPO, env=env, check=True)
        figures: dict[int, dict[str, list[tuple[float, float, float]]]] = {}
        for name, size in [*((f"commits-{n}", n) for n in sizes), *((f"bench-{n}", n) for n in generated)]:
            what = f"{size} {'real commits' if name.startswith('commits') else 'generated cases'}"
            dagster = [
                str(VENV_BIN / "dagster"),
                "asset",
                "materialize",
                "-m",
                "graft_eval_pipeline.definitions",
            ]
            dagster += ["--select", "group:evaluation", "--partition", name]
            cli = [str(VENV_BIN / "graft-eval"), "run", "--set", str(eval_dir / name), "--out", f"{tmp}/out"]
            runs: dict[str, list[tuple[float, float, float]]] = {"dagster": [], "cli": []}
            for n in range(args.rounds):
                runs["dagster"].append(timed(dagster, env, checks_may_fail=True))
                shutil.rmtree(f"{tmp}/out", ignore_errors=True)
                runs["cli"].append(timed(cli, env, checks_may_fail=False))
                (d_wall, d_cpu, d_mb), (c_wall, c_cpu, c_mb) = runs["dagster"][-1], runs["cli"][-1]
                print(
                    f"  {what}, round {n + 1}: dagster {d_wall:.2f} s wall / {d_cpu:.2f} s CPU, "
                    f"{d_mb:.0f} MB; cli {c_wall:.2f} s / {c_cpu:.2f} s, {c_mb:.0f} MB; "
                    f"dagster/cli CPU {d_cpu / c_cpu:.2f}x, wall {d_wall / c_wall:.2f}x; {load()}"
                )
            if name.startswith("commits"):
                figures[size] = runs
            ratios = [d[1] / c[1] for d, c in zip(runs["dagster"], runs["cli"], strict=True)]
            walls = [d[0] / c[0] for d, c in zip(runs["dagster"], runs["cli"], strict=True)]
            median = statistics.median(ratios)
            target = f" (target <= 1.5 at 5,000: {verdict(median <= 1.5)})" if size >= 5_000 else ""
            print(
                f"{what}: dagster/cli CPU {min(ratios):.2f} / {median:.2f} / "
                f"{max(ratios):.2f}x (min / median / max), "
                f"wall median {statistics.median(walls):.2f}x{target}"
            )
        floor = statistics.median(dagster_floor(tmp, env, max(args.rounds, 2)))
        print(f"dagster's own floor (one asset that does nothing): {floor:.2f} s CPU")
        small, large = min(sizes), max(sizes)
        if large > small:
            for path in ("dagster", "cli"):
                low = statistics.median(r[1] for r in figures[small][path])
                high = statistics.median(r[1] for r in figures[large][path])
                slope = (high - low) / (large - small) * 1000
                fixed = low - slope * small / 1000
                target = f" (target < 1.5 s: {verdict(fixed < 1.5)})" if path == "dagster" else ""
                print(f"{path} on real commits: fixed {fixed:.2f} s CPU{target} + {slope:.2f} ms CPU a case")
    print(load())


if __name__ == "__main__":
    main()
