"""Agreement statistics of two raters over the same items.

Cohen's kappa and linear-weighted kappa, each with a 95% interval that holds its coverage from 5
shared items up, and raw agreement.

Two uses: labeler against labeler (labeling's agreement report, spec 8.1) and the verifier
against gold (the report's calibration). When both raters used a single class, chance agreement
is 1 and kappa is undefined (None, not 1.0): agreeing on one class says nothing about telling
classes apart; it has no interval either.

Both kappas are one formula: with an agreement credit s(i, j) in [0, 1] (1 on the diagonal; 0
off it for Cohen's kappa, 1 - |i - j| / 2 over trivial < logic < sensitive for the linear
weights), A the mean credit and A_e the credit expected by chance from the two margins,
κ = (A - A_e) / (1 - A_e). The interval (why: bench/bench_intervals.py measured it against the
large-sample Fleiss-Cohen-Everitt interval, which covered 0.06-0.76 at 5 items and collapsed
to [1, 1] on perfect agreement, a percentile bootstrap over items, 0.13-0.74 at 5 items, and a
Dirichlet-smoothed Bayesian bootstrap, whose prior pulls high kappas towards 0) is Jeffreys' interval
for A at the effective size A(1 - A) / var(A) that kappa's delta-method variance on the A
scale implies, mapped through κ = (A - A_e) / (1 - A_e) with A_e as observed. The variance is
taken on the table with SMOOTHING pseudo-items spread evenly over its cells (a rare class seen
once says little about its variance); with no variance to measure (A is 0 or 1) the size is n.
So perfect agreement reads [lower < 1, 1], never [1, 1]. Items clustered (files within a case)
divide the size by the design effect of the cluster sums, with Korn and Graubard's degrees of
freedom (`trials.clustered_size`, the mechanism of every clustered interval of a report).
Plain Python; the tests check both kappas against statsmodels and scikit-learn and the
interval against an independent numpy/scipy implementation.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from graft_eval_pipeline.card import RISK_CLASSES, RISK_ORDER, RiskClass
from graft_eval_pipeline.evalset.scoring.intervals import CONFIDENCE, jeffreys
from graft_eval_pipeline.evalset.scoring.trials import cluster_variance, clustered_size

SMOOTHING = 2.0
"""Pseudo-items spread evenly over the k x k cells for the variance (not the point value)."""

Credit = Callable[[Hashable, Hashable], float]


def _plain(x: Hashable, y: Hashable) -> float:
    return 1.0 if x == y else 0.0


def _linear(x: Hashable, y: Hashable) -> float:
    """1 - |ord(x) - ord(y)| / 2: a trivial/sensitive disagreement costs twice a trivial/logic one."""
    return 1.0 - abs(RISK_ORDER[str(x)] - RISK_ORDER[str(y)]) / (len(RISK_CLASSES) - 1)


def _check_pair(a: Sequence[object], b: Sequence[object]) -> None:
    if len(a) != len(b):
        raise ValueError(f"label lists differ in length ({len(a)} vs {len(b)})")


def _check_categories(a: Sequence[Hashable], b: Sequence[Hashable], categories: Sequence[Hashable]) -> None:
    unknown = (set(a) | set(b)) - set(categories)
    if unknown:
        raise ValueError(f"{len(unknown)} label value(s) outside the given categories")


@dataclass(frozen=True, slots=True)
class _Fit:
    """Kappa of a table of (weighted) counts, and each cell's influence on the A scale."""

    total: float
    agreement: float  # A
    chance: float  # A_e
    kappa: float | None
    influence: dict[tuple[Hashable, Hashable], float]


def _fit(
    cells: dict[tuple[Hashable, Hashable], float], categories: Sequence[Hashable], credit: Credit
) -> _Fit:
    total = sum(cells.values())
    row: dict[Hashable, float] = defaultdict(float)
    col: dict[Hashable, float] = defaultdict(float)
    for (x, y), count in cells.items():
        row[x] += count / total
        col[y] += count / total
    agreement = sum(count * credit(x, y) for (x, y), count in cells.items()) / total
    chance = sum(row[i] * col[j] * credit(i, j) for i in categories for j in categories)
    if chance >= 1:
        return _Fit(total, agreement, chance, None, {})
    kappa = (agreement - chance) / (1 - chance)
    # d kappa = [dA - (1 - kappa) dA_e] / (1 - A_e); on the A scale each cell moves A by its credit
    # less A, and A_e by its row's and column's expected credit less 2 A_e.
    by_row = {i: sum(credit(i, j) * col[j] for j in categories) for i in categories}
    by_col = {j: sum(credit(i, j) * row[i] for i in categories) for j in categories}
    influence = {
        (i, j): credit(i, j) - agreement - (1 - kappa) * (by_row[i] + by_col[j] - 2 * chance)
        for i in categories
        for j in categories
    }
    return _Fit(total, agreement, chance, kappa, influence)


def _table(a: Sequence[Hashable], b: Sequence[Hashable]) -> dict[tuple[Hashable, Hashable], float]:
    return {cell: float(count) for cell, count in Counter(zip(a, b, strict=True)).items()}


def _value(
    a: Sequence[Hashable], b: Sequence[Hashable], categories: Sequence[Hashable], credit: Credit
) -> float | None:
    _check_pair(a, b)
    if not a:
        return None
    _check_categories(a, b, categories)
    return _fit(_table(a, b), categories, credit).kappa


def _independent_size(
    fit: _Fit, cells: dict[tuple[Hashable, Hashable], float], categories: Sequence[Hashable], credit: Credit
) -> float:
    """A(1 - A) / var(A-scale kappa), the variance from the smoothed table; n without variance."""
    n = fit.total
    if n < 2 or fit.agreement in (0.0, 1.0):
        return n
    pseudo = SMOOTHING / len(categories) ** 2
    smoothed = {(i, j): cells.get((i, j), 0.0) + pseudo for i in categories for j in categories}
    smooth = _fit(smoothed, categories, credit)
    variance = sum(count / smooth.total * smooth.influence[cell] ** 2 for cell, count in smoothed.items()) / (
        n - 1
    )
    return fit.agreement * (1 - fit.agreement) / variance if variance > 0 else n


def _interval(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    categories: Sequence[Hashable],
    credit: Credit,
    clusters: Sequence[Hashable] | None,
    confidence: float,
) -> tuple[float, float] | None:
    _check_pair(a, b)
    if not a:
        return None
    _check_categories(a, b, categories)
    cells = _table(a, b)
    fit = _fit(cells, categories, credit)
    if fit.kappa is None:
        return None
    size = _independent_size(fit, cells, categories, credit)
    if clusters is not None:
        size = _clustered(fit, a, b, clusters, size, confidence)
    bounds = jeffreys(fit.agreement * size, size, confidence)
    assert bounds is not None  # size > 0 for a non-empty table
    low, high = ((bound - fit.chance) / (1 - fit.chance) for bound in bounds)
    return max(-1.0, low), min(1.0, high)


def _clustered(
    fit: _Fit,
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    clusters: Sequence[Hashable],
    size: float,
    confidence: float,
) -> float:
    """The independent size over the design effect of the cluster sums of each item's influence."""
    if len(clusters) != len(a):
        raise ValueError(f"cluster list differs in length from the labels ({len(clusters)} vs {len(a)})")
    sums: dict[Hashable, float] = defaultdict(float)
    for x, y, cluster in zip(a, b, clusters, strict=True):
        sums[cluster] += fit.influence[(x, y)]
    count, n = len(sums), fit.total
    if count < 2 or fit.agreement in (0.0, 1.0):
        return min(size, float(count))
    independent = cluster_variance([fit.influence[(x, y)] for x, y in zip(a, b, strict=True)], n)
    if independent <= 0:
        return min(size, float(count))
    return clustered_size(size, count, n, cluster_variance(list(sums.values()), n) / independent, confidence)


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable], categories: Sequence[Hashable]) -> float | None:
    """κ = (p_o − p_e) / (1 − p_e).

    None for no items, and when p_e = 1 (both labelers used one and the same class: undefined,
    whatever p_o).
    """
    return _value(a, b, categories, _plain)


def kappa_interval(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    categories: Sequence[Hashable],
    confidence: float = CONFIDENCE,
    clusters: Sequence[Hashable] | None = None,
) -> tuple[float, float] | None:
    """Two-sided interval for Cohen's kappa (the module docstring says how); None where kappa is.

    `clusters`: each item's cluster (a file's case) when items are not independent.
    """
    return _interval(a, b, categories, _plain, clusters, confidence)


def weighted_kappa(a: Sequence[RiskClass], b: Sequence[RiskClass]) -> float | None:
    """Linear weights w = |ord(a) − ord(b)| / 2 over trivial < logic < sensitive: κ_w = 1 − Σw·o / Σw·e.

    A trivial/sensitive disagreement weighs twice a trivial/logic one. When no disagreement is
    expected by chance (Σw·e = 0: both used one and the same class), κ_w is undefined (None).
    """
    return _value(a, b, RISK_CLASSES, _linear)


def weighted_kappa_interval(
    a: Sequence[RiskClass], b: Sequence[RiskClass], confidence: float = CONFIDENCE
) -> tuple[float, float] | None:
    """Two-sided interval for the linear-weighted kappa, the same method; None where κ_w is."""
    return _interval(a, b, RISK_CLASSES, _linear, None, confidence)


def raw_agreement(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    _check_pair(a, b)
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a) if a else None
