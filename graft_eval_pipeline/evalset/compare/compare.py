"""Did the change help? Two reports compared case by case, with a noise model and a verdict.

The baseline diff says *whether* anything changed; this says whether the rates moved more than
case-to-case noise allows. Rows pair by case id; each headline rate gets both values with k/n,
the paired difference with a bootstrap interval over case ids, the discordant counts and an exact
McNemar p-value; a safety rate with a margin in thresholds.json also gets a non-inferiority
verdict on the upper end of that interval. Blockers override the statistics: a shared case
newly under-classified from sensitive gold, or newly unavailable with a sensitive floor, that
reproduces over the runs' trials (`blockers` says when it does). Everything here is ids,
classes, counts and rates (no case content), so it can be printed and stored as Dagster metadata.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from graft_eval_pipeline.card import RISK_ORDER, CamelModel, RiskClass
from graft_eval_pipeline.evalset.compare.blockers import (
    Blocker,
    BlockerDecision,
    BlockerRule,
    Candidate,
    decide_blockers,
    trials_by_case,
)
from graft_eval_pipeline.evalset.compare.paired_stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    MIN_RESAMPLES,
    holm_adjusted,
    min_detectable_difference,
    paired_rate_differences,
    percentile_interval,
    trials_exact_p,
)
from graft_eval_pipeline.evalset.scoring import CaseRow, EvalReport, changed_decisions, round_down, round_up
from graft_eval_pipeline.evalset.sets import EvalError

if TYPE_CHECKING:
    from graft_eval_pipeline.evalset.compare.paired_stats import FloatArray

Verdict = Literal["improved", "regressed", "no clear difference"]
MarginVerdict = Literal["better", "not worse (within margin)", "worse", "inconclusive at this n"]
Better = Literal["lower", "higher"]
ALPHA = 0.05
"""Two-sided, over the rates of the overall verdict together (Holm): a false "regressed" in at
most ALPHA / 2 of comparisons with no change; the blockers take the other BLOCKER_ALPHA."""
DETECT_POWER = 0.80
RATE_DECIMALS = 4


def _under(row: CaseRow, predicted: RiskClass | None) -> bool:
    return (
        row.gold is not None and predicted is not None and RISK_ORDER[predicted] < RISK_ORDER[row.gold.risk]
    )


def _scored(row: CaseRow, predicted: RiskClass | None) -> bool:
    return row.gold is not None and predicted is not None


def _flag_scored(row: CaseRow) -> bool:
    return row.gold is not None and row.status == "ok" and row.flag in ("tp", "fn")


@dataclass(frozen=True)
class RateSpec:
    """One rate as a per-case outcome: (is the case in the denominator, does it count)."""

    name: str
    better: Better
    outcome: Callable[[CaseRow], tuple[bool, bool]]
    overall: bool = True  # counts towards the overall verdict (the model-alone rates do not)


HEADLINE_RATES: tuple[RateSpec, ...] = (
    RateSpec("underClassificationFinal", "lower", lambda r: (_scored(r, r.final), _under(r, r.final))),
    RateSpec(
        "severeUnderClassificationFinal",
        "lower",
        lambda r: (
            _scored(r, r.final),
            r.gold is not None and r.gold.risk == "sensitive" and r.final == "trivial",
        ),
    ),
    RateSpec(
        "exactAccuracyFinal",
        "higher",
        lambda r: (_scored(r, r.final), r.gold is not None and r.final == r.gold.risk),
    ),
    RateSpec(
        "overClassificationFinal",
        "lower",
        lambda r: (
            _scored(r, r.final),
            r.gold is not None and r.final is not None and RISK_ORDER[r.final] > RISK_ORDER[r.gold.risk],
        ),
    ),
    RateSpec("unavailableRate", "lower", lambda r: (True, r.status == "unavailable")),
    RateSpec("flagRecall", "higher", lambda r: (_flag_scored(r), r.flag == "tp")),
    RateSpec(
        "underClassificationModel",
        "lower",
        lambda r: (_scored(r, r.model), _under(r, r.model)),
        overall=False,
    ),
    RateSpec(
        "exactAccuracyModel",
        "higher",
        lambda r: (_scored(r, r.model), r.gold is not None and r.model == r.gold.risk),
        overall=False,
    ),
)


def _severe(row: CaseRow) -> bool:
    return row.gold is not None and row.gold.risk == "sensitive" and row.final == "trivial"


SAFETY_RATES: dict[str, RateSpec] = {
    spec.name: spec
    for spec in (
        HEADLINE_RATES[0],
        HEADLINE_RATES[1],
        RateSpec(
            "severeUnderClassificationSensitiveFinal",
            "lower",
            lambda r: (_scored(r, r.final) and r.gold is not None and r.gold.risk == "sensitive", _severe(r)),
            overall=False,
        ),
        HEADLINE_RATES[4],
    )
}
"""The rates thresholds.json may give a non-inferiority margin (`nonInferiority`): lower is
better for each, and a rise beyond the margin is what a safety comparison must rule out."""


class RunSide(CamelModel):
    """What identifies one side of a comparison (ids and names only)."""

    run_id: str
    set_id: str
    llm: Literal["fake", "live"]
    prompt_version: str
    prompt_fingerprint: str
    models: str
    cases: int
    case_set_hash: str


class RateComparison(CamelModel):
    name: str
    better: Better
    in_overall: bool
    base_k: int
    base_n: int
    base: float | None
    new_k: int
    new_n: int
    new: float | None
    difference: float | None
    low: float | None
    high: float | None
    only_base: int  # cases counted by the base run only (in both denominators)
    only_new: int  # cases counted by the new run only
    mcnemar_p: float | None
    adjusted_p: float | None  # Holm over the rates of the overall verdict (the raw p for the others)
    detectable: float | None  # the smallest change this n and discordance detect with 80% power
    verdict: Verdict


class NonInferiority(CamelModel):
    """One safety rate against its margin: is the new run worse by more than `margin`?

    Decided on the paired difference's 95% bootstrap interval [low, high] (new − base, exact
    numbers; shown rounded outwards): `better` when high < 0, `not worse (within margin)` when
    high <= margin, `worse` when low > margin (worse by more than the margin), else
    `inconclusive at this n`.
    """

    name: str
    margin: float
    base_k: int
    base_n: int
    new_k: int
    new_n: int
    difference: float | None
    low: float | None
    high: float | None
    verdict: MarginVerdict


class CaseChange(CamelModel):
    """A shared case whose decisions changed (scoring/changes.py; `fields` names them).

    Ids and classes only. Usage alone never makes a changed case.
    """

    id: str
    fields: list[str]
    gold: RiskClass | None
    base_final: RiskClass | None
    new_final: RiskClass | None
    base_model: RiskClass | None
    new_model: RiskClass | None
    base_status: str | None
    new_status: str | None
    notes: list[str]


class FlakyCase(CamelModel):
    """A shared case whose trials answer differently within a run (a decision field differs).

    Its under-classification share in each run, `*_under` of `*_scored` trials. Reported as a flip,
    never as a changed case.
    """

    id: str
    gold: RiskClass | None
    base_trials: int
    new_trials: int
    base_under: int
    base_scored: int
    new_under: int
    new_scored: int


class UsageTotals(CamelModel):
    input_tokens: int
    output_tokens: int
    calls: int
    cost_usd: float | None


class Comparison(CamelModel):
    base: RunSide
    new: RunSide
    shared: int
    only_in_base: list[str]
    only_in_new: list[str]
    skipped: list[str]
    gold_differs: list[str]
    notes: list[str]
    warnings: list[str]
    resamples: int
    seed: int
    base_trials: int  # the most trials of a paired case in each run (rates use every trial)
    new_trials: int
    rates: list[RateComparison]
    verdict: Verdict
    non_inferiority: list[NonInferiority]
    blockers: list[Blocker]
    unconfirmed: list[Candidate]
    flaky: list[Candidate]
    blocker_rule: BlockerRule
    changed: list[CaseChange]
    flaky_cases: list[FlakyCase]
    base_usage: UsageTotals
    new_usage: UsageTotals
    usage_moved: bool  # tokens, calls or cost of the shared cases differ; never a changed case

    @property
    def failed(self) -> bool:
        """Whether the comparison exits 1: a regression, a safety rate past its margin, or a blocker.

        Exit 1 when a rate of the overall verdict regressed, a safety rate is worse than its margin,
        or a blocker fired.
        """
        return (
            self.verdict == "regressed"
            or any(m.verdict == "worse" for m in self.non_inferiority)
            or bool(self.blockers)
        )


def run_side(report: EvalReport) -> RunSide:
    return RunSide(
        run_id=report.run_id,
        set_id=report.set.set_id,
        llm=report.llm,
        prompt_version=report.prompt.prompt_version,
        prompt_fingerprint=report.prompt.prompt_fingerprint,
        models=f"{report.models.fast} / {report.models.strong}",
        cases=len(report.cases),
        case_set_hash=report.set.case_set_hash,
    )


def _rate(k: int, n: int) -> float | None:
    return round(k / n, RATE_DECIMALS) if n else None


def _verdict(spec: RateSpec, low: float | None, high: float | None, p: float | None) -> Verdict:
    """Whether a rate moved: its interval excludes zero and (binary outcome) McNemar agrees.

    `p` is adjusted for the other rates of the overall verdict.
    """
    if low is None or high is None or p is None or p >= ALPHA or low <= 0 <= high:
        return "no clear difference"
    worse = (low > 0) == (spec.better == "lower")
    return "regressed" if worse else "improved"


@dataclass(frozen=True)
class _Counts:
    """One rate's paired counts over every trial.

    Each run's k/n (case-trials), the cases where one run's per-case share is higher (`only_base` /
    `only_new`: with one trial each, the discordant pairs), the cases in both, and the exact p over
    their trials (`trials_exact_p`).
    """

    base_k: int
    base_n: int
    new_k: int
    new_n: int
    only_base: int
    only_new: int
    both: int
    p: float | None
    first_discordant: int  # cases of `both` whose trial 0 counts in one run only (McNemar's pairs)

    @property
    def defined(self) -> bool:
        return self.base_n > 0 and self.new_n > 0


def detectable_difference(counts: _Counts, alpha: float) -> float | None:
    """The smallest change of the rate these paired cases detect at `alpha` with DETECT_POWER.

    At their observed discordance, with the exact McNemar power; None without shared cases.

    From trial 0 of each run: more trials only add information, so the runs' trials detect at
    least this (a share-based discordance would count a case under in 1 of 3 trials against 0
    of 1 as discordant and overstate the noise).
    """
    if not counts.both:
        return None
    discordance = counts.first_discordant / counts.both
    found = min_detectable_difference(counts.both, discordance, alpha, DETECT_POWER)
    return None if found is None else round_up(found)


Trials = list[list[CaseRow]]
"""Paired cases in one order, each as its rows of one run (trial 0 first, then `--trials` rows)."""


def _case_sums(cases: Trials, specs: list[RateSpec]) -> FloatArray:
    """(cases × specs × 2): per case, the trials in each rate's denominator and those counted."""
    import numpy as np

    outcomes = [spec.outcome for spec in specs]
    flat: list[float] = []  # summed in Python, one array at the end: numpy's item access is slow
    for rows in cases:
        sums = [0.0] * (2 * len(outcomes))
        for row in rows:
            for j, outcome in enumerate(outcomes):
                inside, counted = outcome(row)
                if inside:
                    sums[2 * j] += 1
                    sums[2 * j + 1] += counted
        flat += sums
    return np.array(flat, dtype=np.float64).reshape(len(cases), len(specs), 2)


def _paired(
    base: Trials, new: Trials, specs: list[RateSpec], *, resamples: int, seed: int
) -> tuple[list[_Counts], FloatArray]:
    """Each spec's paired counts over every trial, and the case-clustered bootstrap replicates of new − base.

    The replicates are resamples × specs: one draw over case ids for all of them, each case with all
    its trials (a cluster bootstrap: the trials of a case are not independent).
    """
    import numpy as np

    b, c = _case_sums(base, specs), _case_sums(new, specs)
    # Each case's first trial alone (for the detectable difference); a run of one trial is that already.
    b0 = b if all(len(rows) == 1 for rows in base) else _case_sums([rows[:1] for rows in base], specs)
    c0 = c if all(len(rows) == 1 for rows in new) else _case_sums([rows[:1] for rows in new], specs)
    b_den, b_num, n_den, n_num = b[..., 0], b[..., 1], c[..., 0], c[..., 1]
    replicates = paired_rate_differences(b_num, b_den, n_num, n_den, resamples=resamples, seed=seed)
    counts = []
    for j in range(len(specs)):
        both = (b_den[:, j] > 0) & (n_den[:, j] > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            b_share, n_share = b_num[:, j] / b_den[:, j], n_num[:, j] / n_den[:, j]
        shared = np.stack([b_den[both, j], b_num[both, j], n_den[both, j], n_num[both, j]], axis=1)
        tables = [(a, b, c, d) for a, b, c, d in shared.astype(np.int64).tolist()]
        counts.append(
            _Counts(
                base_k=int(b_num[:, j].sum()),
                base_n=int(b_den[:, j].sum()),
                new_k=int(n_num[:, j].sum()),
                new_n=int(n_den[:, j].sum()),
                only_base=int((both & (b_share > n_share)).sum()),
                only_new=int((both & (n_share > b_share)).sum()),
                both=int(both.sum()),
                p=trials_exact_p(tables) if tables else None,
                first_discordant=int(
                    (both & (b0[:, j, 0] > 0) & (c0[:, j, 0] > 0) & (b0[:, j, 1] != c0[:, j, 1])).sum()
                ),
            )
        )
    return counts, replicates


def _difference(k: _Counts) -> float | None:
    return round(k.new_k / k.new_n - k.base_k / k.base_n, RATE_DECIMALS) if k.defined else None


def compare_rates(base: Trials, new: Trials, *, resamples: int, seed: int) -> list[RateComparison]:
    """Every headline rate over the paired cases' trials (same ids, same order).

    The exact p of the rates in the overall verdict is Holm-adjusted over them, so the verdict's
    family-wise error stays at ALPHA; the model-alone rates keep their own p.
    """
    counts, replicates = _paired(base, new, list(HEADLINE_RATES), resamples=resamples, seed=seed)
    family = holm_adjusted(
        [k.p if spec.overall else None for k, spec in zip(counts, HEADLINE_RATES, strict=True)]
    )
    family_size = sum(spec.overall for spec in HEADLINE_RATES)
    results = []
    for j, (spec, k, held) in enumerate(zip(HEADLINE_RATES, counts, family, strict=True)):
        adjusted = held if spec.overall else k.p
        interval = percentile_interval(replicates[:, j]) if k.defined else None
        results.append(
            RateComparison(
                name=spec.name,
                better=spec.better,
                in_overall=spec.overall,
                base_k=k.base_k,
                base_n=k.base_n,
                base=_rate(k.base_k, k.base_n),
                new_k=k.new_k,
                new_n=k.new_n,
                new=_rate(k.new_k, k.new_n),
                difference=_difference(k),
                low=round_down(interval.low) if interval else None,
                high=round_up(interval.high) if interval else None,
                only_base=k.only_base,
                only_new=k.only_new,
                mcnemar_p=k.p,
                adjusted_p=adjusted,
                detectable=detectable_difference(k, ALPHA / family_size if spec.overall else ALPHA),
                verdict=_verdict(
                    spec, interval.low if interval else None, interval.high if interval else None, adjusted
                ),
            )
        )
    return results


def margin_verdict(low: float | None, high: float | None, margin: float) -> MarginVerdict:
    """Non-inferiority of a lower-is-better rate from the paired difference's interval."""
    if low is None or high is None:
        return "inconclusive at this n"
    if high < 0:
        return "better"
    if high <= margin:
        return "not worse (within margin)"
    return "worse" if low > margin else "inconclusive at this n"


def non_inferiority(
    base: Trials, new: Trials, margins: dict[str, float], *, resamples: int, seed: int
) -> list[NonInferiority]:
    """The safety rates that have a margin, each judged on its paired interval (SAFETY_RATES)."""
    specs = [SAFETY_RATES[name] for name in SAFETY_RATES if name in margins]
    if not specs:
        return []
    counts, replicates = _paired(base, new, specs, resamples=resamples, seed=seed)
    results = []
    for j, (spec, k) in enumerate(zip(specs, counts, strict=True)):
        interval = percentile_interval(replicates[:, j]) if k.defined else None
        low, high = (interval.low, interval.high) if interval else (None, None)
        results.append(
            NonInferiority(
                name=spec.name,
                margin=margins[spec.name],
                base_k=k.base_k,
                base_n=k.base_n,
                new_k=k.new_k,
                new_n=k.new_n,
                difference=_difference(k),
                low=round_down(low) if low is not None else None,
                high=round_up(high) if high is not None else None,
                verdict=margin_verdict(low, high, margins[spec.name]),
            )
        )
    return results


def overall_verdict(rates: list[RateComparison]) -> Verdict:
    counted = [r.verdict for r in rates if r.in_overall]
    if "regressed" in counted:
        return "regressed"
    return "improved" if "improved" in counted else "no clear difference"


@dataclass(frozen=True)
class GateDecision:
    """What the gate decides from paired rows: the rates, the overall verdict, the per-case blockers.

    `compare_reports` and the decision benchmark (bench/bench_decisions.py) share it.
    """

    rates: list[RateComparison]
    verdict: Verdict
    per_case: BlockerDecision

    @property
    def failed(self) -> bool:
        """The rates and blockers only (the benchmark's gate; margins are the set's own)."""
        return self.verdict == "regressed" or bool(self.per_case.blockers)


def decide(
    old: Trials,
    cur: Trials,
    base_trials: dict[str, list[CaseRow]],
    new_trials: dict[str, list[CaseRow]],
    *,
    deterministic: bool,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> GateDecision:
    """The rates on the paired cases' trials, and the blockers on every trial of each run.

    The rates use `old` / `cur` (trial 0 and `--trials` rows); the blockers include the confirmation
    rows.
    """
    rates = compare_rates(old, cur, resamples=resamples, seed=seed)
    per_case = decide_blockers(
        base_trials, new_trials, [rows[0].id for rows in cur], deterministic=deterministic
    )
    return GateDecision(rates, overall_verdict(rates), per_case)


def _notes(old: CaseRow, cur: CaseRow) -> list[str]:
    notes = []
    if _under(cur, cur.final) and not _under(old, old.final):
        notes.append("newly under-classified")
    elif _under(old, old.final) and not _under(cur, cur.final):
        notes.append("no longer under-classified")
    if cur.status == "unavailable" and old.status != "unavailable":
        notes.append("newly unavailable")
    elif old.status == "unavailable" and cur.status != "unavailable":
        notes.append("available again")
    return notes


def _stable(rows: list[CaseRow]) -> bool:
    return not any(changed_decisions(rows[0], row) for row in rows[1:])


def changed_cases(base: Trials, new: Trials) -> list[CaseChange]:
    """Cases that decide the same in every trial of each run, and differently between the runs."""
    return [
        CaseChange(
            id=cur.id,
            fields=fields,
            gold=cur.gold.risk if cur.gold is not None else None,
            base_final=old.final,
            new_final=cur.final,
            base_model=old.model,
            new_model=cur.model,
            base_status=old.status,
            new_status=cur.status,
            notes=_notes(old, cur),
        )
        for old_rows, cur_rows in zip(base, new, strict=True)
        for old, cur in [(old_rows[0], cur_rows[0])]
        if _stable(old_rows) and _stable(cur_rows)
        for fields in [changed_decisions(old, cur)]
        if fields
    ]


def _under_count(rows: list[CaseRow]) -> tuple[int, int]:
    scored = [r for r in rows if _scored(r, r.final)]
    return sum(_under(r, r.final) for r in scored), len(scored)


def flaky_cases(base: Trials, new: Trials) -> list[FlakyCase]:
    """Cases whose trials answer differently within a run: a flip, never a change."""
    found = []
    for old_rows, cur_rows in zip(base, new, strict=True):
        if _stable(old_rows) and _stable(cur_rows):
            continue
        (base_under, base_scored), (new_under, new_scored) = _under_count(old_rows), _under_count(cur_rows)
        gold = cur_rows[0].gold
        found.append(
            FlakyCase(
                id=cur_rows[0].id,
                gold=gold.risk if gold is not None else None,
                base_trials=len(old_rows),
                new_trials=len(cur_rows),
                base_under=base_under,
                base_scored=base_scored,
                new_under=new_under,
                new_scored=new_scored,
            )
        )
    return found


def usage_totals(rows: list[CaseRow]) -> UsageTotals:
    costs = [r.cost_usd for r in rows]
    return UsageTotals(
        input_tokens=sum(r.usage.input_tokens for r in rows),
        output_tokens=sum(r.usage.output_tokens for r in rows),
        calls=sum(r.usage.calls for r in rows),
        cost_usd=None if None in costs else round(sum(c or 0.0 for c in costs), 6),
    )


def _short(fingerprint: str) -> str:
    return fingerprint[:8]


SCRIPTED_PROMPT_NOTE = (
    "scripted (fake) answers cannot reflect a prompt change: both runs answer from the cases' "
    "scripts, so this tests the pipeline, not the prompt (compare live runs for that)"
)


def header_notes(base: EvalReport, new: EvalReport) -> list[str]:
    """What else differs between the runs, stated rather than refused."""
    notes = []
    if base.set.set_id != new.set.set_id:
        notes.append(f"other set: {base.set.set_id} → {new.set.set_id}")
    bp, np_ = base.prompt, new.prompt
    if bp.prompt_fingerprint != np_.prompt_fingerprint or bp.prompt_version != np_.prompt_version:
        notes.append(
            f"other prompt: {bp.prompt_version} ({_short(bp.prompt_fingerprint)}) → "
            f"{np_.prompt_version} ({_short(np_.prompt_fingerprint)})"
        )
        if base.llm == new.llm == "fake":
            notes.append(SCRIPTED_PROMPT_NOTE)
    if bp.engine_fingerprint != np_.engine_fingerprint:
        notes.append(
            f"other engine code: {_short(bp.engine_fingerprint or 'unrecorded')} → "
            f"{_short(np_.engine_fingerprint or 'unrecorded')}"
        )
    if base.models != new.models:
        notes.append(f"other models: {run_side(base).models} → {run_side(new).models}")
    if base.llm != new.llm:
        notes.append(f"other mode: {base.llm} → {new.llm}")
    return notes


def compare_reports(
    base: EvalReport,
    new: EvalReport,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    margins: dict[str, float] | None = None,
) -> Comparison:
    """Pair the runs' rows by case id and compare; EvalError when nothing can be paired.

    `margins` (thresholds.json's `nonInferiority` for the set's kind) adds a non-inferiority verdict
    for each safety rate that has one.
    """
    if resamples < MIN_RESAMPLES:
        raise EvalError(f"resamples must be at least {MIN_RESAMPLES:,} for a stable 95% interval")
    base_rows = {r.id: r for r in base.cases}
    new_rows = {r.id: r for r in new.cases}
    shared_ids = sorted(set(base_rows) & set(new_rows))
    skipped = [i for i in shared_ids if base_rows[i].skipped is not None or new_rows[i].skipped is not None]
    left_out = set(skipped)
    paired = [i for i in shared_ids if i not in left_out]
    if not paired:
        raise EvalError(
            f"runs {base.run_id} and {new.run_id} share no case that ran in both: nothing to compare"
        )
    base_runs, new_runs = trials_by_case(base, confirmation=False), trials_by_case(new, confirmation=False)
    old = [base_runs[i] for i in paired]
    cur = [new_runs[i] for i in paired]
    only_base = sorted(set(base_rows) - set(new_rows))
    only_new = sorted(set(new_rows) - set(base_rows))
    gold_differs = [i for i in shared_ids if base_rows[i].gold != new_rows[i].gold]
    warnings = []
    if only_base or only_new:
        warnings.append(
            f"the runs cover different cases: compared on the {len(paired)} shared ones "
            f"({len(only_base)} only in base, {len(only_new)} only in new)"
        )
    if gold_differs:
        warnings.append(
            f"gold differs on {len(gold_differs)} shared case(s) ({', '.join(gold_differs)}): "
            "each run is scored against its own gold"
        )
    if skipped:
        warnings.append(f"{len(skipped)} shared case(s) skipped in one run (budget or secret) are left out")
    gate = decide(
        old,
        cur,
        trials_by_case(base),
        trials_by_case(new),
        deterministic=base.llm == new.llm == "fake",
        resamples=resamples,
        seed=seed,
    )
    per_case = gate.per_case
    base_usage = usage_totals([base_rows[i] for i in paired])
    new_usage = usage_totals([new_rows[i] for i in paired])
    return Comparison(
        base=run_side(base),
        new=run_side(new),
        shared=len(paired),
        only_in_base=only_base,
        only_in_new=only_new,
        skipped=skipped,
        gold_differs=gold_differs,
        notes=header_notes(base, new),
        warnings=warnings,
        resamples=resamples,
        seed=seed,
        rates=gate.rates,
        verdict=gate.verdict,
        non_inferiority=non_inferiority(old, cur, margins or {}, resamples=resamples, seed=seed),
        blockers=per_case.blockers,
        unconfirmed=per_case.unconfirmed,
        flaky=per_case.flaky,
        blocker_rule=per_case.rule,
        base_trials=max(len(rows) for rows in old),
        new_trials=max(len(rows) for rows in cur),
        changed=changed_cases(old, cur),
        flaky_cases=flaky_cases(old, cur),
        base_usage=base_usage,
        new_usage=new_usage,
        usage_moved=base_usage != new_usage,
    )
