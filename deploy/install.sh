#!/usr/bin/env bash
# Install graft-eval-pipeline the way the image does: into a venv, not editable, every version from
# constraints.txt, with a copy of eval/ beside it (what $GRAFT_EVAL_REPO names). deploy/Dockerfile
# runs this script and CI runs it too (deploy/check-install.sh), so the two cannot drift apart.
#
#   deploy/install.sh VENV EVAL_HOME [EXTRAS]
#     VENV       the venv to create (or reuse), e.g. /opt/venv
#     EVAL_HOME  the folder that receives eval/ (set GRAFT_EVAL_REPO to it), e.g. /opt/graft-eval
#     EXTRAS     the extras to install (default postgres,celery,k8s)
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: deploy/install.sh VENV EVAL_HOME [EXTRAS]" >&2
  exit 2
fi
src=$(cd "$(dirname "$0")/.." && pwd)
venv=$1
eval_home=$2
extras=${3:-postgres,celery,k8s}
lock="$src/constraints.txt"

python3 "$src/tools/lockfile.py" check   # a lock made for other dependencies: exit 2, install nothing
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
pip=("$venv/bin/python" -m pip --quiet --disable-pip-version-check)
mapfile -t build_requires < <(python3 "$src/tools/lockfile.py" build-requires)
"${pip[@]}" install -c "$lock" pip "${build_requires[@]}"

# The wheel is built from a copy of what it packs, so the build leaves nothing in the source tree.
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
cp -r "$src/pyproject.toml" "$src/README.md" "$src/graft_eval_pipeline" "$build/"
"${pip[@]}" wheel --no-deps --no-build-isolation -w "$build/dist" "$build"
wheels=("$build"/dist/*.whl)
"${pip[@]}" install -c "$lock" "${wheels[0]}[$extras]"
"$venv/bin/python" -m pip check

# eval/ without what runs leave in the synthetic set (gitignored: runs/, assets/, cache/).
mkdir -p "$eval_home"
rm -rf "$eval_home/eval"
cp -r "$src/eval" "$eval_home/eval"
rm -rf "$eval_home/eval/synthetic/runs" "$eval_home/eval/synthetic/assets" "$eval_home/eval/synthetic/cache"
find "$eval_home/eval" -name __pycache__ -prune -exec rm -rf {} +
echo "deploy/install.sh: installed ${wheels[0]##*/} [$extras] into $venv; eval/ in $eval_home (GRAFT_EVAL_REPO)" >&2
