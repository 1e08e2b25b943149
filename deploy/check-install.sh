#!/usr/bin/env bash
# What can be checked of the image without a Docker engine (CI runs this): deploy/install.sh into
# a fresh venv, then the main job from that install, outside the source tree, on the shipped
# dagster.yaml; and the installed files hold no tests package.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$src/deploy/install.sh" "$work/venv" "$work/graft-eval"

export PATH="$work/venv/bin:$PATH" GRAFT_EVAL_REPO="$work/graft-eval" GRAFT_EVAL_DIR="$work/sets"
export DAGSTER_HOME="$work/dagster-home"
unset PYTHONPATH GRAFT_EVAL_KEY
mkdir -p "$DAGSTER_HOME" "$work/app"
cp "$src/dagster.yaml" "$DAGSTER_HOME/dagster.yaml"
cd "$work/app"   # nothing of the checkout on sys.path

python - "$src" <<'PY'
"""The package comes from the venv, not the checkout, and carries no tests."""
import sys
from importlib.metadata import distribution

import graft_eval_pipeline

src = sys.argv[1]
assert not graft_eval_pipeline.__file__.startswith(src), graft_eval_pipeline.__file__
files = [str(f) for f in distribution("graft-eval-pipeline").files or []]
assert "graft_eval_pipeline/definitions.py" in files, files[:5]
tests = [f for f in files if f.startswith("graft_eval_pipeline_tests")]
assert not tests, f"the installed package carries tests: {tests[:3]}"
print(f"check-install: {len(files)} files installed, no tests package", file=sys.stderr)
PY
graft-eval sets sync
dagster asset materialize -m graft_eval_pipeline.definitions --select 'group:evaluation' --partition synthetic
graft-eval summary --set "$GRAFT_EVAL_REPO/eval/synthetic"
ls "$GRAFT_EVAL_REPO/eval/synthetic/runs/"*/report.json >/dev/null
echo "check-install: the main job passed from the non-editable install" >&2
