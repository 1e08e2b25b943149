"""Inter-labeler agreement (spec 8.1): Cohen's kappa, linear-weighted kappa, and the per-pair report.

Only the scored fields (risk, shouldFlag, outOfScope) are compared; free text is not. The report
carries labeler handles, case ids and numbers only, never case content.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from itertools import combinations

from pydantic import Field

from graft_eval_pipeline.card.models import RISK_CLASSES, RISK_ORDER, CamelModel, RiskClass
from graft_eval_pipeline.evalset.sets import EvalCase, LabelSet

MIN_SHARED_CASES = 5
TARGET_RISK_KAPPA = 0.6


def _check_pair(a: Sequence[object], b: Sequence[object]) -> None:
    if len(a) != len(b):
        raise ValueError(f"label lists differ in length ({len(a)} vs {len(b)})")


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable], categories: Sequence[Hashable]) -> float | None:
    """κ = (p_o − p_e) / (1 − p_e); None for no items, and for p_e = 1 with p_o < 1 (spec 8.1)."""
    _check_pair(a, b)
    n = len(a)
    if n == 0:
        return None
    unknown = (set(a) | set(b)) - set(categories)
    if unknown:
        raise ValueError(f"{len(unknown)} label value(s) outside the given categories")
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    count_a, count_b = Counter(a), Counter(b)
    p_e = sum(count_a[k] * count_b[k] for k in categories) / (n * n)
    if p_e == 1:
        return 1.0 if p_o == 1 else None
    return (p_o - p_e) / (1 - p_e)


def weighted_kappa(a: Sequence[RiskClass], b: Sequence[RiskClass]) -> float | None:
    """Linear weights w = |ord(a) − ord(b)| / 2 over trivial < logic < sensitive: κ_w = 1 − Σw·o / Σw·e.

    A trivial/sensitive disagreement weighs twice a trivial/logic one. When no disagreement is
    expected by chance (Σw·e = 0), κ_w is 1 if none was observed, else None (as for p_e = 1).
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
        return 1.0 if observed == 0 else None
    return 1 - observed / expected


def raw_agreement(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    _check_pair(a, b)
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a) if a else None


class KappaStat(CamelModel):
    """n items compared, the share that agree, and Cohen's kappa over them."""

    n: int
    raw_agreement: float | None
    kappa: float | None


class RiskStat(KappaStat):
    weighted_kappa: float | None


class PairAgreement(CamelModel):
    labelers: tuple[str, str]
    shared_cases: int
    risk: RiskStat
    should_flag: KappaStat
    out_of_scope: KappaStat = Field(
        description="per-file in/out decisions over every file of every shared case"
    )
    disagreeing_case_ids: list[str]


class SkippedPair(CamelModel):
    labelers: tuple[str, str]
    shared_cases: int


class AgreementReport(CamelModel):
    """Spec 8.1 output: ids and numbers only."""

    min_shared_cases: int = MIN_SHARED_CASES
    target_risk_kappa: float = TARGET_RISK_KAPPA
    pairs: list[PairAgreement]
    skipped_pairs: list[SkippedPair] = Field(
        description=f"pairs with fewer than {MIN_SHARED_CASES} shared cases"
    )


def _stat(a: Sequence[Hashable], b: Sequence[Hashable], categories: Sequence[Hashable]) -> KappaStat:
    return KappaStat(n=len(a), raw_agreement=raw_agreement(a, b), kappa=cohen_kappa(a, b, categories))


def _pair_agreement(
    pair: tuple[str, str], shared: list[tuple[EvalCase, LabelSet, LabelSet]]
) -> PairAgreement:
    risk_a = [la.risk for _, la, _ in shared]
    risk_b = [lb.risk for _, _, lb in shared]
    flag_a = [la.should_flag for _, la, _ in shared]
    flag_b = [lb.should_flag for _, _, lb in shared]
    oos_a: list[bool] = []
    oos_b: list[bool] = []
    for case, la, lb in shared:
        for path in dict.fromkeys(f.path for f in case.inputs.files):
            oos_a.append(path in la.out_of_scope)
            oos_b.append(path in lb.out_of_scope)
    base = _stat(risk_a, risk_b, RISK_CLASSES)
    return PairAgreement(
        labelers=pair,
        shared_cases=len(shared),
        risk=RiskStat(**base.model_dump(), weighted_kappa=weighted_kappa(risk_a, risk_b)),
        should_flag=_stat(flag_a, flag_b, (False, True)),
        out_of_scope=_stat(oos_a, oos_b, (False, True)),
        disagreeing_case_ids=sorted(c.id for c, la, lb in shared if la.scored() != lb.scored()),
    )


def agreement(cases: Sequence[EvalCase], min_shared: int = MIN_SHARED_CASES) -> AgreementReport:
    """Every labeler pair, each using its own label sets (never the adjudication)."""
    by_labeler: dict[str, dict[str, LabelSet]] = {}
    for case in cases:
        for label in case.labels:
            by_labeler.setdefault(label.labeler, {})[case.id] = label
    cases_by_id = {c.id: c for c in cases}
    pairs: list[PairAgreement] = []
    skipped: list[SkippedPair] = []
    for pair in combinations(sorted(by_labeler), 2):
        first, second = (by_labeler[h] for h in pair)
        shared = [(cases_by_id[i], first[i], second[i]) for i in sorted(first.keys() & second.keys())]
        if len(shared) < min_shared:
            skipped.append(SkippedPair(labelers=pair, shared_cases=len(shared)))
        else:
            pairs.append(_pair_agreement(pair, shared))
    return AgreementReport(min_shared_cases=min_shared, pairs=pairs, skipped_pairs=skipped)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def render_agreement(report: AgreementReport) -> str:
    """Human text for `graft-eval agreement`: one block per pair, ids and numbers only."""
    lines: list[str] = []
    if not report.pairs:
        lines.append(f"no labeler pair shares at least {report.min_shared_cases} cases")
    for p in report.pairs:
        risk, flag, oos = p.risk, p.should_flag, p.out_of_scope
        lines.append(f"{p.labelers[0]} / {p.labelers[1]}: {p.shared_cases} shared cases")
        lines.append(
            f"  risk         agreement {_fmt(risk.raw_agreement)}  kappa {_fmt(risk.kappa)}"
            f"  weighted kappa {_fmt(risk.weighted_kappa)}"
        )
        lines.append(f"  should-flag  agreement {_fmt(flag.raw_agreement)}  kappa {_fmt(flag.kappa)}")
        lines.append(
            f"  out-of-scope agreement {_fmt(oos.raw_agreement)}  kappa {_fmt(oos.kappa)}"
            f"  ({oos.n} file decisions)"
        )
        if risk.kappa is not None and risk.kappa < report.target_risk_kappa:
            lines.append(
                f"  risk kappa below the target {report.target_risk_kappa}: discuss the disagreeing cases,"
                " amend the guide and relabel (labeling guide section 11)"
            )
        lines.append(f"  disagreeing cases: {', '.join(p.disagreeing_case_ids) or 'none'}")
    for s in report.skipped_pairs:
        lines.append(f"{s.labelers[0]} / {s.labelers[1]}: skipped, only {s.shared_cases} shared cases")
    return "\n".join(lines) + "\n"
