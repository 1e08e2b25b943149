"""Post-stratified estimates: what the sample says about the exported PR population.

An export draws every stratum at least twice and the rest in proportion (sets/sample.py), so
rare strata (sensitive paths, large diffs) are over-represented on purpose and the unweighted
rates describe the sample, not the repository's PRs. Each exported case records its stratum with
the stratum's population and picks; here each case of a stratum weighs population / cases of the
stratum that the rate counts (unscored cases are treated as missing at random within it).

The estimate is the weighted ratio Σ w·y / Σ w·d (d: the case is in the rate's denominator, y:
in its numerator). Its variance is the stratified variance of the linearised ratio with the
finite-population correction, Σ_h N_h² (1 − m_h/N_h) s²_h / m_h / D², where s²_h is the sample
variance of y − R·d within the stratum. A stratum with one case, or whose cases all agree, shows
no spread, yet its share is far from known: it gets the spread of its Jeffreys share instead,
s²_h = p̃(1 − p̃)·q_h with p̃ = (hits + ½)/(domain cases + 1) and q_h its share of cases in the
domain (a conservative variance; collapsing strata would need a rule for which strata are alike,
which the export does not record). The interval is Clopper-Pearson on the effective sample size
R(1 − R)/variance (Korn and Graubard), never more than the cases behind the rate; when the rate
is 0 or 1 there is no variance to use, and the effective size is Kish's (Σw)²/Σw² of the weights
(all the cases under equal weights, far fewer when a heavy stratum has few cases). A stratum
with no case in the rate is outside the estimate: `coveredPopulation` says how many PRs the
estimate covers, and the estimates name those strata.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from graft_eval_pipeline.card import RISK_ORDER
from graft_eval_pipeline.evalset.scoring.intervals import clopper_pearson, round_up, upper_bound
from graft_eval_pipeline.evalset.scoring.rates import rate, rounded, safety_rate
from graft_eval_pipeline.evalset.scoring.report_schema import (
    CaseRow,
    PopulationEstimates,
    PopulationRate,
    StratumEstimate,
)
from graft_eval_pipeline.evalset.sets import CaseStratum

Cell = tuple[str, str]  # (frame, stratum key)
Indicator = Callable[[CaseRow], bool]


def _cell(stratum: CaseStratum) -> Cell:
    return stratum.frame, stratum.key


def _under(row: CaseRow) -> bool:
    return (
        row.gold is not None and row.final is not None and RISK_ORDER[row.final] < RISK_ORDER[row.gold.risk]
    )


def _scored_with_final(row: CaseRow) -> bool:
    return row.gold is not None and row.final is not None


def _sample_variance(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / (len(values) - 1)


def _stratum_variance(residuals: Sequence[float], hits: int, in_domain: int) -> float:
    """s²_h of the linearised residuals.

    For a stratum that shows no spread (one case, or cases that all agree) the spread of its
    Jeffreys share, so it still adds variance.
    """
    spread = _sample_variance(residuals)
    if (len(residuals) >= 2 and spread > 0) or in_domain == 0:
        return spread
    share = (hits + 0.5) / (in_domain + 1)
    return share * (1 - share) * in_domain / len(residuals)


def _kish(by_cell: dict[Cell, list[CaseRow]], population: dict[Cell, int], domain: Indicator) -> float:
    """Kish's effective sample size of the domain's weights, (Σw)² / Σw².

    What a rate of 0 or 1 (no variance to measure) is worth when the weights are unequal (all the
    cases when they are equal; little when one heavy stratum has one case).
    """
    weights = [population[cell] / len(units) for cell, units in by_cell.items() for r in units if domain(r)]
    return sum(weights) ** 2 / sum(w * w for w in weights) if weights else 0.0


def post_stratified(
    rows: Sequence[CaseRow],
    population: dict[Cell, int],
    unit: Indicator,
    domain: Indicator,
    hit: Indicator,
) -> PopulationRate:
    """The weighted ratio over `unit` rows: hits among the domain, each row weighing N_h / m_h."""
    by_cell: dict[Cell, list[CaseRow]] = defaultdict(list)
    for row in rows:
        if row.stratum is not None and unit(row):
            by_cell[_cell(row.stratum)].append(row)
    n = sum(domain(r) for units in by_cell.values() for r in units)
    weighted_hits = weighted_domain = 0.0
    for cell, units in by_cell.items():
        weight = population[cell] / len(units)
        weighted_hits += weight * sum(hit(r) and domain(r) for r in units)
        weighted_domain += weight * sum(domain(r) for r in units)
    covered = sum(population[cell] for cell, units in by_cell.items() if any(domain(r) for r in units))
    if weighted_domain == 0:
        return PopulationRate(
            n=n, value=None, ci95=None, upper95=None, effective_n=None, covered_population=covered
        )
    ratio = weighted_hits / weighted_domain
    variance = 0.0
    for cell, units in by_cell.items():
        size, m = population[cell], len(units)
        residuals = [float(hit(r) and domain(r)) - ratio * domain(r) for r in units]
        stratum_hits = sum(hit(r) and domain(r) for r in units)
        spread = _stratum_variance(residuals, stratum_hits, sum(domain(r) for r in units))
        variance += size * size * max(1 - m / size, 0.0) * spread / m
    variance /= weighted_domain**2
    if variance <= 0 or ratio in (0.0, 1.0):
        effective = min(float(n), _kish(by_cell, population, domain))
    else:
        effective = min(n, ratio * (1 - ratio) / variance)
    hits = min(ratio * effective, effective)
    upper = upper_bound(hits, effective)
    return PopulationRate(
        n=n,
        value=rate(ratio, 1),
        ci95=rounded(clopper_pearson(hits, effective)),
        upper95=None if upper is None else round_up(upper),
        effective_n=round(effective, 1),
        covered_population=covered,
    )


def _strata(rows: Sequence[CaseRow]) -> dict[Cell, CaseStratum]:
    """Each cell's recorded population and picks.

    The first case's record: one export writes the same counts into every case of a stratum.
    """
    cells: dict[Cell, CaseStratum] = {}
    for row in rows:
        if row.stratum is not None:
            cells.setdefault(_cell(row.stratum), row.stratum)
    return dict(sorted(cells.items()))


def _stratum_row(cell: Cell, stratum: CaseStratum, rows: Sequence[CaseRow]) -> StratumEstimate:
    run = [r for r in rows if r.stratum is not None and _cell(r.stratum) == cell]
    scored = [r for r in run if _scored_with_final(r)]
    return StratumEstimate(
        frame=stratum.frame,
        stratum=stratum.key,
        population=stratum.population,
        sampled=stratum.sampled,
        run_cases=len(run),
        scored=len(scored),
        weight=round(stratum.population / len(scored), 4) if scored else None,
        under_classification_final=safety_rate(sum(_under(r) for r in scored), len(scored)),
    )


def population_estimates(run: Sequence[CaseRow]) -> PopulationEstimates:
    """Post-stratified headline rates and the per-stratum table; "not a sample" without strata."""
    strata = _strata(run)
    unstratified = sum(r.stratum is None for r in run)
    if not strata:
        return PopulationEstimates(
            status="not a sample",
            population=0,
            unstratified=unstratified,
            strata=[],
            under_classification_final=None,
            severe_under_classification_sensitive_final=None,
            exact_accuracy_final=None,
            unavailable_rate=None,
        )
    population = {cell: s.population for cell, s in strata.items()}

    def always(_: CaseRow) -> bool:
        return True

    def sensitive_gold(row: CaseRow) -> bool:
        return row.gold is not None and row.gold.risk == "sensitive"

    return PopulationEstimates(
        status="estimated",
        population=sum(population.values()),
        unstratified=unstratified,
        strata=[_stratum_row(cell, s, run) for cell, s in strata.items()],
        strata_without_scored=[
            f"{s.frame} {s.key}"
            for s in strata.values()
            if not any(
                r.stratum is not None and _cell(r.stratum) == _cell(s) and _scored_with_final(r) for r in run
            )
        ],
        under_classification_final=post_stratified(run, population, _scored_with_final, always, _under),
        severe_under_classification_sensitive_final=post_stratified(
            run, population, _scored_with_final, sensitive_gold, lambda r: r.final == "trivial"
        ),
        exact_accuracy_final=post_stratified(
            run,
            population,
            _scored_with_final,
            always,
            lambda r: r.gold is not None and r.final == r.gold.risk,
        ),
        unavailable_rate=post_stratified(
            run, population, always, always, lambda r: r.status == "unavailable"
        ),
    )
