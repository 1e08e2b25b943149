"""Do two versions of the code make the same cards?

A check for changes that must not change a decision (speed work on the floor, prepare or the
reader).

Run: .venv/bin/python bench/check_cards.py REV [--size 2000]

Checks out commit REV in a temporary git worktree, builds a set of the first `--size` cases of
the real-commit corpus (bench/real_commits.py), and in one child process per version derives
each case's fake-mode card result (`fake_result`: floor, prepare, prompts, scripted replies,
input hash, usage) and the floor's `fired_by` (which path or text fired each rule). It prints
how many cases differ; each differing case is named by its id only. Exit 1 when any differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_commits import REPO, build_real_commit_set

CHILD = """
import hashlib, json, sys
from pathlib import Path
from graft_eval_pipeline.card.floor import compute_risk_floor
from graft_eval_pipeline.card.options import Models
from graft_eval_pipeline.evalset.run.harness import fake_result
from graft_eval_pipeline.evalset.sets import iter_cases, open_set
models = Models()
out = {}
for case in iter_cases(open_set(Path(sys.argv[1]), None)):
    result = fake_result(case, models, 60_000)
    floor = compute_risk_floor(case.inputs, case.floor_config.extra_sensitive_globs)
    text = result.model_dump_json(by_alias=True) + json.dumps(floor.fired_by, sort_keys=True)
    out[case.id] = hashlib.sha256(text.encode()).hexdigest()
print(json.dumps(out))
"""


def digests(set_dir: Path, code_dir: Path) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(set_dir)],
        capture_output=True,
        text=True,
        cwd=code_dir,
        env={**os.environ, "PYTHONPATH": str(code_dir)},
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"the card check in {code_dir} failed:\n{done.stderr[-3000:]}")
    found: dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("rev")
    parser.add_argument("--size", type=int, default=2_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "before"
        add = ["git", "worktree", "add", "--detach", "-q", str(tree), args.rev]
        subprocess.run(add, cwd=REPO, check=True)
        try:
            set_dir = build_real_commit_set(Path(tmp), args.size)
            old, new = digests(set_dir, tree), digests(set_dir, REPO)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False)
    differ = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
    combined = hashlib.sha256(json.dumps(new, sort_keys=True).encode()).hexdigest()[:16]
    print(f"{len(new)} cases of the real-commit corpus: {len(differ)} card results differ from {args.rev}")
    print(f"  digest of every card result now: {combined}")
    for case_id in differ[:20]:
        print(f"  differs: {case_id}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
