"""graft-eval: the command line (spec section 7), a thin shell over `evalset/`.

Exit codes: 0 ok, 1 check failed, 2 usage or configuration error, 3 aborted.
Each command group lives in a small block below; errors raise `EvalError` subclasses and
`main` turns them into one line on stderr and the exit code.
"""

from __future__ import annotations

import getpass
import io
import os
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

# pydantic looks for plugins in every installed distribution's entry points when it builds its
# first model (~25 ms of a 0.5 s start-up in this venv, which holds Dagster's); the project uses
# none. Set the variable yourself to keep plugins on.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

from graft_eval_pipeline.card.llm import LlmClient
from graft_eval_pipeline.card.result import CardResult
from graft_eval_pipeline.evalset.export import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MIN_PER_STRATUM,
    DEFAULT_SAMPLE,
    DEFAULT_SEED,
)
from graft_eval_pipeline.evalset.report import CASE_KINDS, DEFAULT_LAST, CaseKind, CaseLine
from graft_eval_pipeline.evalset.run import DEFAULT_MAX_COST_USD, DEFAULT_MAX_TOKENS, Estimate
from graft_eval_pipeline.evalset.sets import (
    PURGE_LOG,
    SCHEMA_DIR,
    SYNTHETIC_BASELINE,
    SYNTHETIC_DIR,
    CaseSet,
    CheckFailed,
    EvalAbort,
    EvalCase,
    EvalEnv,
    EvalError,
    FloorConfig,
    atomic_write,
    check_output_target,
    create_set,
    generate_key,
    gold,
    label_counts,
    list_case_ids,
    open_set,
    purge_set,
    read_case,
    render_case,
    to_terminal_safe,
)
from graft_eval_pipeline.github.limits import DEFAULT_MAX_REQUESTS, DEFAULT_MAX_WAIT_S, DEFAULT_MIN_REMAINING

if TYPE_CHECKING:
    from rich.console import Console


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """Offline evaluation set for Graft's intent-card engine."""


# --- schema -------------------------------------------------------------------------------


@cli.command()
@click.option("--write", is_flag=True, help="Write eval/schema/*.json instead of printing them.")
def schema(write: bool) -> None:
    """Print or write the committed JSON Schemas."""
    from graft_eval_pipeline.evalset.report import render_schemas

    for name, text in render_schemas().items():
        if write:
            path = SCHEMA_DIR / name
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, text.encode("utf-8"), 0o644)
            click.echo(f"wrote eval/schema/{name}")
        else:
            click.echo(text, nl=False)


# --- case sets: keygen, init, validate, show, purge (spec E4-E9, E24) ---------------------


def _eval_env() -> EvalEnv:
    return EvalEnv.from_environ(os.environ)


def _open_case_set(folder: Path, strict: bool = False) -> CaseSet:
    """Open a set; a pilot set needs GRAFT_EVAL_KEY (exit 2 with a clear message without it).

    Warnings from opening it (loose modes) go to stderr; `strict` refuses the set instead (exit 2).
    """
    cs = open_set(folder, _eval_env().optional_key(), strict=strict)
    for warning in cs.warnings:
        click.echo(f"warning: {warning}", err=True)
    return cs


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
@STRICT_OPTION
def validate(set_dir: Path, strict: bool) -> None:
    """Check the schema of (and decrypt) every case; print counts and loose modes."""
    cs = _open_case_set(set_dir, strict)
    ids = list_case_ids(cs)
    cases, invalid = [], 0
    for case_id in ids:
        try:
            cases.append(read_case(cs, case_id))
        except EvalError as err:
            invalid += 1
            echo_error(f"invalid: {' '.join(str(err).split())}")
    counts = label_counts(cases)
    click.echo(
        f"set {cs.set_id}: {len(ids)} cases, {counts.labeled} labeled, {counts.gold} gold, "
        f"{counts.needs_adjudication} need adjudication, {invalid} invalid"
        + (", modes too open (see the warning)" if cs.warnings else "")
    )
    if invalid:
        raise CheckFailed(f"{invalid} of {len(ids)} cases failed validation: fix or re-export them")


LIVE_RESULT_LABEL = "cached live card result (current prompts and models)"
FAKE_RESULT_LABEL = "fake card result (the fake model run again: the case's script, or the null model)"


def _card_result(cs: CaseSet, case: EvalCase) -> tuple[CardResult, str]:
    """The cached live card under the current prompts and models when there is one;
    otherwise the fake run's card, derived again (deterministic, no call, nothing written)."""
    from graft_eval_pipeline.evalset.run import cached_result, fake_result, generate_options

    env = _eval_env()
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
    cs = _open_case_set(set_dir, strict)
    case = read_case(cs, case_id)
    if not with_result:
        click.echo(render_case(case), nl=False)
        return
    result, label = _card_result(cs, case)
    click.echo(render_case(case, result=result, gold=gold(case), result_label=label), nl=False)
    if label == FAKE_RESULT_LABEL:
        click.echo("\nnote: the card above is the fake model's, derived again; no cached result")


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
@click.option("--run", "run_id", default=None, help="Run id (a folder under <set>/runs/); default: latest.")
@click.option(
    "--only",
    type=click.Choice(CASE_KINDS),
    default=None,
    help="under/over: final class below/above gold; unavailable: no card; flagged: the verifier "
    "disagreed; changed: differs from the set's baseline.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the cases as JSON.")
@STRICT_OPTION
def cases(set_dir: Path, run_id: str | None, only: CaseKind | None, as_json: bool, strict: bool) -> None:
    """List the cases of a run: id, why to look, gold, floor, model, final, status, verifier, rules.

    Ids, classes and rule ids only (no content); `show --case <id>` prints one case.
    """
    import json

    from graft_eval_pipeline.evalset.report import KIND_TITLES, open_run, run_dirs

    cs = _open_case_set(set_dir, strict)
    if run_id is None and only is None and not run_dirs(cs.dir):
        ids = list_case_ids(cs)
        click.echo(
            f"set {cs.set_id} has no run yet: these are its {len(ids)} case ids; "
            f"`graft-eval run --set {set_dir}` adds classes, status and rules",
            err=True,
        )
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
    click.echo(header + what)
    if lines:
        click.echo("\n".join(_case_table(lines)))


@cli.command()
@SET_OPTION
@click.option("--confirm", required=True, help="The set id, typed again.")
def purge(set_dir: Path, confirm: str) -> None:
    """Delete a pilot set folder and log the deletion; needs no key."""
    env = _eval_env()
    done = purge_set(set_dir, confirm=confirm, by=_operator(), now=datetime.now(UTC), eval_root=env.eval_dir)
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


def _synthetic_cards(cs: CaseSet, report_llm: str) -> dict[str, CardResult]:
    """The cards of a synthetic run for its report.html: the fake model's again, or the cached
    live ones (a case without a cache entry shows its title only)."""
    from graft_eval_pipeline.evalset.run import cached_result, fake_result, generate_options
    from graft_eval_pipeline.evalset.sets import read_cases

    env = _eval_env()
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
@click.option("--run", "run_id", default=None, help="Run id (a folder under <set>/runs/); default: latest.")
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
    import webbrowser

    from graft_eval_pipeline.evalset.report import open_run

    cs = _open_case_set(set_dir, strict)
    run = open_run(cs, run_id)
    path = run.html_path
    if rebuild or not path.is_file():
        cards = _synthetic_cards(cs, run.report.llm) if cs.meta.kind == "synthetic" else None
        path = run.write_html(cards)
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
    """How the headline rates moved over the set's last runs: run id, mode, k/n and value of each
    rate (under-classification with its upper bound), the report's verdict. Ids and numbers only."""
    import json

    from graft_eval_pipeline.evalset.report import read_history

    cs = _open_case_set(set_dir, strict)
    found = read_history(cs, last)
    if not found.total:
        click.echo(f"set {cs.set_id} has no run yet: `graft-eval run --set {set_dir}` makes one", err=True)
    if as_json:
        click.echo(json.dumps(found.to_json_dict(), indent=2))
    elif found.total:
        click.echo(found.render(), nl=False)


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
@STRICT_OPTION
def label(
    set_dir: Path,
    handle: str,
    case_id: str | None,
    double_only: bool,
    apply_file: Path | None,
    strict: bool,
) -> None:
    """Label cases blind: the PR only, never the floor, a card or other labels."""
    from graft_eval_pipeline.evalset.labeling import apply_label_file, run_label_session

    cs = _open_case_set(set_dir, strict)
    if apply_file is not None:
        if case_id is not None or double_only:
            raise click.UsageError("--apply takes every case in the file: drop --case and --double-only")
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
    )
    click.echo(f"{written} case(s) labeled by {handle}")


@cli.command("assign-double")
@SET_OPTION
@click.option("--fraction", type=click.FloatRange(0, 1), required=True, help="Share of cases, e.g. 0.2.")
@click.option("--min", "minimum", type=click.IntRange(min=0), default=20, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
@STRICT_OPTION
def assign_double_command(set_dir: Path, fraction: float, minimum: int, seed: int, strict: bool) -> None:
    """Tag max(min, ceil(fraction × n)) cases double-label, stratified and seeded; idempotent."""
    from graft_eval_pipeline.evalset.labeling import assign_double

    ids = assign_double(_open_case_set(set_dir, strict), fraction=fraction, minimum=minimum, seed=seed)
    if ids:
        click.echo(f"tagged {len(ids)} case(s) double-label: {', '.join(ids)}")
    else:
        click.echo("no case tagged: enough cases already carry double-label")


@cli.command()
@SET_OPTION
@HANDLE_OPTION
@click.option("--case", "case_id", default=None, help="Adjudicate this case only.")
@STRICT_OPTION
def adjudicate(set_dir: Path, handle: str, case_id: str | None, strict: bool) -> None:
    """Settle disagreeing label sets; shows the sets side by side, never model output."""
    from graft_eval_pipeline.evalset.labeling import run_adjudication_session

    written = run_adjudication_session(
        _open_case_set(set_dir, strict),
        handle=handle,
        inp=sys.stdin,
        out=sys.stdout,
        now=lambda: datetime.now(UTC),
        case_id=case_id,
    )
    click.echo(f"{written} case(s) adjudicated by {handle}")


@cli.command()
@SET_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@STRICT_OPTION
def agreement(set_dir: Path, as_json: bool, strict: bool) -> None:
    """Cohen's kappa per labeler pair: ids and numbers only."""
    import json

    from graft_eval_pipeline.evalset.labeling import agreement as compute_agreement
    from graft_eval_pipeline.evalset.labeling import render_agreement
    from graft_eval_pipeline.evalset.sets import read_cases

    report = compute_agreement(read_cases(_open_case_set(set_dir, strict)))
    if as_json:
        click.echo(json.dumps(report.to_json_dict(), indent=2))
    else:
        click.echo(render_agreement(report), nl=False)


# --- run and ci: harness, report, baseline, thresholds (spec T13, T14, E18-E23) -------------


def _anthropic_llm(env: EvalEnv) -> LlmClient:
    from graft_eval_pipeline.evalset.run import anthropic_llm

    return anthropic_llm(env)


LLM_FACTORY: Callable[[EvalEnv], LlmClient] = _anthropic_llm
"""Builds the live client from the environment, only under --live; tests replace it."""


def _stderr_terminal() -> Console | None:
    """A rich console on stderr when it is a terminal (the run's progress bar), else None."""
    if not sys.stderr.isatty():
        return None
    from rich.console import Console

    return Console(file=sys.stderr)


TERMINAL_CONSOLE: Callable[[], Console | None] = _stderr_terminal
"""The console a run draws its progress bar on (None: summary lines instead); tests replace it."""


def _confirm_on_tty(yes: bool) -> Callable[[Estimate], Awaitable[bool]]:
    """--yes skips the question; without a TTY to ask on, the run aborts (exit 3)."""

    async def confirm(_estimate: Estimate) -> bool:
        if yes:
            return True
        if not sys.stdin.isatty():
            raise EvalAbort(
                "not_confirmed", "no terminal to ask Continue? [y/N]: check the estimate, then add --yes"
            )
        return click.confirm("Continue?", default=False, err=True)

    return confirm


def _run_and_report(
    set_dir: Path,
    *,
    case_ids: str | None = None,
    tag: str | None = None,
    baseline: Path | None = None,
    save_baseline_to: Path | None = None,
    check: bool = False,
    strict: bool = False,
    out: Path | None = None,
    concurrency: int | None = None,
    live: bool = False,
    yes: bool = False,
    max_cost_usd: float = DEFAULT_MAX_COST_USD,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    no_cache: bool = False,
    allow_secrets: bool = False,
    quiet: bool = False,
    batch: bool = False,
    trials: int = 1,
) -> None:
    from graft_eval_pipeline.evalset.evaluate import evaluate
    from graft_eval_pipeline.evalset.report import (
        REPORT_FILE,
        check_baseline_target,
        load_thresholds,
        publish_run,
        save_baseline,
    )
    from graft_eval_pipeline.evalset.run import ProgressEvery, RunOptions, case_filter_for, collector_policy
    from graft_eval_pipeline.evalset.sets import THRESHOLDS_FILE

    if batch and not live:
        raise EvalError("--batch sends live calls through the Message Batches API: add --live")
    if batch and trials > 1:
        raise EvalError("--batch runs one trial of each case: drop --trials or --batch")
    env = _eval_env()
    if live:
        from graft_eval_pipeline.evalset.run import require_live_env  # the SDK: live runs only

        require_live_env(env)  # key and prices before anything else; without --live both are ignored
    cs = _open_case_set(set_dir, strict)
    if baseline is not None and not baseline.is_file():
        raise EvalError(f"--baseline {baseline} does not exist: create it with --save-baseline")
    if save_baseline_to is not None:
        check_baseline_target(save_baseline_to, cs.meta.kind)
    if out is not None:
        check_output_target(out, "--out")
    thresholds = load_thresholds(THRESHOLDS_FILE)

    def to_stderr(line: str) -> None:
        click.echo(line, err=True)

    console = None if quiet else TERMINAL_CONSOLE()
    bar = None
    if console is not None:
        from graft_eval_pipeline.evalset.run import TerminalBar  # rich: on a terminal only

        bar = TerminalBar(console)
    options = RunOptions(
        set=cs,
        mode="live" if live else "fake",
        llm_factory=(lambda: LLM_FACTORY(env)) if live else None,
        models=env.models(),
        timeout_ms=env.timeout_ms,
        concurrency=concurrency,
        max_cost_usd=max_cost_usd,
        max_tokens=max_tokens,
        use_cache=not no_cache,
        allow_secrets=allow_secrets,
        case_filter=case_filter_for(cs, _comma_list(case_ids), tag),
        confirm=_confirm_on_tty(yes) if live else None,
        # a bar on a terminal, else a summary every tenth of the run; --quiet keeps the estimate only
        progress=None if quiet else to_stderr,
        progress_every=ProgressEvery(),
        progress_bar=bar,
        on_estimate=(lambda estimate: to_stderr(estimate.summary())) if quiet else None,
        batch=batch,
        trials=trials,
    )
    with collector_policy(options):  # a fake run keeps the collector paused through its files too
        try:
            evaluation = evaluate(options)
        finally:
            if bar is not None:
                bar.finish()  # also when the run stops early: the terminal gets its cursor back
        published = publish_run(
            cs,
            evaluation.report,
            thresholds=thresholds,
            strict=strict,
            baseline=baseline,
            out=out,
            details=evaluation.details,
        )
    checked = published.checked
    saved = save_baseline(save_baseline_to, checked.report) if save_baseline_to is not None else None
    click.echo(checked.summary(), nl=False)
    click.echo(f"report: {published.out_dir / REPORT_FILE}")
    if saved is not None:
        state = "saved" if saved else "unchanged (same results; only run id, time and commit differ)"
        click.echo(f"baseline {state}: {save_baseline_to}")
    if check and checked.failed:
        accept = (
            f"; if the change is intended, accept it: {checked.accept}" if checked.baseline_failed else ""
        )
        raise CheckFailed(f"a threshold or the baseline match failed (see above){accept}")


RUN_OUTPUT_OPTIONS = [
    click.option("--baseline", type=click.Path(path_type=Path), default=None, help="Baseline report."),
    click.option("--save-baseline", "save_baseline_to", type=click.Path(path_type=Path), default=None),
    click.option(
        "--strict",
        is_flag=True,
        help="Provisional threshold failures also exit 1; a pilot set with loose modes is refused (2).",
    ),
    click.option("--out", type=click.Path(path_type=Path), default=None, help="Default <set>/runs/<runId>/."),
    click.option(
        "--concurrency", type=click.IntRange(min=1), default=None, help="Cases in flight (4 live, 8 fake)."
    ),
    click.option(
        "--quiet",
        "-q",
        is_flag=True,
        help="No progress on stderr (default: a bar on a terminal, else a summary line every tenth "
        "of the run); the live estimate and errors still print.",
    ),
]


def _run_output_options(command: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(RUN_OUTPUT_OPTIONS):
        command = option(command)
    return command


@cli.command()
@SET_OPTION
@click.option("--cases", "case_ids", default=None, help="Comma-separated case ids.")
@click.option("--tag", default=None, help="Only cases with this tag.")
@click.option("--check", is_flag=True, help="Exit 1 when a threshold or the baseline match fails.")
@click.option("--live", is_flag=True, help="Call the Anthropic API (ANTHROPIC_API_KEY); default: fake LLM.")
@click.option("--yes", is_flag=True, help="Live: skip the Continue? [y/N] question after the estimate.")
@click.option(
    "--max-cost-usd",
    type=click.FloatRange(min=0),
    default=DEFAULT_MAX_COST_USD,
    show_default=True,
    help="Live: refuse an estimate above it; start no case that would pass it.",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_TOKENS,
    show_default=True,
    help="Live: start no case that would pass it.",
)
@click.option("--no-cache", is_flag=True, help="Live: ignore cached results (new ones are still written).")
@click.option(
    "--allow-secrets",
    is_flag=True,
    help="Live: send a case even when the secret rules find a secret in its prompt text "
    "(default: skip it as secret_detected; clean it with rescan --apply).",
)
@click.option(
    "--batch",
    is_flag=True,
    help="Live: send the calls through the Message Batches API at half price (answers within 24 h; "
    "a stopped run resumes its batches when run again).",
)
@click.option(
    "--trials",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Run each case N times (live: each trial cached on its own; not with --batch); the report "
    "adds agreement between trials, flaky cases and rates with intervals clustered by case.",
)
@_run_output_options
def run(set_dir: Path, case_ids: str | None, tag: str | None, check: bool, **options: Any) -> None:
    """Run the card engine over a set (fake LLM, or --live), write report.json/.md, diff and check."""
    _run_and_report(set_dir, case_ids=case_ids, tag=tag, check=check, **options)


@cli.command()
@_run_output_options
def ci(baseline: Path | None, **outputs: Any) -> None:
    """= run --set eval/synthetic --baseline eval/baselines/synthetic.json --check."""
    _run_and_report(SYNTHETIC_DIR, baseline=baseline or SYNTHETIC_BASELINE, check=True, **outputs)


# --- compare: did the change help? ---------------------------------------------------------


@cli.command()
@click.option(
    "--base",
    "base_ref",
    default=None,
    help="The earlier run: a report.json, a run folder or a run id of --set (default: the set's baseline).",
)
@click.option(
    "--new",
    "new_ref",
    default=None,
    help="The later run: a report.json, a run folder or a run id of --set (default: the set's latest run).",
)
@RUNS_SET_OPTION
@click.option(
    "--resamples",
    type=click.IntRange(min=1),
    default=None,
    help="Paired bootstrap resamples (default 2,000).",
)
@click.option("--seed", type=int, default=None, help="Seed of the bootstrap (fixed by default).")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@STRICT_OPTION
def compare(
    base_ref: str | None,
    new_ref: str | None,
    set_dir: Path | None,
    resamples: int | None,
    seed: int | None,
    as_json: bool,
    strict: bool,
) -> None:
    """Compare two runs case by case: each headline rate with k/n, the paired difference with a
    95% interval, discordant cases and McNemar p, a verdict and blockers. Exit 1 when the new run
    regressed or a blocker fired (a sensitive case newly under-classified or newly unavailable)."""
    import json

    from graft_eval_pipeline.evalset.report import compare_inputs, compare_reports, render_comparison

    cs = _open_case_set(set_dir, strict) if set_dir is not None else None
    base, new = compare_inputs(base_ref, new_ref, cs)
    tuning = {k: v for k, v in {"resamples": resamples, "seed": seed}.items() if v is not None}
    comparison = compare_reports(base, new, **tuning)
    if as_json:
        click.echo(json.dumps(comparison.to_json_dict(), indent=2))
    else:
        click.echo(render_comparison(comparison), nl=False)
    if comparison.failed:
        what = ["the new run regressed"] if comparison.verdict == "regressed" else []
        what += [f"{len(comparison.blockers)} blocker(s)"] if comparison.blockers else []
        raise CheckFailed(f"{' and '.join(what)} (see above)")


@cli.command()
@click.option(
    "--run",
    "run_ref",
    default=None,
    help="A report.json, a run folder or a run id of --set (default: the set's latest run).",
)
@RUNS_SET_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the calibration as JSON.")
@STRICT_OPTION
def calibration(run_ref: str | None, set_dir: Path | None, as_json: bool, strict: bool) -> None:
    """How the verifier does against the human gold labels: true catches, false alarms and missed
    under-classifications with 95% intervals, kappa against gold, the same for flags, and its cost."""
    import json

    from graft_eval_pipeline.evalset.report import calibrate, chosen_report, render_calibration

    cs = _open_case_set(set_dir, strict) if set_dir is not None else None
    result = calibrate(chosen_report(run_ref, cs).cases)
    if as_json:
        click.echo(json.dumps(result.to_json_dict(), indent=2))
    else:
        click.echo(render_calibration(result), nl=False)


# --- export (spec E9-E16, section 7) ---------------------------------------------------------

_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _duration_s(text: str) -> float:
    """--max-wait: `15m`, `90s`, `1h`, `500ms` or plain seconds."""
    import re

    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", text)
    if not match:
        raise click.BadParameter(
            f"{text!r} is not a duration such as 15m, 90s or 1h", param_hint="--max-wait"
        )
    return float(match.group(1)) * _DURATION_UNITS[match.group(2) or "s"]


class _StageProgress:
    """One click progress bar per export stage, on stderr; the CLI uses it on a TTY only."""

    def __init__(self) -> None:
        self._stage: str | None = None
        self._bar: Any = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage != self._stage:
            self.close()
            self._stage = stage
            self._bar = click.progressbar(length=total, label=stage, file=sys.stderr)
            self._bar.__enter__()
        self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


@cli.command("export")
@SET_OPTION
@click.option("--repo", required=True, help="owner/name of the pilot repository.")
@click.option("--from", "merged_from", required=True, help="Merged on or after (YYYY-MM-DD or ISO time).")
@click.option("--to", "merged_to", required=True, help="Merged on or before (YYYY-MM-DD inclusive, or ISO).")
@click.option("--author", type=click.Choice(["agent", "bot", "any"]), default="agent", show_default=True)
@click.option("--agent-logins", default=None, help="Comma-separated (default GRAFT_AGENT_LOGINS).")
@click.option(
    "--agent-coauthor-emails", default=None, help="Comma-separated (default GRAFT_AGENT_COAUTHOR_EMAILS)."
)
@click.option(
    "--sample", "sample_size", type=click.IntRange(min=1), default=DEFAULT_SAMPLE, show_default=True
)
@click.option(
    "--min-per-stratum", type=click.IntRange(min=0), default=DEFAULT_MIN_PER_STRATUM, show_default=True
)
@click.option(
    "--max-candidates", type=click.IntRange(min=1), default=DEFAULT_MAX_CANDIDATES, show_default=True
)
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True)
@click.option(
    "--redact", "redact_kinds", type=click.Choice(["emails"]), multiple=True, help="Also redact e-mails."
)
@click.option("--redact-host", multiple=True, help="Redact this host and its subdomains (repeatable).")
@click.option("--redact-pattern", multiple=True, help="Redact this regular expression (repeatable).")
@click.option("--auth", "auth_mode", type=click.Choice(["app", "token"]), default="app", show_default=True)
@click.option("--installation-id", type=click.IntRange(min=1), default=None, help="GitHub App installation.")
@click.option("--min-remaining", type=click.IntRange(min=0), default=DEFAULT_MIN_REMAINING, show_default=True)
@click.option(
    "--max-wait",
    default=f"{DEFAULT_MAX_WAIT_S // 60}m",
    show_default=True,
    help="Longest rate-limit wait before aborting.",
)
@click.option("--max-requests", type=click.IntRange(min=1), default=DEFAULT_MAX_REQUESTS, show_default=True)
@click.option("--dry-run", is_flag=True, help="Stage 1 and the sample only: print strata and PR numbers.")
@STRICT_OPTION
def export_command(
    set_dir: Path,
    repo: str,
    merged_from: str,
    merged_to: str,
    author: Literal["agent", "bot", "any"],
    agent_logins: str | None,
    agent_coauthor_emails: str | None,
    sample_size: int,
    min_per_stratum: int,
    max_candidates: int,
    seed: int,
    redact_kinds: tuple[str, ...],
    redact_host: tuple[str, ...],
    redact_pattern: tuple[str, ...],
    auth_mode: Literal["app", "token"],
    installation_id: int | None,
    min_remaining: int,
    max_wait: str,
    max_requests: int,
    dry_run: bool,
    strict: bool,
) -> None:
    """Export merged agent PRs from GitHub into unlabeled, encrypted cases of a pilot set."""
    from graft_eval_pipeline.evalset.export import (
        ExportOptions,
        RedactOptions,
        check_repository,
        github_client,
        merge_bound,
        run_export,
    )
    from graft_eval_pipeline.github.rate_limit import RateLimitOptions

    env = _eval_env()
    options = ExportOptions(
        repo=check_repository(repo),
        merged_from=merge_bound(merged_from, "--from", end_of_day=False),
        merged_to=merge_bound(merged_to, "--to", end_of_day=True),
        author=author,
        agent_logins=tuple(_comma_list(agent_logins)) if agent_logins is not None else env.agent_logins,
        agent_coauthor_emails=(
            tuple(_comma_list(agent_coauthor_emails))
            if agent_coauthor_emails is not None
            else env.agent_coauthor_emails
        ),
        sample=sample_size,
        min_per_stratum=min_per_stratum,
        max_candidates=max_candidates,
        seed=seed,
        redact=RedactOptions(emails="emails" in redact_kinds, hosts=redact_host, patterns=redact_pattern),
        dry_run=dry_run,
    )
    limits = RateLimitOptions(
        min_remaining=min_remaining, max_wait_s=_duration_s(max_wait), max_requests=max_requests
    )
    cs = _open_case_set(set_dir, strict)
    progress = _StageProgress() if sys.stderr.isatty() else None
    with github_client(env, auth=auth_mode, installation_id=installation_id, limits=limits) as gh:
        try:
            run_export(gh, cs, options, now=lambda: datetime.now(UTC), emit=click.echo, progress=progress)
        except EvalError:
            stats = gh.limiter.stats
            click.echo(
                f"stopped after {stats.requests} requests; rate-limit waits: {stats.waits} "
                f"({stats.waited_s:.0f} s); re-run the same command to resume",
                err=True,
            )
            raise
        finally:
            if progress is not None:
                progress.close()


# --- rescan: the current secret rules over stored cases ---------------------------------------


@cli.command()
@SET_OPTION
@click.option(
    "--apply", is_flag=True, help="Rewrite the affected cases (sealed) and record the new redactions in each."
)
@STRICT_OPTION
def rescan(set_dir: Path, apply: bool, strict: bool) -> None:
    """Re-run the current secret rules over a set's cases and report, by kind, what earlier rules
    missed (exit 1 when some remain and --apply is not given)."""
    from graft_eval_pipeline.evalset.export import rescan_set

    cs = _open_case_set(set_dir, strict)
    result = rescan_set(cs, apply=apply)
    click.echo(result.summary(), nl=False)
    if result.affected and not apply:
        raise CheckFailed(
            f"{len(result.affected)} case(s) hold secrets the current rules redact: "
            "run rescan again with --apply to rewrite them"
        )


# --- Dagster partitions and the latest report -----------------------------------------------


@cli.group()
def sets() -> None:
    """Case sets as partitions of the Dagster instance in $DAGSTER_HOME."""


@sets.command("sync")
def sets_sync() -> None:
    """Register every set on this machine as a case_set partition (what the registry sensor does)."""
    import dagster as dg

    from graft_eval_pipeline.defs.resources import CaseSetsResource
    from graft_eval_pipeline.defs.sensors import sync_case_set_partitions

    if not os.environ.get("DAGSTER_HOME"):
        raise EvalError("DAGSTER_HOME is not set: point it at the Dagster instance folder")
    sets_resource = CaseSetsResource(eval_dir=str(_eval_env().eval_dir))
    with dg.DagsterInstance.get() as instance:
        added, deleted = sync_case_set_partitions(instance, sets_resource)
    click.echo(
        f"case_set partitions: added {', '.join(added) or 'none'}; removed {', '.join(deleted) or 'none'}"
    )


@cli.command()
@SET_OPTION
@STRICT_OPTION
def summary(set_dir: Path, strict: bool) -> None:
    """Print the summary of the set's latest report (what the main job ends with)."""
    from graft_eval_pipeline.evalset.report import latest_report_summary

    cs = _open_case_set(set_dir, strict)
    click.echo(latest_report_summary(cs), nl=False)


def echo_error(text: str) -> None:
    """The one way an error reaches stderr: terminal-safe (an escape sequence from a file name or
    a file shows as `[U+001B]`, it does not act), one line unless it is click's usage block."""
    click.echo(to_terminal_safe(text.rstrip("\n")), err=True)


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
    except EvalError as exc:
        echo_error(f"error: {' '.join(str(exc).split())}")
        return exc.exit_code
    except OSError as exc:  # a file system failure no evalset function mapped: one line, no traceback
        where = f" ({exc.filename})" if exc.filename else ""
        echo_error(f"error: {exc.strerror or exc}{where}: check the path, free space and permissions")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
