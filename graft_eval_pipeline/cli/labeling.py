"""Labeling: label, assign-double, adjudicate and agreement (spec T10, T11, 8.1)."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import click

from graft_eval_pipeline.cli.base import (
    NO_WAIT_OPTION,
    SET_OPTION,
    STRICT_OPTION,
    cli,
    echo_safe,
    open_case_set,
    writing,
)
from graft_eval_pipeline.evalset.labeling import agreement as compute_agreement
from graft_eval_pipeline.evalset.labeling import (
    apply_label_file,
    assign_double,
    render_agreement,
    run_adjudication_session,
    run_label_session,
)
from graft_eval_pipeline.evalset.sets import read_cases

# --- labeling: label, assign-double, adjudicate, agreement (spec T10, T11, 8.1) ------------

HANDLE_OPTION = click.option("--as", "handle", required=True, help="Your labeler handle (never an e-mail).")


@cli.command()
@SET_OPTION
@HANDLE_OPTION
@click.option("--case", "case_id", default=None, help="Label this case (replaces your own set on it).")
@click.option("--double-only", is_flag=True, help="Only cases tagged double-label.")
@click.option(
    "--apply",
    "apply_file",
    default=None,
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="Write label sets from a labels.json file instead of asking.",
)
@NO_WAIT_OPTION
@STRICT_OPTION
def label(
    set_dir: Path,
    handle: str,
    case_id: str | None,
    double_only: bool,
    apply_file: Path | None,
    no_wait: bool,
    strict: bool,
) -> None:
    """Label cases blind: the PR only, never the floor, a card or other labels."""
    cs = open_case_set(set_dir, strict)
    if apply_file is not None:
        if case_id is not None or double_only:
            raise click.UsageError("--apply takes every case in the file: drop --case and --double-only")
        with writing(cs, "label --apply", no_wait):
            ids = apply_label_file(cs, apply_file, handle=handle, now=datetime.now(UTC))
        click.echo(f"wrote {len(ids)} label set(s) by {handle}")
        return
    written = run_label_session(
        cs,
        handle=handle,
        inp=sys.stdin,
        out=sys.stdout,
        now=lambda: datetime.now(UTC),
        case_id=case_id,
        double_only=double_only,
        holding=lambda: writing(cs, "label", no_wait),
    )
    click.echo(f"{written} case(s) labeled by {handle}")


@cli.command("assign-double")
@SET_OPTION
@click.option("--fraction", type=click.FloatRange(0, 1), required=True, help="Share of cases, e.g. 0.2.")
@click.option("--min", "minimum", type=click.IntRange(min=0), default=20, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
@NO_WAIT_OPTION
@STRICT_OPTION
def assign_double_command(
    set_dir: Path, fraction: float, minimum: int, seed: int, no_wait: bool, strict: bool
) -> None:
    """Tag max(min, ceil(fraction × n)) cases double-label, stratified and seeded; idempotent."""
    cs = open_case_set(set_dir, strict)
    with writing(cs, "assign-double", no_wait):
        ids = assign_double(cs, fraction=fraction, minimum=minimum, seed=seed)
    if ids:
        click.echo(f"tagged {len(ids)} case(s) double-label: {', '.join(ids)}")
    else:
        click.echo("no case tagged: enough cases already carry double-label")


@cli.command()
@SET_OPTION
@HANDLE_OPTION
@click.option("--case", "case_id", default=None, help="Adjudicate this case only.")
@NO_WAIT_OPTION
@STRICT_OPTION
def adjudicate(set_dir: Path, handle: str, case_id: str | None, no_wait: bool, strict: bool) -> None:
    """Settle disagreeing label sets; shows the sets side by side, never model output."""
    cs = open_case_set(set_dir, strict)
    written = run_adjudication_session(
        cs,
        handle=handle,
        inp=sys.stdin,
        out=sys.stdout,
        now=lambda: datetime.now(UTC),
        case_id=case_id,
        holding=lambda: writing(cs, "adjudicate", no_wait),
    )
    click.echo(f"{written} case(s) adjudicated by {handle}")


@cli.command()
@SET_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@STRICT_OPTION
def agreement(set_dir: Path, as_json: bool, strict: bool) -> None:
    """Cohen's kappa per labeler pair: ids and numbers only."""
    report = compute_agreement(read_cases(open_case_set(set_dir, strict)))
    if as_json:
        click.echo(json.dumps(report.to_json_dict(), indent=2))
    else:
        echo_safe(render_agreement(report), nl=False)
