"""Agreement statistics of two raters over the same items: Cohen's kappa with its 95% interval,
linear-weighted kappa over the risk classes, and raw agreement.

Two uses: labeler against labeler (labeling's agreement report, spec 8.1) and the verifier
against gold (the report's calibration). When both raters used a single class, chance agreement
is 1 and kappa is undefined (None, not 1.0): agreeing on one class says nothing about telling
classes apart. Plain Python; the tests check kappa and its interval against statsmodels.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence

from graft_eval_pipeline.card import RISK_CLASSES, RISK_ORDER, RiskClass
from graft_eval_pipeline.evalset.scoring.intervals import CONFIDENCE, normal_quantile


def _check_pair(a: Sequence[object], b: Sequence[object]) -> None:
    if len(a) != len(b):
        raise ValueError(f"label lists differ in length ({len(a)} vs {len(b)})")


def _check_categories(a: Sequence[Hashable], b: Sequence[Hashable], categories: Sequence[Hashable]) -> None:
    unknown = (set(a) | set(b)) - set(categories)
    if unknown:
        raise ValueError(f"{len(unknown)} label value(s) outside the given categories")


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable], categories: Sequence[Hashable]) -> float | None:
    """κ = (p_o − p_e) / (1 − p_e); None for no items, and when p_e = 1 (both labelers used one
    and the same class: undefined, whatever p_o)."""
    _check_pair(a, b)
    n = len(a)
    if n == 0:
        return None
    _check_categories(a, b, categories)
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    count_a, count_b = Counter(a), Counter(b)
    p_e = sum(count_a[k] * count_b[k] for k in categories) / (n * n)
    if p_e == 1:
        return None
    return (p_o - p_e) / (1 - p_e)


def kappa_interval(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    categories: Sequence[Hashable],
    confidence: float = CONFIDENCE,
) -> tuple[float, float] | None:
    """Two-sided interval for Cohen's kappa from its large-sample variance (Fleiss, Cohen and
    Everitt 1969, as statsmodels' `cohens_kappa`); clipped to [−1, 1]; None where kappa is.

    With p_ij the share of items A put in i and B in j, p_i. and p_.j the margins:
    var = [Σ_i p_ii (1 − (p_i. + p_.i)(1 − κ))² + (1 − κ)² Σ_{i≠j} p_ij (p_.i + p_j.)²
           − (κ − p_e (1 − κ))²] / ((1 − p_e)² n).
    """
    kappa = cohen_kappa(a, b, categories)
    if kappa is None:
        return None
    n = len(a)
    cells = Counter(zip(a, b, strict=True))
    row, col = Counter(a), Counter(b)
    p_e = sum(row[k] * col[k] for k in categories) / (n * n)
    diagonal = sum(cells[(i, i)] / n * (1 - (row[i] + col[i]) / n * (1 - kappa)) ** 2 for i in categories)
    off = sum(
        cells[(i, j)] / n * ((col[i] + row[j]) / n) ** 2 for i in categories for j in categories if i != j
    )
    variance = (diagonal + (1 - kappa) ** 2 * off - (kappa - p_e * (1 - kappa)) ** 2) / ((1 - p_e) ** 2 * n)
    half = normal_quantile(1 - (1 - confidence) / 2) * math.sqrt(max(variance, 0.0))
    return max(-1.0, kappa - half), min(1.0, kappa + half)


def weighted_kappa(a: Sequence[RiskClass], b: Sequence[RiskClass]) -> float | None:
    """Linear weights w = |ord(a) − ord(b)| / 2 over trivial < logic < sensitive: κ_w = 1 − Σw·o / Σw·e.

    A trivial/sensitive disagreement weighs twice a trivial/logic one. When no disagreement is
    expected by chance (Σw·e = 0: both used one and the same class), κ_w is undefined (None).
    """
    _check_pair(a, b)
    n = len(a)
    if n == 0:
        return None
    count_a, count_b = Counter(a), Counter(b)

    def weight(x: str, y: str) -> float:
        return abs(RISK_ORDER[x] - RISK_ORDER[y]) / 2

    observed = sum(weight(x, y) for x, y in zip(a, b, strict=True)) / n
    chance = sum(weight(x, y) * count_a[x] * count_b[y] for x in RISK_CLASSES for y in RISK_CLASSES)
    expected = chance / (n * n)
    if expected == 0:
        return None
    return 1 - observed / expected


def raw_agreement(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    _check_pair(a, b)
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a) if a else None
