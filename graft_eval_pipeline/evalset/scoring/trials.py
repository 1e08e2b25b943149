"""What repeated trials (--trials N) say together.

Per-case agreement, rates with intervals clustered by case, flaky cases and the worst-case view.

The trials of one case are not independent draws, so a rate's interval treats each case as a
cluster: the Clopper-Pearson interval at the effective sample size that the cluster-robust
variance implies (Korn and Graubard's interval for clustered samples). Trials that always agree
carry one trial's information, so the interval is then that of one run's cases; trials that
disagree independently carry more. The standard metrics stay on trial 0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from graft_eval_pipeline.card import RISK_ORDER
from graft_eval_pipeline.evalset.scoring.intervals import CONFIDENCE, clopper_pearson, t_quantile
from graft_eval_pipeline.evalset.scoring.rates import RATE_DECIMALS, rate, rate_stat, rounded
from graft_eval_pipeline.evalset.scoring.report_schema import CaseRow, TrialCase, TrialRate, TrialsSummary

Outcome = Callable[[str, str], bool]
TRIAL_RATES: dict[str, Outcome] = {
    "underClassification": lambda g, p: RISK_ORDER[p] < RISK_ORDER[g],
    "severeUnderClassification": lambda g, p: g == "sensitive" and p == "trivial",
    "overClassification": lambda g, p: RISK_ORDER[p] > RISK_ORDER[g],
    "exactAccuracy": lambda g, p: g == p,
}


def cluster_variance(scores: Sequence[float], total: float) -> float:
    """The cluster-robust (CR1) variance of a mean over `total` items from each cluster's summed influence.

    G/(G-1) * sum(score_c^2) / total^2.
    """
    clusters = len(scores)
    return clusters / (clusters - 1) * sum(s * s for s in scores) / total**2


def clustered_size(
    ceiling: float,
    clusters: int,
    total: float,
    design_effect: float,
    confidence: float = CONFIDENCE,
) -> float:
    """Korn and Graubard's effective size.

    `ceiling` (what the items would be worth if independent) over the design effect (clustered
    variance / independent variance), kept between the number of clusters and `ceiling`, times the
    degrees-of-freedom factor (t_{n-1} / t_{G-1})^2 (a variance from G clusters is itself uncertain:
    few clusters shrink the size). One mechanism for every clustered interval of a report (trials by
    case, cases by repository, out-of-scope files by case).
    """
    q = 0.5 + confidence / 2
    df_factor = (t_quantile(q, total - 1) / t_quantile(q, clusters - 1)) ** 2 if total > 1 else 1.0
    unclustered = ceiling / design_effect if design_effect > 0 else ceiling
    size = min(ceiling, max(float(clusters), unclustered)) * df_factor
    return max(size, min(float(clusters), 1.0))


def effective_size(
    counts: Sequence[float], sizes: Sequence[float], confidence: float = CONFIDENCE
) -> float | None:
    """How many independent trials the clustered outcomes are worth.

    N / design effect, where the design effect is the cluster-robust variance of the pooled share,
    G/(G-1) * sum((y_i - p m_i)^2) / (sum m_i)^2, over the binomial one, p(1-p)/n (`clustered_size`,
    with Korn and Graubard's degrees-of-freedom factor). At most n, and the number of clusters when
    p is 0 or 1 (no variance to measure: the cautious choice, never tighter than one run's exact
    interval); never below it when trials agree. None without a scored case.
    """
    pairs = [(y, m) for y, m in zip(counts, sizes, strict=True) if m > 0]
    clusters, total = len(pairs), sum(m for _, m in pairs)
    if clusters == 0:
        return None
    p = sum(y for y, _ in pairs) / total
    if clusters < 2 or p in (0.0, 1.0):
        return float(clusters)
    variance = cluster_variance([y - p * m for y, m in pairs], total)
    return clustered_size(float(total), clusters, total, variance / (p * (1 - p) / total), confidence)


def cluster_interval(
    counts: Sequence[float], sizes: Sequence[float], confidence: float = CONFIDENCE
) -> tuple[float, float] | None:
    """The exact interval of sum(counts) / sum(sizes) at the effective sample size, clustered by case.

    Clopper-Pearson at the effective sample size of `effective_size`, each case a cluster of its
    trials; None without a scored case.
    """
    n_eff = effective_size(counts, sizes, confidence)
    if n_eff is None:
        return None
    p = sum(counts) / sum(sizes)
    return clopper_pearson(p * n_eff, n_eff, confidence)


def _scored(row: CaseRow) -> tuple[str, str] | None:
    """(gold, final) of a scored trial that produced a final class, else None."""
    if row.skipped is not None or row.gold is None or row.final is None:
        return None
    return row.gold.risk, row.final


def trial_rate(by_case: dict[str, list[CaseRow]], trials: int, outcome: Outcome) -> TrialRate:
    """Pooled over (case, trial) pairs, clustered by case; `perTrial` is each trial's own rate."""
    counts: list[int] = []
    sizes: list[int] = []
    per_trial_k, per_trial_n = [0] * trials, [0] * trials
    for rows in by_case.values():
        y = m = 0
        for row in rows:
            pair = _scored(row)
            if pair is None:
                continue
            hit = outcome(*pair)
            y, m = y + hit, m + 1
            per_trial_k[row.trial] += hit
            per_trial_n[row.trial] += 1
        counts.append(y)
        sizes.append(m)
    k, n = sum(counts), sum(sizes)
    mean = rate(k, n)
    return TrialRate(
        k=k,
        n=n,
        mean=None if mean is None else round(mean, RATE_DECIMALS),
        ci95=rounded(cluster_interval(counts, sizes)),
        per_trial=[
            None if (r := rate(a, b)) is None else round(r, RATE_DECIMALS)
            for a, b in zip(per_trial_k, per_trial_n, strict=True)
        ],
    )


def trials_summary(rows: Sequence[CaseRow], trials: int, cost_usd: float | None) -> TrialsSummary:
    """`rows`: every trial's rows (each carries its `trial`); trial 0's are the report's cases."""
    by_case: dict[str, list[CaseRow]] = defaultdict(list)
    for row in rows:
        by_case[row.id].append(row)
    cases: list[TrialCase] = []
    under_any = scored_cases = 0
    is_under = TRIAL_RATES["underClassification"]
    for case_id in sorted(by_case):
        ordered = sorted(by_case[case_id], key=lambda r: r.trial)
        pairs = [p for r in ordered if (p := _scored(r)) is not None]
        under = sum(is_under(*p) for p in pairs)
        ran = {r.final for r in ordered if r.skipped is None}
        cases.append(
            TrialCase(
                id=case_id,
                finals=[r.final for r in ordered],
                under_share=None if (s := rate(under, len(pairs))) is None else round(s, RATE_DECIMALS),
                agreed=len(ran) <= 1,
            )
        )
        scored_cases += bool(pairs)
        under_any += under > 0
    return TrialsSummary(
        trials=trials,
        rates={name: trial_rate(by_case, trials, outcome) for name, outcome in TRIAL_RATES.items()},
        cases=cases,
        flaky_cases=[c.id for c in cases if not c.agreed],
        under_any_trial=rate_stat(under_any, scored_cases, "clopper-pearson"),
        cost_usd=cost_usd,
        rows=[r for r in rows if r.trial > 0],
    )
