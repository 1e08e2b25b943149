"""Reading a set's runs: cases, view, history and summary.

Each finds the latest run, or the run `--run` names, the one way runs.py of the report stage does,
so they all agree.
"""

from __future__ import annotations

import json
import sys
import webbrowser
from pathlib import Path

import click

from graft_eval_pipeline.card import CardResult
from graft_eval_pipeline.cli.base import (
    SET_OPTION,
    STRICT_OPTION,
    cli,
    echo_safe,
    echo_warning,
    eval_env,
    open_case_set,
)
from graft_eval_pipeline.evalset.report import (
    CASE_KINDS,
    DEFAULT_LAST,
    KIND_MEANINGS,
    KIND_TITLES,
    CaseKind,
    CaseLine,
    latest_report_summary,
    no_run_yet,
    open_run,
    read_history,
    run_dirs,
)
from graft_eval_pipeline.evalset.run import cached_result, fake_result, generate_options
from graft_eval_pipeline.evalset.sets import CaseSet, list_case_ids, read_cases


def _case_table(lines: list[CaseLine]) -> list[str]:
    """Fixed-width columns: ids, classes, status, verifier and rules (no content)."""
    header = ["case", "why", "gold", "floor", "model", "final", "status", "verifier", "rules fired"]
    rows = [
        [
            line.id,
            ", ".join(line.kinds) or "-",
            line.gold or "-",
            line.floor,
            line.model or "-",
            line.final or "-",
            line.status,
            line.verifier or "-",
            ", ".join(line.rules) or "-",
        ]
        for line in lines
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1]
        for row in [header, *rows]
    ]


@cli.command()
@SET_OPTION
@click.option(
    "--run",
    "run_id",
    default=None,
    help="Run id (a folder under <set>/runs/) or its start, like a short git commit; default: latest.",
)
@click.option(
    "--only",
    type=click.Choice(CASE_KINDS),
    default=None,
    help="; ".join(f"{kind}: {KIND_MEANINGS[kind]}" for kind in CASE_KINDS) + ".",
)
@click.option("--json", "as_json", is_flag=True, help="Print the cases as JSON.")
@STRICT_OPTION
def cases(set_dir: Path, run_id: str | None, only: CaseKind | None, as_json: bool, strict: bool) -> None:
    """List the cases of a run: id, why to look, gold, floor, model, final, status, verifier, rules.

    Ids, classes and rule ids only (no content); `show --case <id>` prints one case.
    """
    cs = open_case_set(set_dir, strict)
    if run_id is None and only is None and not run_dirs(cs.dir):
        ids = list_case_ids(cs)
        click.echo(f"{no_run_yet(cs)}; until then, these are its {len(ids)} case ids", err=True)
        click.echo(json.dumps({"setId": cs.set_id, "runId": None, "ids": ids}) if as_json else "\n".join(ids))
        return
    view = open_run(cs, run_id)
    lines = view.cases(only)
    report = view.report
    if as_json:
        data = {
            "setId": report.set.set_id,
            "runId": report.run_id,
            "llm": report.llm,
            "only": only,
            "cases": [line.to_json_dict() for line in lines],
        }
        click.echo(json.dumps(data, indent=2))
        return
    what = f", {len(lines)} {KIND_TITLES[only]}" if only is not None else ""
    header = f"set {report.set.set_id}, run {report.run_id} ({report.llm}): {len(report.cases)} cases"
    echo_safe(header + what)
    if lines:
        echo_safe("\n".join(_case_table(lines)))


def _synthetic_cards(cs: CaseSet, report_llm: str) -> dict[str, CardResult]:
    """The cards of a synthetic run for its report.html.

    The fake model's again, or the cached live ones (a case without a cache entry shows its title
    only).
    """
    env = eval_env()
    models = env.models()
    cards: dict[str, CardResult] = {}
    for case in read_cases(cs):
        if report_llm == "fake":
            cards[case.id] = fake_result(case, models, env.timeout_ms)
        elif (
            cached := cached_result(cs, case.inputs, generate_options(case, models, env.timeout_ms))
        ) is not None:
            cards[case.id] = cached
    return cards


@cli.command()
@SET_OPTION
@click.option(
    "--run",
    "run_id",
    default=None,
    help="Run id (a folder under <set>/runs/) or its start, like a short git commit; default: latest.",
)
@click.option("--rebuild", is_flag=True, help="Write report.html again even if the run has one.")
@click.option(
    "--open/--no-open",
    "open_browser",
    default=None,
    help="Open it in the default browser (default: only on a terminal).",
)
@STRICT_OPTION
def view(set_dir: Path, run_id: str | None, rebuild: bool, open_browser: bool | None, strict: bool) -> None:
    """Write a run's report.html (when missing, or with --rebuild) and open it: one offline file."""
    cs = open_case_set(set_dir, strict)
    run = open_run(cs, run_id)
    path = run.html_path
    if rebuild or not path.is_file():
        cards = _synthetic_cards(cs, run.report.llm) if cs.meta.kind == "synthetic" else None
        path, skipped = run.write_html(cards)
        for why in skipped:
            echo_warning(why)
        click.echo(f"wrote {path}")
    click.echo(path.resolve().as_uri())
    if open_browser if open_browser is not None else sys.stdout.isatty():
        webbrowser.open(path.resolve().as_uri())


@cli.command()
@SET_OPTION
@click.option(
    "--last",
    type=click.IntRange(min=1),
    default=DEFAULT_LAST,
    show_default=True,
    help="How many of the latest runs to list.",
)
@click.option("--json", "as_json", is_flag=True, help="Print every headline rate of each run as JSON.")
@STRICT_OPTION
def history(set_dir: Path, last: int, as_json: bool, strict: bool) -> None:
    """How the headline rates moved over the set's last runs.

    Run id, mode, k/n and value of each rate (under-classification with its upper bound), the
    report's verdict. Ids and numbers only.
    """
    cs = open_case_set(set_dir, strict)
    found = read_history(cs, last)
    for why in found.skipped:
        echo_warning(why)
    if not found.total:
        click.echo(no_run_yet(cs), err=True)
    if as_json:
        click.echo(json.dumps(found.to_json_dict(), indent=2))
    elif found.total:
        echo_safe(found.render(), nl=False)


@cli.command()
@SET_OPTION
@STRICT_OPTION
def summary(set_dir: Path, strict: bool) -> None:
    """Print the summary of the set's latest report (what the main job ends with)."""
    cs = open_case_set(set_dir, strict)
    echo_safe(latest_report_summary(cs), nl=False)
