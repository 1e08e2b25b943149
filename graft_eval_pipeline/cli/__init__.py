"""graft-eval: the command line (spec section 7), a thin shell over `evalset/`.

Exit codes: 0 ok, 1 check failed, 2 usage or configuration error, 3 aborted.
One module per command group, in pipeline order: `sets` (set folders, show, purge, the journal,
Dagster partitions), `export` (export, rescan), `labeling`, `run` (run, ci, compare,
calibration) and `runs` (cases, view, history, summary: reading past runs); `base` holds the
click group and the shared options. Errors raise a `GraftEvalError` subclass (one per exit code)
and `main` turns it into one line on stderr and its exit code.
"""

from __future__ import annotations

import io
import os

import click

# pydantic looks for plugins in every installed distribution's entry points when it builds its
# first model (~25 ms of a 0.5 s start-up in this venv, which holds Dagster's); the project uses
# none. Set the variable yourself to keep plugins on.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

from graft_eval_pipeline.cli import export, labeling, run, runs, sets  # noqa: F401  (each registers its commands)
from graft_eval_pipeline.cli.base import cli, echo_error
from graft_eval_pipeline.evalset.sets import GraftEvalError

__all__ = ["cli", "main"]


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code instead of raising SystemExit (testable)."""
    try:
        cli.main(args=argv, prog_name="graft-eval", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.UsageError as exc:
        usage = io.StringIO()
        exc.show(file=usage)
        echo_error(usage.getvalue())
        return 2
    except click.Abort:
        echo_error("aborted")
        return 3
    except GraftEvalError as exc:
        echo_error(f"error: {' '.join(str(exc).split())}")
        return exc.exit_code
    except OSError as exc:  # a file system failure no evalset function mapped: one line, no traceback
        where = f" ({exc.filename})" if exc.filename else ""
        echo_error(f"error: {exc.strerror or exc}{where}: check the path, free space and permissions")
        return 2
    return 0
