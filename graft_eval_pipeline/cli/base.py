"""What every command group shares.

The `cli` click group, the common options and the helpers that open a set the way every command
does.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from graft_eval_pipeline.evalset.sets import (
    CaseSet,
    EvalEnv,
    Holder,
    SetHold,
    holding,
    open_set,
    process_alive,
    this_process,
    to_terminal_safe,
)

if TYPE_CHECKING:
    import dagster as dg


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
        echo_warning(warning)
    return cs


def holder_liveness() -> Callable[[Holder], bool | None]:
    """Is a hold still in force?

    A Dagster run's, by the instance in $DAGSTER_HOME when there is one (loaded on the first such
    hold: Dagster takes a second to import); any other by its process.
    """
    instance: list[dg.DagsterInstance] = []

    def alive(holder: Holder) -> bool | None:
        if holder.run_id is None or not os.environ.get("DAGSTER_HOME"):
            return process_alive(holder)
        if not instance:
            import dagster as dg

            instance.append(dg.DagsterInstance.get())
        from graft_eval_pipeline.defs.isolation import run_liveness

        return run_liveness(instance[0])(holder)

    return alive


@contextlib.contextmanager
def writing(target: CaseSet | Path, command: str, no_wait: bool) -> Iterator[SetHold]:
    """Hold the set while `graft-eval <command>` writes into it, waiting for (or refusing) another writer.

    The target is an opened set, or a set folder (purge opens none). While another command or a
    Dagster run writes, wait (one line on stderr naming the holder), or with --no-wait exit 3.
    """
    folder, set_id = (target.dir, target.set_id) if isinstance(target, CaseSet) else (target, None)
    with holding(
        folder,
        this_process(f"graft-eval {command}"),
        wait=not no_wait,
        alive=holder_liveness(),
        say=lambda line: echo_error(line),
        set_id=set_id,
    ) as hold:
        yield hold


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
NO_WAIT_OPTION = click.option(
    "--no-wait",
    is_flag=True,
    help="Exit 3 instead of waiting when another command or a Dagster run is writing into the set.",
)
STRICT_OPTION = click.option(
    "--strict", is_flag=True, help="Refuse (exit 2) a pilot set whose folders or files are open to others."
)


def echo_safe(text: str, nl: bool = True) -> None:
    """Echo text built from files or API answers to stdout, terminal-safe.

    Reports, run ids, model names: an escape sequence in them shows as `[U+001B]`, it does not act.
    JSON output needs none: json.dumps escapes every control character.
    """
    click.echo(to_terminal_safe(text), nl=nl)


def echo_warning(text: str) -> None:
    """A warning on stderr, one line, terminal-safe like `echo_error`."""
    click.echo(to_terminal_safe(f"warning: {' '.join(text.split())}"), err=True)


def echo_error(text: str) -> None:
    """The one way an error reaches stderr.

    Terminal-safe (an escape sequence from a file name or a file shows as `[U+001B]`, it does not
    act), one line unless it is click's usage block.
    """
    click.echo(to_terminal_safe(text.rstrip("\n")), err=True)
