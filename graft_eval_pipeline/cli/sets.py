"""Set folders and what is in them.

Schema, keygen, init, validate, show, purge, `sets journal` and `sets sync` (one Dagster partition
per set).
"""

from __future__ import annotations

import contextlib
import getpass
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import click

from graft_eval_pipeline.card import CardResult
from graft_eval_pipeline.cli.base import (
    NO_WAIT_OPTION,
    SET_OPTION,
    STRICT_OPTION,
    cli,
    comma_list,
    echo_error,
    eval_env,
    open_case_set,
    writing,
)
from graft_eval_pipeline.evalset.report import (
    render_schemas,
)
from graft_eval_pipeline.evalset.run import cached_result, fake_result, generate_options
from graft_eval_pipeline.evalset.sets import (
    PURGE_LOG,
    SCHEMA_DIR,
    SET_FILE,
    CaseSet,
    CheckFailed,
    EvalCase,
    EvalError,
    FloorConfig,
    accept_current_state,
    atomic_write,
    create_set,
    generate_key,
    gold,
    label_counts,
    list_case_ids,
    purge_set,
    read_case,
    render_case,
)


def _operator() -> str:
    """Who ran a purge, for the log: the login name, never an e-mail."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


# --- schema -------------------------------------------------------------------------------


@cli.command()
@click.option("--write", is_flag=True, help="Write eval/schema/*.json instead of printing them.")
def schema(write: bool) -> None:
    """Print or write the committed JSON Schemas."""
    for name, text in render_schemas().items():
        if write:
            path = SCHEMA_DIR / name
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, text.encode("utf-8"), 0o644)
            click.echo(f"wrote eval/schema/{name}")
        else:
            click.echo(text, nl=False)


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
    env = eval_env()
    cs = create_set(
        set_dir,
        set_id=set_id or set_dir.resolve().name,
        kind=kind,
        description=description,
        consent_ref=consent_ref,
        default_floor_config=FloorConfig(extra_sensitive_globs=comma_list(sensitive_paths)),
        key=env.key() if kind == "pilot" else None,
        now=datetime.now(UTC),
    )
    sealed = f", encrypted with key {cs.meta.key_id}" if cs.is_pilot else ", plaintext"
    click.echo(f"created {kind} set {cs.set_id} in {set_dir}{sealed}")


@cli.command()
@SET_OPTION
@STRICT_OPTION
def validate(set_dir: Path, strict: bool) -> None:
    """Check the schema of (and decrypt) every case; print counts and loose modes."""
    cs = open_case_set(set_dir, strict)
    missing: list[EvalError] = []
    ids = list_case_ids(cs, on_missing=missing.append)  # every deleted case listed, not the first
    for err in missing:
        echo_error(f"invalid: {' '.join(str(err).split())}")
    cases, invalid = [], len(missing)
    for case_id in ids:
        try:
            cases.append(read_case(cs, case_id))
        except EvalError as err:
            invalid += 1
            echo_error(f"invalid: {' '.join(str(err).split())}")
    counts = label_counts(cases)
    click.echo(
        f"set {cs.set_id}: {len(ids) + len(missing)} cases, {counts.labeled} labeled, {counts.gold} gold, "
        f"{counts.needs_adjudication} need adjudication, {invalid} invalid"
        + (", modes too open (see the warning)" if cs.warnings else "")
    )
    if invalid:
        total = len(ids) + len(missing)
        raise CheckFailed(f"{invalid} of {total} cases failed validation: fix or re-export them")


LIVE_RESULT_LABEL = "cached live card result (current prompts and models)"
FAKE_RESULT_LABEL = "fake card result (the fake model run again: the case's script, or the null model)"


def _card_result(cs: CaseSet, case: EvalCase) -> tuple[CardResult, str]:
    """The cached live card under the current prompts and models when there is one.

    Otherwise the fake run's card, derived again (deterministic, no call, nothing written).
    """
    env = eval_env()
    models = env.models()
    cached = cached_result(cs, case.inputs, generate_options(case, models, env.timeout_ms))
    if cached is not None:
        return cached, LIVE_RESULT_LABEL
    return fake_result(case, models, env.timeout_ms), FAKE_RESULT_LABEL


@cli.command()
@SET_OPTION
@click.option("--case", "case_id", required=True)
@click.option(
    "--with-result",
    is_flag=True,
    help="Add the card (the cached live one, else the fake model's) and the gold label.",
)
@STRICT_OPTION
def show(set_dir: Path, case_id: str, with_result: bool, strict: bool) -> None:
    """Print one case for a human, terminal-safe."""
    cs = open_case_set(set_dir, strict)
    case = read_case(cs, case_id)
    if not with_result:
        click.echo(render_case(case), nl=False)
        return
    result, label = _card_result(cs, case)
    click.echo(render_case(case, result=result, gold=gold(case), result_label=label), nl=False)
    if label == FAKE_RESULT_LABEL:
        click.echo("\nnote: the card above is the fake model's, derived again; no cached result")


@cli.command()
@SET_OPTION
@click.option("--confirm", required=True, help="The set id, typed again.")
@NO_WAIT_OPTION
def purge(set_dir: Path, confirm: str, no_wait: bool) -> None:
    """Delete a pilot set folder and log the deletion; needs no key.

    Waits while another command or a Dagster run writes into the set (a purge mid-run would leave
    the run writing nowhere).
    """
    env = eval_env()
    # A folder without set.json is gone already (purge then only finishes an interrupted purge).
    with writing(set_dir, "purge", no_wait) if (set_dir / SET_FILE).is_file() else contextlib.nullcontext():
        done = purge_set(
            set_dir, confirm=confirm, by=_operator(), now=datetime.now(UTC), eval_root=env.eval_dir
        )
    if done.finished:
        click.echo(f"finished and logged {len(done.finished)} interrupted purge(s)")
    if done.case_count is None:
        click.echo(f"set {confirm} was already purged and logged; its leftover files are now deleted")
    else:
        click.echo(
            f"purged set {confirm}: {done.case_count} cases deleted and nothing of its folder is left; "
            f"logged in {env.eval_dir / PURGE_LOG}"
        )
    click.echo("now delete any other copies (backups, synced folders, other machines)")


# --- Dagster partitions and the set's journal ----------------------------------------------


@cli.group()
def sets() -> None:
    """Case sets as partitions of the Dagster instance in $DAGSTER_HOME, and a set's journal."""


@sets.command("journal")
@SET_OPTION
@NO_WAIT_OPTION
def sets_journal(set_dir: Path, no_wait: bool) -> None:
    """Record every sealed file of a pilot set as its current version (a new journal.enc).

    Once for a set made before graft-eval kept a journal, or to accept a change made by hand. Any
    older copy of a file put back before this is accepted from then on: check the set first.
    """
    with writing(set_dir, "sets journal", no_wait):
        count = accept_current_state(set_dir, eval_env().optional_key())
    click.echo(f"journal written: {count} sealed file(s) recorded as current")


@sets.command("sync")
@click.option(
    "--prune",
    is_flag=True,
    help="Also remove the partitions of sets this machine lacks (default: only of sets the purge log "
    "names; another machine sharing the instance may hold the others).",
)
def sets_sync(prune: bool) -> None:
    """Register every set on this machine as a case_set partition and forget purged sets.

    What the registry sensor does.
    """
    import dagster as dg

    from graft_eval_pipeline.defs.resources import CaseSetsResource
    from graft_eval_pipeline.defs.sensors import sync_case_set_partitions

    if not os.environ.get("DAGSTER_HOME"):
        raise EvalError("DAGSTER_HOME is not set: point it at the Dagster instance folder")
    sets_resource = CaseSetsResource(eval_dir=str(eval_env().eval_dir))
    with dg.DagsterInstance.get() as instance:
        added, deleted = sync_case_set_partitions(instance, sets_resource, prune=prune)
    click.echo(
        f"case_set partitions: added {', '.join(added) or 'none'}; removed {', '.join(deleted) or 'none'}"
    )
