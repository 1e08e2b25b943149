#!/usr/bin/env bash
# One entry point for a fresh machine: creates .venv and installs the project on first use.
#   ./run.sh main-job   materialize the synthetic partition end to end and print the report summary
#   ./run.sh test       ruff, mypy and every test (both lanes: what CI runs)
#   ./run.sh test-fast  ruff, mypy and the default lane (the tests marked slow are skipped), spread
#                       over the cores by pytest-xdist (-n auto)
#   ./run.sh lock [--upgrade [NAME ...]]
#                       rewrite constraints.txt (the pinned versions) after a pyproject.toml change
# Every install takes its versions from constraints.txt, so a fresh clone gets what CI tested.
set -euo pipefail
cd "$(dirname "$0")"

if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "run.sh: needs python3 3.11 or newer on the PATH (found: $(python3 --version 2>&1 || echo none))" >&2
  exit 2
fi

if [ "${1:-}" = lock ]; then
  exec python3 tools/lockfile.py lock "${@:2}"
fi

venv=.venv
lock=constraints.txt
# Fast path: nothing to do while the install is newer than pyproject.toml and the lock.
if [ ! -x "$venv/bin/graft-eval" ] || [ ! -f "$venv/.installed" ] \
  || [ pyproject.toml -nt "$venv/.installed" ] || [ "$lock" -nt "$venv/.installed" ]; then
  python3 tools/lockfile.py check   # a lock made for other dependencies: exit 2, install nothing
  echo "run.sh: installing the project and its pinned dependencies into $venv/ (from $lock)" >&2
  rm -f "$venv/.installed"
  python3 -m venv "$venv"
  pip=("$venv/bin/python" -m pip --quiet --disable-pip-version-check)
  # pip and the build backend first, at their pinned versions; the editable build then uses them
  # (no build isolation, which would fetch the newest setuptools).
  mapfile -t build_requires < <(python3 tools/lockfile.py build-requires)
  "${pip[@]}" install -c "$lock" pip "${build_requires[@]}"
  "${pip[@]}" install -c "$lock" --no-build-isolation -e '.[dev]'
  touch "$venv/.installed"
fi
export PATH="$PWD/$venv/bin:$PATH"

case "${1:-}" in
  main-job)
    # The embedded default instance: SQLite under DAGSTER_HOME (default .dagster_home/).
    export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/.dagster_home}"
    mkdir -p "$DAGSTER_HOME"
    [ -f "$DAGSTER_HOME/dagster.yaml" ] || cp dagster.yaml "$DAGSTER_HOME/dagster.yaml"
    graft-eval sets sync
    dagster asset materialize -m graft_eval_pipeline.definitions \
      --select 'group:evaluation' --partition synthetic
    graft-eval summary --set eval/synthetic
    ;;
  test | test-fast)
    ruff check .
    ruff format --check .
    mypy graft_eval_pipeline graft_eval_pipeline_tests
    # graft_eval_pipeline_tests/conftest.py: --runslow adds the slow lane to the default one
    # The full lane runs in one process (its tests start processes, servers and browsers of
    # their own); the default lane in one worker per core, the modules that load the statistics
    # oracles kept on one worker (--dist loadgroup). Bytecode caches are written even where the
    # environment turns them off: without them every worker recompiles every module it imports.
    unset PYTHONDONTWRITEBYTECODE
    if [ "$1" = test ]; then pytest --runslow "${@:2}"; else pytest -n auto --dist loadgroup "${@:2}"; fi
    ;;
  *)
    echo "usage: ./run.sh main-job | test [pytest args] | test-fast [pytest args] | lock [--upgrade [NAME ...]]" >&2
    exit 2
    ;;
esac
