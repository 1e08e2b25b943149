"""What a run is asked to do.

`RunSettings` (what the user chose), `RunOptions` (everything the harness needs), their defaults,
and the case selection (--cases, --tag).

The CLI's `run` flags and the Dagster `harness_run` config both become one `RunSettings`, which
checks the rules between settings once, and `RunSettings.run_options` turns it into the
`RunOptions` both hand to the harness; every default they show comes from here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Protocol

from graft_eval_pipeline.card import RISK_ORDER, CardResult, GenerateOptions, LlmClient, Models, RiskClass
from graft_eval_pipeline.evalset.run.budget import DEFAULT_MAX_COST_USD, DEFAULT_MAX_TOKENS, Estimate
from graft_eval_pipeline.evalset.scoring import GitInfo, git_info
from graft_eval_pipeline.evalset.sets import CaseSet, EvalCase, EvalEnv, EvalError, list_case_ids

DEFAULT_CONCURRENCY = {"fake": 8, "live": 4}
DEFAULT_CONCURRENCY_TEXT = f"{DEFAULT_CONCURRENCY['live']} live, {DEFAULT_CONCURRENCY['fake']} fake"
"""How the CLI's help and the Dagster config show the default concurrency."""
DEFAULT_TIMEOUT_MS = 120_000
CODE_DIR = Path(__file__).resolve().parent


def monotonic_ms() -> int:
    """The run's clock (RunOptions.now_ms), by name so a test can stand in for it."""
    return time.monotonic_ns() // 1_000_000


@dataclass(frozen=True)
class ProgressEvery:
    """Summarise progress instead of a line per case.

    At most one summary per `cases` cases (default: a tenth of the run) or per `seconds` seconds,
    whichever comes first, none before the run has taken `quiet_seconds` (a step shorter than that
    logs no progress at all, not even its closing summary), and the first `max_failures`
    unavailable, skipped or under-classified cases one by one. Dagster uses it (each log line there
    is an event in its database), and so does the CLI when stderr is not a terminal.
    """

    cases: int | None = None
    seconds: float = 10.0
    max_failures: int = 20
    quiet_seconds: float = 1.0


class ProgressBar(Protocol):
    """A live view of a run's progress (the CLI's bar on a terminal).

    Told the total, then each finished case's count and status counts, and the lines worth keeping
    (failed and skipped cases: ids and classes only). `finish` ends the view; it may be called more
    than once.
    """

    def start(self, total: int) -> None: ...

    def advance(self, done: int, counts: str) -> None: ...

    def note(self, line: str) -> None: ...

    def finish(self) -> None: ...


@dataclass(frozen=True)
class RunOptions:
    """Everything a run needs; clocks, the live client and the confirmation are injected.

    `progress` receives the live estimate and then one line per case holding its id and
    classes only, or with `progress_every` summary lines and the failed or skipped cases.
    `progress_bar` (a terminal) shows the cases instead of `progress`, with the same
    failed or skipped case lines above it.
    `on_estimate` sees the live estimate before the confirmation and before any call (Dagster
    records it as metadata). `on_case` sees each case of the set, selected or not, as the first
    pass reads it (the evaluation keeps their labels to measure labeler agreement, without
    reading the set again or holding the cases). `on_result` sees each case and its card as it
    ends (the synthetic set's report.html shows the cards).
    `confirm` is required in live mode.
    `allow_secrets` sends a live case even when the secret rules find a secret in its prompt
    text (by default it is skipped as `secret_detected`).
    `batch` sends live calls through the Message Batches API (half price, answers within 24 h);
    `adaptive` paces interactive calls with the adaptive limiter (off only to compare, in the
    bench). `clock` (monotonic seconds) and `sleep` pace the limiter and the batch polling.
    """

    set: CaseSet
    mode: Literal["fake", "live"] = "fake"
    llm_factory: Callable[[], LlmClient] | None = None
    models: Models = field(default_factory=Models)
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    concurrency: int | None = None
    max_cost_usd: float = DEFAULT_MAX_COST_USD
    max_tokens: int = DEFAULT_MAX_TOKENS
    use_cache: bool = True
    allow_secrets: bool = False
    case_filter: Callable[[str, list[str]], bool] | None = None
    confirm: Callable[[Estimate], Awaitable[bool]] | None = None
    on_estimate: Callable[[Estimate], None] | None = None
    on_case: Callable[[EvalCase], None] | None = None
    on_result: Callable[[EvalCase, CardResult], None] | None = None
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    now_ms: Callable[[], int] = field(default=lambda: monotonic_ms())
    progress: Callable[[str], None] | None = None
    progress_every: ProgressEvery | None = None
    progress_bar: ProgressBar | None = None
    git: Callable[[], GitInfo] = field(default=lambda: git_info(CODE_DIR))
    batch: bool = False
    adaptive: bool = True
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    trials: int = 1
    """Runs of each case (--trials): each trial has its own cache entry; rows carry the trial."""
    card_results: str | None = None
    """A path inside the set where each card result is written as its case ends (sealed in a
    pilot set; the Dagster harness asset keeps them); None keeps none (the CLI's runs)."""

    @property
    def effective_concurrency(self) -> int:
        return self.concurrency if self.concurrency is not None else DEFAULT_CONCURRENCY[self.mode]


def generate_options(case: EvalCase, models: Models, timeout_ms: int) -> GenerateOptions:
    """The case's floorConfig reaches the floor through the configured sensitive globs."""
    return GenerateOptions(
        models=models,
        extra_sensitive_globs=tuple(case.floor_config.extra_sensitive_globs),
        timeout_ms=timeout_ms,
    )


def progress_line(
    case_id: str, result: CardResult, *, cached: bool = False, gold: RiskClass | None = None
) -> str:
    """Ids and classes only; `under-classified (gold <class>)` when the final class is below gold."""
    line = f"{case_id} floor {result.risk.floor} final {result.risk.final} {result.status}"
    line += f" ({result.failure_reason})" if result.failure_reason else ""
    if under_classified(result, gold):
        line += f" under-classified (gold {gold})"
    return line + (" cached" if cached else "")


def under_classified(result: CardResult, gold: RiskClass | None) -> bool:
    return gold is not None and RISK_ORDER[result.risk.final] < RISK_ORDER[gold]


def case_filter_for(
    cs: CaseSet, case_ids: Sequence[str], tag: str | None
) -> Callable[[str, list[str]], bool] | None:
    """--cases and --tag; an unknown id is a usage error, not an empty run."""
    wanted = set(case_ids)
    unknown = sorted(wanted - set(list_case_ids(cs)))
    if unknown:
        raise EvalError(f"--cases: {len(unknown)} id(s) not in set {cs.set_id}: {', '.join(unknown)}")
    if not wanted and tag is None:
        return None
    return lambda case_id, tags: (not wanted or case_id in wanted) and (tag is None or tag in tags)


@dataclass(frozen=True)
class SettingNames:
    """How a shell names the settings in the messages of `RunSettings`' rules.

    The CLI's flags or the Dagster config's keys.
    """

    batch: str
    """The batch setting as the user wrote it."""
    trials: str
    add_live: str
    """What to do to make the run live."""
    live_needs_cap: str
    """The whole message when a live run has no cost cap."""


@dataclass(frozen=True)
class RunSettings:
    """What the user asked of a run: the `graft-eval run` flags or the `harness_run` config.

    Built once per command or asset; the rules between settings hold here and only here (each
    raises `EvalError` in the words of `names`): batch sends live calls, so it needs live mode;
    batch runs one trial of each case; a live run needs a cost cap.
    """

    names: SettingNames
    cases: tuple[str, ...] = ()
    tag: str | None = None
    live: bool = False
    concurrency: int | None = None
    max_cost_usd: float | None = DEFAULT_MAX_COST_USD
    """The live cost cap; None only where the shell has no default (Dagster), which live refuses."""
    max_tokens: int = DEFAULT_MAX_TOKENS
    use_cache: bool = True
    allow_secrets: bool = False
    batch: bool = False
    trials: int = 1

    def __post_init__(self) -> None:
        names = self.names
        if self.batch and not self.live:
            raise EvalError(
                f"{names.batch} sends live calls through the Message Batches API: {names.add_live}"
            )
        if self.batch and self.trials > 1:
            raise EvalError(
                f"{names.batch} runs one trial of each case: drop {names.trials} or {names.batch}"
            )
        if self.live and self.max_cost_usd is None:
            raise EvalError(names.live_needs_cap)

    @property
    def mode(self) -> Literal["fake", "live"]:
        return "live" if self.live else "fake"

    def run_options(
        self,
        cs: CaseSet,
        env: EvalEnv,
        *,
        llm: Callable[[EvalEnv], LlmClient],
        confirm: Callable[[Estimate], Awaitable[bool]],
    ) -> RunOptions:
        """The harness's options for set `cs`.

        `llm` builds the live client from `env` and `confirm` answers the estimate (both only in
        live mode). Progress and the other hooks are the shell's (`dataclasses.replace`).
        """
        return RunOptions(
            set=cs,
            mode=self.mode,
            llm_factory=(lambda: llm(env)) if self.live else None,
            models=env.models(),
            timeout_ms=env.timeout_ms,
            concurrency=self.concurrency,
            max_cost_usd=DEFAULT_MAX_COST_USD if self.max_cost_usd is None else self.max_cost_usd,
            max_tokens=self.max_tokens,
            use_cache=self.use_cache,
            allow_secrets=self.allow_secrets,
            case_filter=case_filter_for(cs, self.cases, self.tag),
            confirm=confirm if self.live else None,
            progress_every=ProgressEvery(),
            batch=self.batch,
            trials=self.trials,
        )
