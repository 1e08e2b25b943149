"""graft-eval: the command line (spec section 7), a thin shell over `evalset/`.

Exit codes: 0 ok, 1 check failed, 2 usage or configuration error, 3 aborted.
Each command group lives in a small block below; errors raise `EvalError` subclasses and
`main` turns them into one line on stderr and the exit code.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from graft_eval_pipeline.evalset.errors import EvalError

REPO_ROOT = Path(__file__).resolve().parent.parent


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """Offline evaluation set for Graft's intent-card engine."""


# --- schema -------------------------------------------------------------------------------


@cli.command()
@click.option("--write", is_flag=True, help="Write eval/schema/*.json instead of printing them.")
def schema(write: bool) -> None:
    """Print or write the committed JSON Schemas."""
    from graft_eval_pipeline.evalset.json_schemas import render_schemas

    for name, text in render_schemas().items():
        if write:
            path = REPO_ROOT / "eval" / "schema" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            click.echo(f"wrote eval/schema/{name}")
        else:
            click.echo(text, nl=False)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code instead of raising SystemExit (testable)."""
    try:
        cli.main(args=argv, prog_name="graft-eval", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.UsageError as exc:
        exc.show()
        return 2
    except click.Abort:
        click.echo("aborted", err=True)
        return 3
    except EvalError as exc:
        click.echo(f"error: {exc}", err=True)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
