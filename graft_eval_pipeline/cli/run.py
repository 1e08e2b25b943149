"""Runs and their reading: run and ci (harness, report, baseline, thresholds), compare and calibration."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from graft_eval_pipeline.card import LlmClient
from graft_eval_pipeline.cli.base import (
    NO_WAIT_OPTION,
    RUNS_SET_OPTION,
    SET_OPTION,
    STRICT_OPTION,
    cli,
    comma_list,
    echo_safe,
    echo_warning,
    eval_env,
    open_case_set,
    writing,
)
from graft_eval_pipeline.evalset.compare import (
    DEFAULT_RESAMPLES,
    calibrate,
    compare_reports,
    render_calibration,
    render_comparison,
)
from graft_eval_pipeline.evalset.evaluate import Evaluation, evaluate_then
from graft_eval_pipeline.evalset.report import (
    REPORT_FILE,
    PublishedRun,
    check_baseline_target,
    chosen_report,
    compare_inputs,
    load_thresholds,
    margins_for,
    publish_run,
    read_prior,
    save_baseline,
)
from graft_eval_pipeline.evalset.run import (
    DEFAULT_CONCURRENCY_TEXT,
    DEFAULT_MAX_COST_USD,
    DEFAULT_MAX_TOKENS,
    Estimate,
    RunSettings,
    SettingNames,
)
from graft_eval_pipeline.evalset.sets import (
    SYNTHETIC_BASELINE,
    SYNTHETIC_DIR,
    THRESHOLDS_FILE,
    CheckFailed,
    EvalAbort,
    EvalEnv,
    EvalError,
    check_output_target,
    eval_dir_hint,
)

if TYPE_CHECKING:
    from rich.console import Console

# --- run and ci: harness, report, baseline, thresholds (spec T13, T14, E18-E23) -------------


def _anthropic_llm(env: EvalEnv) -> LlmClient:
    from graft_eval_pipeline.evalset.run.live import anthropic_llm  # the SDK: live runs only

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


CLI_NAMES = SettingNames(
    batch="--batch", trials="--trials", add_live="add --live", live_needs_cap="--live needs --max-cost-usd"
)
"""The `run` flags, as `RunSettings`' rules name them."""


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
    no_wait: bool = False,
) -> None:
    settings = RunSettings(
        CLI_NAMES,
        cases=tuple(comma_list(case_ids)),
        tag=tag,
        live=live,
        concurrency=concurrency,
        max_cost_usd=max_cost_usd,
        max_tokens=max_tokens,
        use_cache=not no_cache,
        allow_secrets=allow_secrets,
        batch=batch,
        trials=trials,
    )
    env = eval_env()
    if live:
        from graft_eval_pipeline.evalset.run.live import require_live_env  # the SDK: live runs only

        require_live_env(env)  # key and prices before anything else; without --live both are ignored
    cs = open_case_set(set_dir, strict)
    with writing(cs, "run", no_wait):
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
            from graft_eval_pipeline.evalset.run.progress_bar import TerminalBar  # rich: on a terminal only

            bar = TerminalBar(console)
        options = replace(
            settings.run_options(cs, env, llm=LLM_FACTORY, confirm=_confirm_on_tty(yes)),
            # a bar on a terminal, else a summary every tenth of the run; --quiet keeps the estimate only
            progress=None if quiet else to_stderr,
            progress_bar=bar,
            on_estimate=(lambda estimate: to_stderr(estimate.summary())) if quiet else None,
        )

        def finish_bar() -> None:
            if bar is not None:
                bar.finish()

        def publish(evaluation: Evaluation) -> PublishedRun:
            finish_bar()
            return publish_run(
                cs,
                evaluation.report,
                thresholds=thresholds,
                strict=strict,
                baseline=baseline,
                out=out,
                details=evaluation.details,
                prior=prior,
            )

        # The baseline and the history, read before the first case: after the last one only the
        # work that depends on the rows is left.
        prior = read_prior(cs, baseline, warm=live)
        try:
            # a live run confirms its blocker candidates against the baseline it is gated on
            published = evaluate_then(options, prior.gate if live else None, publish)
        finally:
            finish_bar()  # also when the run stops early: the terminal gets its cursor back
        checked = published.checked
        for why in published.warnings:
            echo_warning(why)
        saved = save_baseline(save_baseline_to, checked.report) if save_baseline_to is not None else None
        echo_safe(checked.summary(), nl=False)
        click.echo(f"report: {published.out_dir / REPORT_FILE}")
        if saved is not None:
            state = "saved" if saved else "unchanged (same results; only run id, time and commit differ)"
            click.echo(f"baseline {state}: {save_baseline_to}")
        if check and checked.failed:
            accept = (
                f"; if the change is intended, accept it: {checked.accept}"
                if checked.baseline_failed and checked.accept
                else ""
            )
            raise CheckFailed(f"a threshold or the baseline match failed (see above){accept}")


RUN_OUTPUT_OPTIONS = [
    NO_WAIT_OPTION,
    click.option("--baseline", type=click.Path(path_type=Path), default=None, help="Baseline report."),
    click.option("--save-baseline", "save_baseline_to", type=click.Path(path_type=Path), default=None),
    click.option(
        "--strict",
        is_flag=True,
        help="Provisional threshold failures also exit 1; a pilot set with loose modes is refused (2).",
    ),
    click.option("--out", type=click.Path(path_type=Path), default=None, help="Default <set>/runs/<runId>/."),
    click.option(
        "--concurrency",
        type=click.IntRange(min=1),
        default=None,
        show_default=DEFAULT_CONCURRENCY_TEXT,
        help="Cases in flight.",
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
    if hint := eval_dir_hint():
        raise EvalError(f"the synthetic set is missing{hint}")
    _run_and_report(SYNTHETIC_DIR, baseline=baseline or SYNTHETIC_BASELINE, check=True, **outputs)


# --- compare: did the change help? ---------------------------------------------------------


@cli.command()
@click.option(
    "--base",
    "base_ref",
    default=None,
    help="The earlier run: a report.json, a run folder or a run id of --set, or its start "
    "(default: the set's baseline).",
)
@click.option(
    "--new",
    "new_ref",
    default=None,
    help="The later run: a report.json, a run folder or a run id of --set, or its start "
    "(default: the set's latest run).",
)
@RUNS_SET_OPTION
@click.option(
    "--resamples",
    type=click.IntRange(min=1),
    default=None,
    show_default=f"{DEFAULT_RESAMPLES:,}",
    help="Paired bootstrap resamples.",
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
    """Compare two runs case by case.

    Each headline rate with k/n, the paired difference with a 95% interval, discordant cases and
    McNemar p, a verdict and blockers. Exit 1 when the new run regressed or a blocker fired (a
    sensitive case newly under-classified or newly unavailable).
    """
    cs = open_case_set(set_dir, strict) if set_dir is not None else None
    base, new = compare_inputs(base_ref, new_ref, cs)
    tuning = {k: v for k, v in {"resamples": resamples, "seed": seed}.items() if v is not None}
    margins = margins_for(new, load_thresholds(THRESHOLDS_FILE))
    comparison = compare_reports(base, new, margins=margins, **tuning)
    if as_json:
        click.echo(json.dumps(comparison.to_json_dict(), indent=2))
    else:
        echo_safe(render_comparison(comparison), nl=False)
    if comparison.failed:
        what = ["the new run regressed"] if comparison.verdict == "regressed" else []
        what += [
            f"{m.name} worse than its margin" for m in comparison.non_inferiority if m.verdict == "worse"
        ]
        what += [f"{len(comparison.blockers)} blocker(s)"] if comparison.blockers else []
        raise CheckFailed(f"{' and '.join(what)} (see above)")


@cli.command()
@click.option(
    "--run",
    "run_ref",
    default=None,
    help="A report.json, a run folder or a run id of --set, or its start (default: the set's latest run).",
)
@RUNS_SET_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the calibration as JSON.")
@STRICT_OPTION
def calibration(run_ref: str | None, set_dir: Path | None, as_json: bool, strict: bool) -> None:
    """How the verifier does against the human gold labels.

    True catches, false alarms and missed under-classifications with 95% intervals, kappa against
    gold, the same for flags, and its cost.
    """
    cs = open_case_set(set_dir, strict) if set_dir is not None else None
    result = calibrate(chosen_report(run_ref, cs).cases)
    if as_json:
        click.echo(json.dumps(result.to_json_dict(), indent=2))
    else:
        echo_safe(render_calibration(result), nl=False)
