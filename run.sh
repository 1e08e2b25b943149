#!/usr/bin/env bash
# One entry point for a fresh machine: creates .venv and installs the project on first use.
#   ./run.sh main-job   materialize the synthetic partition end to end and print the report summary
#   ./run.sh test       ruff, mypy and the test suite
set -euo pipefail
cd "$(dirname "$0")"

venv=.venv
if [ ! -x "$venv/bin/graft-eval" ] || [ pyproject.toml -nt "$venv/.installed" ]; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet -e '.[dev]'
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
  test)
    ruff check .
    ruff format --check .
    mypy graft_eval_pipeline graft_eval_pipeline_tests
    pytest "${@:2}"
    ;;
  *)
    echo "usage: ./run.sh main-job | test [pytest args]" >&2
    exit 2
    ;;
esac
