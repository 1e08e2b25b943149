"""What every command group shares: the `cli` click group, the common options and the helpers
that open a set the way every command does."""

from __future__ import annotations

import os
from pathlib import Path

import click

from graft_eval_pipeline.evalset.sets import (
    CaseSet,
    EvalEnv,
    open_set,
    to_terminal_safe,
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """Offline evaluation set for Graft's intent-card engine."""


def eval_env() -> EvalEnv:
    return EvalEnv.from_environ(os.environ)


def open_case_set(folder: Path, strict: bool = False) -> CaseSet:
    """Open a set; a pilot set needs GRAFT_EVAL_KEY (exit 2 with a clear message without it).

    Warnings from opening it (loose modes) go to stderr; `strict` refuses the set instead (exit 2).
    """
    cs = open_set(folder, eval_env().optional_key(), strict=strict)
    for warning in cs.warnings:
        click.echo(f"warning: {warning}", err=True)
    return cs


def comma_list(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


SET_OPTION = click.option(
    "--set", "set_dir", required=True, type=click.Path(path_type=Path), help="Case set folder."
)
RUNS_SET_OPTION = click.option(
    "--set",
    "set_dir",
    default=None,
    type=click.Path(path_type=Path),
    help="Case set whose runs/ holds the ids.",
)
STRICT_OPTION = click.option(
    "--strict", is_flag=True, help="Refuse (exit 2) a pilot set whose folders or files are open to others."
)


def echo_error(text: str) -> None:
    """The one way an error reaches stderr: terminal-safe (an escape sequence from a file name or
    a file shows as `[U+001B]`, it does not act), one line unless it is click's usage block."""
    click.echo(to_terminal_safe(text.rstrip("\n")), err=True)
