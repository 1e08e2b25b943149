"""graft-eval: the command line (spec section 7), a thin shell over `evalset/`.

Exit codes: 0 ok, 1 check failed, 2 usage or configuration error, 3 aborted.
Each command group lives in a small block below; errors raise `EvalError` subclasses and
`main` turns them into one line on stderr and the exit code.
"""

from __future__ import annotations

import getpass
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import click

from graft_eval_pipeline.card.result import CardResult
from graft_eval_pipeline.evalset.case_schema import EvalCase, FloorConfig, gold, needs_adjudication
from graft_eval_pipeline.evalset.crypto import generate_key
from graft_eval_pipeline.evalset.env import EvalEnv
from graft_eval_pipeline.evalset.errors import CheckFailed, EvalError
from graft_eval_pipeline.evalset.store import (
    PURGE_LOG,
    CaseSet,
    create_set,
    list_case_ids,
    open_set,
    purge_set,
    read_case,
)
from graft_eval_pipeline.evalset.terminal import render_case

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


# --- case sets: keygen, init, validate, show, purge (spec E4-E9, E24) ---------------------


def _eval_env() -> EvalEnv:
    return EvalEnv.from_environ(os.environ)


def _open_case_set(folder: Path) -> CaseSet:
    """Open a set; a pilot set needs GRAFT_EVAL_KEY (exit 2 with a clear message without it)."""
    return open_set(folder, _eval_env().optional_key())


def _comma_list(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def _operator() -> str:
    """Who ran a purge, for the log: the login name, never an e-mail."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


SET_OPTION = click.option(
    "--set", "set_dir", required=True, type=click.Path(path_type=Path), help="Case set folder."
)


@cli.command()
def keygen() -> None:
    """Print a new GRAFT_EVAL_KEY (base64 of 32 random bytes)."""
    click.echo(generate_key())
    click.echo("store it in the team password manager; never in .env or the repository", err=True)


@cli.command()
@SET_OPTION
@click.option("--kind", type=click.Choice(["pilot", "synthetic"]), required=True)
@click.option("--consent-ref", default=None, help="Pilot agreement reference (required for pilot sets).")
@click.option("--sensitive-paths", default=None, help="Comma-separated extra sensitive globs.")
@click.option("--description", default="")
@click.option("--set-id", default=None, help="Set id (default: the folder name).")
def init(
    set_dir: Path,
    kind: Literal["pilot", "synthetic"],
    consent_ref: str | None,
    sensitive_paths: str | None,
    description: str,
    set_id: str | None,
) -> None:
    """Create a case set: set.json and cases/ (a pilot set outside any git tree, encrypted)."""
    env = _eval_env()
    cs = create_set(
        set_dir,
        set_id=set_id or set_dir.resolve().name,
        kind=kind,
        description=description,
        consent_ref=consent_ref,
        default_floor_config=FloorConfig(extra_sensitive_globs=_comma_list(sensitive_paths)),
        key=env.key() if kind == "pilot" else None,
        now=datetime.now(UTC),
    )
    sealed = f", encrypted with key {cs.meta.key_id}" if cs.is_pilot else ", plaintext"
    click.echo(f"created {kind} set {cs.set_id} in {set_dir}{sealed}")


@cli.command()
@SET_OPTION
def validate(set_dir: Path) -> None:
    """Check the schema of (and decrypt) every case; print counts."""
    cs = _open_case_set(set_dir)
    ids = list_case_ids(cs)
    cases, invalid = [], 0
    for case_id in ids:
        try:
            cases.append(read_case(cs, case_id))
        except EvalError as err:
            invalid += 1
            click.echo(f"invalid: {err}", err=True)
    labelled = sum(1 for c in cases if c.labels or c.adjudicated is not None)
    with_gold = sum(1 for c in cases if gold(c) is not None)
    adjudication = sum(1 for c in cases if needs_adjudication(c))
    click.echo(
        f"set {cs.set_id}: {len(ids)} cases, {labelled} labelled, {with_gold} gold, "
        f"{adjudication} need adjudication, {invalid} invalid"
    )
    if invalid:
        raise CheckFailed(f"{invalid} of {len(ids)} cases failed validation: fix or re-export them")


def _cached_result(cs: CaseSet, case: EvalCase) -> CardResult | None:
    """Latest cached live result of the case; the result cache (spec E20) is not built yet."""
    return None


@cli.command()
@SET_OPTION
@click.option("--case", "case_id", required=True)
@click.option("--with-result", is_flag=True, help="Add the latest cached card result and the gold label.")
def show(set_dir: Path, case_id: str, with_result: bool) -> None:
    """Print one case for a human, terminal-safe (E24)."""
    cs = _open_case_set(set_dir)
    case = read_case(cs, case_id)
    cached = _cached_result(cs, case) if with_result else None
    click.echo(render_case(case, result=cached, gold=gold(case) if with_result else None), nl=False)
    if with_result and cached is None:
        click.echo("\nno cached result")


@cli.command()
@SET_OPTION
@click.option("--confirm", required=True, help="The set id, typed again.")
def purge(set_dir: Path, confirm: str) -> None:
    """Delete a pilot set folder and log the deletion (E7); needs no key."""
    env = _eval_env()
    count = purge_set(set_dir, confirm=confirm, by=_operator(), now=datetime.now(UTC), eval_root=env.eval_dir)
    click.echo(f"purged set {confirm}: {count} cases deleted; logged in {env.eval_dir / PURGE_LOG}")
    click.echo("now delete any other copies (backups, synced folders, other machines)")


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
