"""Export of merged agent PRs from GitHub, and rescan of stored cases with today's secret rules."""

from __future__ import annotations

import contextlib
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import click

from graft_eval_pipeline.cli.base import (
    NO_WAIT_OPTION,
    SET_OPTION,
    STRICT_OPTION,
    cli,
    comma_list,
    echo_safe,
    eval_env,
    open_case_set,
    writing,
)
from graft_eval_pipeline.evalset.export import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MIN_PER_STRATUM,
    DEFAULT_SAMPLE,
    DEFAULT_SAMPLE_SEED,
)
from graft_eval_pipeline.evalset.sets import CheckFailed, GraftEvalError
from graft_eval_pipeline.github.limits import DEFAULT_MAX_REQUESTS, DEFAULT_MAX_WAIT_S, DEFAULT_MIN_REMAINING

# --- export (spec E9-E16, section 7) ---------------------------------------------------------

_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _duration_s(text: str) -> float:
    """--max-wait: `15m`, `90s`, `1h`, `500ms` or plain seconds."""
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
@click.option(
    "--seed", type=int, default=DEFAULT_SAMPLE_SEED, show_default=True, help="Seed of the stratified sample."
)
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
@NO_WAIT_OPTION
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
    no_wait: bool,
    strict: bool,
) -> None:
    """Export merged agent PRs from GitHub into unlabeled, encrypted cases of a pilot set."""
    # the GitHub client, httpx and the secret rules: this command only (graft_eval_pipeline/heavy.py)
    from graft_eval_pipeline.evalset.export.client import github_client
    from graft_eval_pipeline.evalset.export.options import (
        CandidateSettings,
        ExportSettings,
        SampleSettings,
        WindowNames,
    )
    from graft_eval_pipeline.evalset.export.redact import RedactOptions
    from graft_eval_pipeline.evalset.export.run import run_export
    from graft_eval_pipeline.github.rate_limit import RateLimitOptions

    env = eval_env()
    settings = ExportSettings(
        candidates=CandidateSettings.from_text(
            WindowNames(merged_from="--from", merged_to="--to"),
            env,
            repo=repo,
            merged_from=merged_from,
            merged_to=merged_to,
            author=author,
            agent_logins=comma_list(agent_logins) if agent_logins is not None else None,
            agent_coauthor_emails=(
                comma_list(agent_coauthor_emails) if agent_coauthor_emails is not None else None
            ),
            max_candidates=max_candidates,
        ),
        sample=SampleSettings(size=sample_size, min_per_stratum=min_per_stratum, seed=seed),
        redact=RedactOptions(emails="emails" in redact_kinds, hosts=redact_host, patterns=redact_pattern),
        dry_run=dry_run,
    )
    limits = RateLimitOptions(
        min_remaining=min_remaining, max_wait_s=_duration_s(max_wait), max_requests=max_requests
    )
    cs = open_case_set(set_dir, strict)
    progress = _StageProgress() if sys.stderr.isatty() else None
    with (
        writing(cs, "export", no_wait)
        if not dry_run
        else contextlib.nullcontext(),  # a dry run writes nothing
        github_client(env, auth=auth_mode, installation_id=installation_id, limits=limits) as gh,
    ):
        try:
            run_export(gh, cs, settings, now=lambda: datetime.now(UTC), emit=echo_safe, progress=progress)
        except GraftEvalError:  # a rate-limit abort (3) as much as a bad answer (2)
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
@NO_WAIT_OPTION
@STRICT_OPTION
def rescan(set_dir: Path, apply: bool, no_wait: bool, strict: bool) -> None:
    """Re-run the current secret rules over a set's cases and report what earlier rules missed.

    The report is by kind; exit 1 when some remain and --apply is not given.
    """
    from graft_eval_pipeline.evalset.export.rescan import rescan_set  # the secret rules: this command only

    cs = open_case_set(set_dir, strict)
    with writing(cs, "rescan --apply", no_wait) if apply else contextlib.nullcontext():
        result = rescan_set(cs, apply=apply)
    click.echo(result.summary(), nl=False)
    if result.affected and not apply:
        raise CheckFailed(
            f"{len(result.affected)} case(s) hold secrets the current rules redact: "
            "run rescan again with --apply to rewrite them"
        )
