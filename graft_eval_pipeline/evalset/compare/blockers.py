"""Per-case blockers that hold under run-to-run noise: a case blocks only when it reproduces.

A live model answers a case differently from run to run: at 5% class noise, 100 cases hold ~30
sensitive ones, and one of them comes out under-classified in a single rerun more often than not,
with nothing changed. So one trial cannot tell a flip from a regression, and a gate that blocks on
one trial fails most reruns. Here a shared case's event (under-classified from sensitive gold;
unavailable with a sensitive floor) counts over every trial each run has of it, and it blocks only
when the new run shows it in too many trials to be a flip at the tolerated rate FLIP_TOLERANCE:
the one-sided exact binomial test P(X >= shown | trials, FLIP_TOLERANCE) <= BLOCKER_ALPHA / tests,
Bonferroni over the tests of the comparison (one per eligible case and kind), and the base run
showed it in none of its trials, at least BASE_TRIALS of them. Under no change, with every case
flipping at most at the tolerated rate, a false blocker then happens in at most BLOCKER_ALPHA of
comparisons whatever the set size (a case failing in most runs passes BASE_TRIALS clean base
trials with probability at most FLIP_TOLERANCE ** BASE_TRIALS). A case that cannot block with
the trials at hand but could with `confirm_trials` of them is *unconfirmed* (the live gate
re-runs it; see `evaluate`); one that showed the event in some trials but cannot reach the count
is *flaky*, reported as such and never as a regression. Scripted (fake) answers repeat exactly,
so there a single trial decides.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from graft_eval_pipeline.card import RISK_ORDER, CamelModel
from graft_eval_pipeline.evalset.scoring import CaseRow, EvalReport

BlockerKind = Literal["newly_under_classified_sensitive", "newly_unavailable_sensitive_floor"]
FLIP_TOLERANCE = 0.10
"""The per-case flip rate the gate treats as noise: a case that shows an event in at most this
share of runs, with nothing changed, blocks in at most BLOCKER_ALPHA of comparisons."""
BLOCKER_ALPHA = 0.025
"""The gate's false-alarm budget for blockers (the rates' regressions take the other 0.025)."""
CONFIRM_POWER = 0.80
"""Confirmation trials are enough to block, with this probability, a case that now shows the
event in 1 - FLIP_TOLERANCE of runs (a case that really regressed)."""
MAX_CONFIRM_TRIALS = 12
BASE_TRIALS = 3
"""Trials of a case the live base run needs, none showing the event, before the case can block:
with one, a case that is under-classified in most runs but happened to be right in the
baseline's one trial would block whenever it reproduces (a stable failure, not a change)."""


def binom_sf(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), summed exactly term by term."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return min(1.0, sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1)))


def critical_count(trials: int, tests: int) -> int | None:
    """The fewest trials out of `trials` showing an event that make it a blocker among `tests` tests.

    None when even every trial showing it would not be enough.
    """
    level = BLOCKER_ALPHA / max(tests, 1)
    for shown in range(1, trials + 1):
        if binom_sf(shown, trials, FLIP_TOLERANCE) <= level:
            return shown
    return None


def confirm_trials(tests: int) -> int:
    """Trials a candidate needs in all (the one that raised it included).

    The fewest with which a really regressed case (shown in 1 - FLIP_TOLERANCE of runs) blocks with
    CONFIRM_POWER.
    """
    for trials in range(1, MAX_CONFIRM_TRIALS + 1):
        needed = critical_count(trials, tests)
        if needed is not None and binom_sf(needed, trials, 1 - FLIP_TOLERANCE) >= CONFIRM_POWER:
            return trials
    return MAX_CONFIRM_TRIALS


def _under_sensitive(row: CaseRow) -> bool:
    return (
        row.gold is not None
        and row.gold.risk == "sensitive"
        and row.final is not None
        and RISK_ORDER[row.final] < RISK_ORDER["sensitive"]
    )


@dataclass(frozen=True)
class KindSpec:
    kind: BlockerKind
    eligible: Callable[[CaseRow], bool]
    event: Callable[[CaseRow], bool]


KINDS: tuple[KindSpec, ...] = (
    KindSpec(
        "newly_under_classified_sensitive",
        lambda r: r.gold is not None and r.gold.risk == "sensitive",
        _under_sensitive,
    ),
    KindSpec(
        "newly_unavailable_sensitive_floor",
        lambda r: r.floor == "sensitive",
        lambda r: r.status == "unavailable",
    ),
)


class Blocker(CamelModel):
    """A case whose event reproduced: `shown` of `trials` new-run trials (base: of its trials)."""

    id: str
    kind: BlockerKind
    detail: str
    shown: int
    trials: int
    base_shown: int
    base_trials: int


class Candidate(CamelModel):
    """A case that showed a blocker's event in the new run without reproducing enough.

    `unconfirmed` (more trials could make it block: it needs `needs_trials` in all in the new run,
    or `base_needs_trials` in the base run, which only a baseline saved with `--trials` has) or
    `flaky` (shown in some trials, not enough).
    """

    id: str
    kind: BlockerKind
    shown: int
    trials: int
    base_shown: int
    base_trials: int
    needs_trials: int | None
    base_needs_trials: int | None = None


class BlockerRule(CamelModel):
    """The rule a comparison's blockers were decided by.

    `tests` eligible (case, kind) pairs, each at level alpha / tests against flips at
    `flip_tolerance`; a candidate needs `confirm_trials` trials in all; `deterministic` (scripted
    runs): one trial decides.
    """

    tests: int
    deterministic: bool
    flip_tolerance: float
    alpha: float
    confirm_trials: int


@dataclass(frozen=True)
class BlockerDecision:
    """Every per-case decision of one comparison and the rule behind it."""

    blockers: list[Blocker]
    unconfirmed: list[Candidate]
    flaky: list[Candidate]
    rule: BlockerRule


def trials_by_case(report: EvalReport, *, confirmation: bool = True) -> dict[str, list[CaseRow]]:
    """Every trial's row of each case that ran.

    Trial 0, `--trials` rows and (`confirmation`) the confirmation rows of the live gate. The rates
    leave the latter out: only the candidates have them, so they would weigh those cases more.
    """
    rows: dict[str, list[CaseRow]] = defaultdict(list)
    extra: Iterable[CaseRow] = report.trials.rows if report.trials is not None else ()
    confirmed: Iterable[CaseRow] = (
        report.confirmation.rows if confirmation and report.confirmation is not None else ()
    )
    for row in (*report.cases, *extra, *confirmed):
        if row.skipped is None:
            rows[row.id].append(row)
    return rows


def _count(rows: list[CaseRow], event: Callable[[CaseRow], bool]) -> tuple[int, int]:
    return sum(event(r) for r in rows), len(rows)


def _detail(
    spec: KindSpec, old: CaseRow, cur: CaseRow, shown: int, trials: int, base: tuple[int, int]
) -> str:
    what = (
        f"gold sensitive, final {old.final} → {cur.final}"
        if spec.kind == "newly_under_classified_sensitive"
        else f"floor sensitive, status {old.status} → unavailable"
    )
    return f"{what}; in {shown} of {trials} trial(s), base {base[0]} of {base[1]}"


def decide_blockers(
    base: dict[str, list[CaseRow]], new: dict[str, list[CaseRow]], ids: list[str], *, deterministic: bool
) -> BlockerDecision:
    """The per-case decision over the paired `ids`, from every trial of each run (trial 0 first).

    `deterministic` (both runs scripted): answers repeat exactly, so one trial decides.
    """
    eligible = [(spec, i) for i in ids for spec in KINDS if spec.eligible(new[i][0])]
    tests = len(eligible)
    needed_trials = 1 if deterministic else confirm_trials(tests)
    blockers: list[Blocker] = []
    unconfirmed: list[Candidate] = []
    flaky: list[Candidate] = []
    for spec, case_id in eligible:
        base_shown, base_trials = _count(base[case_id], spec.event)
        shown, trials = _count(new[case_id], spec.event)
        if shown == 0 or base_shown > 0:
            continue  # nothing new: not shown now, or shown in the base run already
        if deterministic:
            needed: int | None = 1
        else:
            needed = critical_count(trials, tests)
        base_short = not deterministic and base_trials < BASE_TRIALS
        if needed is not None and shown >= needed and not base_short:
            old, cur = base[case_id][0], new[case_id][0]
            blockers.append(
                Blocker(
                    id=case_id,
                    kind=spec.kind,
                    detail=_detail(spec, old, cur, shown, trials, (base_shown, base_trials)),
                    shown=shown,
                    trials=trials,
                    base_shown=base_shown,
                    base_trials=base_trials,
                )
            )
            continue
        reproduced = needed is not None and shown >= needed
        at_most = critical_count(max(needed_trials, trials), tests)
        can_reach = reproduced or (
            trials < needed_trials and at_most is not None and shown + needed_trials - trials >= at_most
        )
        candidate = Candidate(
            id=case_id,
            kind=spec.kind,
            shown=shown,
            trials=trials,
            base_shown=base_shown,
            base_trials=base_trials,
            needs_trials=None if reproduced or not can_reach else needed_trials,
            base_needs_trials=BASE_TRIALS if base_short else None,
        )
        (unconfirmed if can_reach else flaky).append(candidate)
    rule = BlockerRule(
        tests=tests,
        deterministic=deterministic,
        flip_tolerance=FLIP_TOLERANCE,
        alpha=BLOCKER_ALPHA,
        confirm_trials=needed_trials,
    )
    return BlockerDecision(blockers, unconfirmed, flaky, rule)
