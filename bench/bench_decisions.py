"""Error rates of the comparison gate under run-to-run noise, by simulation with the gate's own code.

Run: .venv/bin/python bench/bench_decisions.py [--sims N] [--seed S] [--processes P] [--quick]
Targets (issue 22): with no change, exit 1 in at most 5% of comparisons; a regression of the size
the comparison says it can detect (`detectable` of underClassificationFinal) caught in at least
80%; interval coverage 93-97%.

Model. Each simulated set draws n cases: gold trivial / logic / sensitive with 40 / 30 / 30%; the
floor of a sensitive case is sensitive in half of them (else trivial or logic), of a logic case
logic in 40% (else trivial), of a trivial case trivial. Each case has a modal model class: gold
in 90%, one class below in 5%, one above in 5% (where there is one). In each run a case is
unavailable with probability `u` (transient: drawn again in every run and trial); otherwise its
model class is the modal one with probability 1 - e and one of the two others (equally) with
probability e, the class noise; final = max(floor, model), at least logic when unavailable.
"No change" draws the base and the new run from the same per-case distribution; the base
(baseline) run has BASE_TRIALS trials (saved with `--trials 3`), the new run one, plus the
confirmation trials of its candidates. A rate
regression moves the modal class of each case that can regress (floor below gold, modal not
under) to one class below gold in the new run with a probability chosen so that the expected
rise of underClassificationFinal equals the detectable difference; a per-case regression does
it to one sensitive-gold case (floor below sensitive), which must then block.

The gate is `compare.decide` (the rates with their Holm-adjusted McNemar tests and paired
bootstrap, and the per-case blockers over all trials); the candidates it leaves unconfirmed are
run again up to `confirm_trials` trials as `evaluate.confirm_blockers` does, and decided again.
Coverage: the paired bootstrap interval of underClassificationFinal against the true difference
of the population rates, and the Clopper-Pearson interval of one run's rate against its true
rate (both computed from the model, not estimated).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

from graft_eval_pipeline.card.models import RiskClass
from graft_eval_pipeline.evalset.compare.blockers import BASE_TRIALS, decide_blockers
from graft_eval_pipeline.evalset.compare.compare import GateDecision, decide
from graft_eval_pipeline.evalset.scoring import CaseRow
from graft_eval_pipeline.evalset.scoring.intervals import clopper_pearson
from graft_eval_pipeline.evalset.scoring.report_schema import (
    FlagOutcome,
    GoldSummary,
    OosCounts,
    UsageSummary,
)

CLASSES: tuple[RiskClass, ...] = ("trivial", "logic", "sensitive")
ORDER = {c: i for i, c in enumerate(CLASSES)}
USAGE = UsageSummary(input_tokens=0, output_tokens=0, cache_read_tokens=0, cache_write_tokens=0, calls=0)
OOS = OosCounts(tp=0, fp=0, fn=0)
GOLDS = {c: GoldSummary(risk=c, should_flag=c == "sensitive", out_of_scope_count=0) for c in CLASSES}


@dataclass(frozen=True)
class Case:
    id: str
    gold: RiskClass
    floor: RiskClass
    modal: RiskClass


def draw_case(rng: random.Random, index: int) -> Case:
    gold = rng.choices(CLASSES, weights=(40, 30, 30))[0]
    if gold == "sensitive":
        floor: RiskClass = "sensitive" if rng.random() < 0.5 else rng.choice(("trivial", "logic"))
    elif gold == "logic":
        floor = "logic" if rng.random() < 0.4 else "trivial"
    else:
        floor = "trivial"
    roll, g = rng.random(), ORDER[gold]
    modal = CLASSES[g - 1] if roll < 0.05 and g > 0 else CLASSES[g + 1] if roll > 0.95 and g < 2 else gold
    return Case(f"case-{index:04d}", gold, floor, modal)


_ROWS: dict[tuple[str, RiskClass, RiskClass, RiskClass | None, bool, int], CaseRow] = {}


def make_row(case: Case, model: RiskClass | None, trial: int) -> CaseRow:
    """A report row of one trial (built once per distinct content: rows are immutable)."""
    unavailable = model is None
    key = (case.id, case.gold, case.floor, model, unavailable, trial)
    row = _ROWS.get(key)
    if row is None:
        final = max(case.floor, "logic" if model is None else model, key=ORDER.__getitem__)
        should = case.gold == "sensitive"
        flag: FlagOutcome = "na"
        if not unavailable and should:
            flag = "tp" if final == "sensitive" else "fn"
        elif not unavailable:
            flag = "fp" if final == "sensitive" else "tn"
        row = CaseRow.model_construct(
            id=case.id, tags=[], gold=GOLDS[case.gold], floor=case.floor, model=model, final=final,
            status="unavailable" if unavailable else "ok", failure_reason=None, verifier_status=None,
            raised_by=[], floor_rules=[], instructions_in_data=False, oos=OOS, flag=flag, usage=USAGE,
            cost_usd=0.0, cached=False, skipped=None, stratum=None, writer=None, verifier=None,
            verifier_cost_usd=None, trial=trial,
        )  # fmt: skip
        _ROWS[key] = row
    return row


def draw_model(rng: random.Random, modal: RiskClass, noise: float, unavailable: float) -> RiskClass | None:
    if rng.random() < unavailable:
        return None
    if rng.random() < noise:
        return rng.choice([c for c in CLASSES if c != modal])
    return modal


def under_probability(case: Case, modal: RiskClass, noise: float, unavailable: float) -> float:
    """P(final under gold) in one run, from the model (for the true rates and effect sizes)."""
    p = 0.0
    outcomes: list[tuple[RiskClass | None, float]] = [(None, unavailable)]
    outcomes += [(c, (1 - unavailable) * ((1 - noise) if c == modal else noise / 2)) for c in CLASSES]
    for model, weight in outcomes:
        final = max(case.floor, "logic" if model is None else model, key=ORDER.__getitem__)
        p += weight * (ORDER[final] < ORDER[case.gold])
    return p


def regressed(case: Case) -> RiskClass:
    return CLASSES[ORDER[case.gold] - 1]


def can_regress(case: Case) -> bool:
    return ORDER[case.floor] < ORDER[case.gold] and ORDER[case.modal] >= ORDER[case.gold]


@dataclass
class Cell:
    n: int
    noise: float
    unavailable: float


@dataclass
class Outcome:
    failed: bool
    rate_regressed: bool
    blocked: set[str]
    detectable: float | None
    low: float | None
    high: float | None
    new_k: int
    new_n: int
    confirm_runs: int


def run_trials(
    rng: random.Random, cases: Sequence[Case], modal: dict[str, RiskClass], cell: Cell, trials: range
) -> dict[str, list[CaseRow]]:
    return {
        c.id: [make_row(c, draw_model(rng, modal[c.id], cell.noise, cell.unavailable), t) for t in trials]
        for c in cases
    }


def simulate(
    rng: random.Random, cell: Cell, regress: float, one_case: bool, seed: int
) -> tuple[Outcome, float]:
    """One simulated comparison, with the true difference of the population under-rate.

    One comparison, each case that can regress doing so with probability `regress` (or one sensitive
    case, `one_case`); also returns the true difference of the population under-rate.
    """
    cases = [draw_case(rng, i) for i in range(cell.n)]
    base_modal = {c.id: c.modal for c in cases}
    new_modal = dict(base_modal)
    eligible = [c for c in cases if can_regress(c) and (not one_case or c.gold == "sensitive")]
    if one_case:
        chosen = rng.sample(eligible, min(1, len(eligible)))
    else:
        chosen = [c for c in eligible if rng.random() < regress]
    for c in chosen:
        new_modal[c.id] = regressed(c)
    base = run_trials(rng, cases, base_modal, cell, range(BASE_TRIALS))  # a baseline saved with --trials 3
    new = run_trials(rng, cases, new_modal, cell, range(1))
    # The rates count every trial each run has before confirmation (the baseline's three, the new
    # run's one), as `compare` does; the blockers also see the confirmation trials.
    old_rows = [base[c.id] for c in cases]
    new_rows = [new[c.id][:1] for c in cases]
    gate = decide(old_rows, new_rows, base, new, deterministic=False, seed=seed)
    confirm_runs = 0
    if gate.per_case.unconfirmed:  # the live gate's second look (evaluate.confirm_blockers)
        trials = gate.per_case.rule.confirm_trials
        by_id = {c.id: c for c in cases}
        for candidate in gate.per_case.unconfirmed:
            c = by_id[candidate.id]
            extra = run_trials(rng, [c], new_modal, cell, range(1, trials))
            new[c.id] = new[c.id] + extra[c.id]
            confirm_runs += trials - 1
        per_case = decide_blockers(base, new, [c.id for c in cases], deterministic=False)
        gate = GateDecision(gate.rates, gate.verdict, per_case)  # the rates keep their trials
    under = next(r for r in gate.rates if r.name == "underClassificationFinal")
    true_diff = (
        sum(
            under_probability(c, new_modal[c.id], cell.noise, cell.unavailable)
            - under_probability(c, base_modal[c.id], cell.noise, cell.unavailable)
            for c in cases
        )
        / cell.n
    )
    outcome = Outcome(
        failed=gate.failed,
        rate_regressed=gate.verdict == "regressed",
        blocked={b.id for b in gate.per_case.blockers},
        detectable=under.detectable,
        low=under.low,
        high=under.high,
        new_k=under.new_k,
        new_n=under.new_n,
        confirm_runs=confirm_runs,
    )
    one = [c.id for c in cases if new_modal[c.id] != base_modal[c.id]] if one_case else []
    outcome.blocked = outcome.blocked & set(one) if one_case else outcome.blocked
    return outcome, true_diff


def population_under_rate(cell: Cell, rng: random.Random, draws: int = 200_000) -> float:
    """The true under-classification rate of the case population (Monte Carlo over cases)."""
    total = 0.0
    for i in range(draws):
        c = draw_case(rng, i)
        total += under_probability(c, c.modal, cell.noise, cell.unavailable)
    return total / draws


def rise_per_regress(cell: Cell, draws: int = 50_000) -> float:
    """Expected rise of the population under-rate per unit of regression probability."""
    rng = random.Random(7)
    gain = 0.0
    for i in range(draws):
        c = draw_case(rng, i)
        if can_regress(c):
            gain += under_probability(c, regressed(c), cell.noise, cell.unavailable)
            gain -= under_probability(c, c.modal, cell.noise, cell.unavailable)
    return gain / draws


def share(values: Sequence[bool]) -> float:
    return sum(values) / len(values) if values else float("nan")


def run_cell(job: tuple[int, Cell, int, int]) -> tuple[str, list[str]]:
    """One row of the table: the no-change, detection and one-case simulations of a cell."""
    cell_index, cell, sims, seed = job
    rng = random.Random(seed + cell_index)
    null = [simulate(rng, cell, 0, False, seed + i) for i in range(sims)]
    true_rate = population_under_rate(cell, random.Random(seed))
    stated = [o.detectable for o, _ in null if o.detectable is not None]
    detectable = statistics.median(stated) if stated else math.nan
    regress = min(detectable / rise_per_regress(cell), 1.0)
    hits = [simulate(rng, cell, regress, False, seed + i) for i in range(sims)]
    single = [simulate(rng, cell, 0, True, seed + i) for i in range(sims)]
    covered_diff = [
        o.low is not None and o.high is not None and o.low <= true <= o.high for o, true in (*null, *hits)
    ]
    covered_cp = []
    for o, _ in null:
        bounds = clopper_pearson(o.new_k, o.new_n)
        covered_cp.append(bounds is not None and bounds[0] <= true_rate <= bounds[1])
    false_alarm = share([o.failed for o, _ in null])
    detected = share([o.failed for o, _ in hits])
    row = (
        f"{cell.n:>4} {cell.noise:>5.0%} {cell.unavailable:>5.0%} | {false_alarm:>11.3f} "
        f"{share([o.rate_regressed for o, _ in null]):>7.3f} "
        f"{statistics.fmean(o.confirm_runs for o, _ in null):>12.2f} | {detectable:>10.4f} "
        f"{regress:>6.3f} {detected:>8.3f} {share([o.rate_regressed for o, _ in hits]):>7.3f} | "
        f"{share([bool(o.blocked) for o, _ in single]):>8.3f} | "
        f"{share(covered_diff):>8.3f} {share(covered_cp):>6.3f}"
    )
    missed = []
    if false_alarm > 0.05:
        missed.append(f"false alarm {false_alarm:.3f} > 0.05 at n={cell.n}, noise {cell.noise}")
    if detected < 0.80:
        missed.append(f"detection {detected:.3f} < 0.80 at n={cell.n}, noise {cell.noise}")
    return row, missed


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sims", type=int, default=100, help="comparisons per cell and kind (default 100)")
    parser.add_argument("--seed", type=int, default=20_261_122)
    parser.add_argument("--processes", type=int, default=2, help="cells simulated at once (default 2)")
    parser.add_argument("--quick", action="store_true", help="one cell, 10 comparisons of each kind")
    args = parser.parse_args()
    sims = 10 if args.quick else args.sims
    grid = (
        [Cell(100, 0.05, 0.03)]
        if args.quick
        else [Cell(n, e, u) for n in (100, 300) for e, u in ((0.02, 0.01), (0.05, 0.03), (0.08, 0.03))]
    )
    started = time.perf_counter()
    print(f"bench_decisions: {sims} comparisons per cell and kind, seed {args.seed}")
    print(
        f"{'n':>4} {'noise':>5} {'unav':>5} | {'false alarm':>11} {'(rates)':>7} {'confirm runs':>12} | "
        f"{'detectable':>10} {'p regr':>6} {'detected':>8} {'(rates)':>7} | {'one case':>8} | "
        f"{'cov diff':>8} {'cov CP':>6}"
    )
    jobs = [(i, cell, sims, args.seed) for i, cell in enumerate(grid)]
    if args.processes > 1 and len(jobs) > 1:
        with multiprocessing.Pool(args.processes) as pool:
            results = pool.map(run_cell, jobs)
    else:
        results = [run_cell(job) for job in jobs]
    missed = []
    for row, cell_missed in results:
        print(row)
        missed += cell_missed
    print(
        "false alarm: exit 1 with no change ((rates): a rate regressed); confirm runs: extra trials run "
        "per comparison; detectable: median stated detectable difference of underClassificationFinal; "
        "p regr: each case that can regress does so with this probability (expected rise = detectable); "
        "detected: exit 1 ((rates): verdict regressed); one case: one sensitive case regressed and "
        "blocked; cov diff / cov CP: coverage of the paired bootstrap interval / of one run's "
        "Clopper-Pearson interval"
    )
    print(f"time: {time.perf_counter() - started:.1f} s")
    for line in missed:
        print(f"target missed: {line}")


if __name__ == "__main__":
    main()
