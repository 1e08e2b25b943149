"""Inter-labeler agreement (spec 8.1).

Cohen's kappa and linear-weighted kappa, each with its 95% interval (scoring/kappa.py: near-nominal
from 5 shared cases up), and the per-pair report.

Only the scored fields (risk, shouldFlag, outOfScope) are compared; free text is not. The report
carries labeler handles, case ids and numbers only, never case content. When both labelers used
a single class, chance agreement is 1 and kappa is undefined (not 1.0): agreeing on one class
says nothing about telling classes apart. The out-of-scope kappa is over file decisions, and the
files of one case are not independent: its interval is clustered by case.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from pydantic import Field

from graft_eval_pipeline.card import RISK_CLASSES, CamelModel
from graft_eval_pipeline.evalset.scoring import (
    cohen_kappa,
    kappa_interval,
    raw_agreement,
    round_down,
    round_up,
    weighted_kappa,
    weighted_kappa_interval,
)
from graft_eval_pipeline.evalset.sets import EvalCase, LabelSet

MIN_SHARED_CASES = 5
TARGET_RISK_KAPPA = 0.6


class KappaStat(CamelModel):
    """n items compared, the share that agree, and Cohen's kappa over them with its 95% interval.

    `kappa` and `ci95` are null with `undefined` true when both labelers used one class only;
    `ci95` is rounded outwards (4 decimals), so it holds the exact interval.
    """

    n: int
    raw_agreement: float | None
    kappa: float | None
    ci95: tuple[float, float] | None
    undefined: bool


class RiskStat(KappaStat):
    weighted_kappa: float | None
    weighted_kappa_ci95: tuple[float, float] | None


class PairAgreement(CamelModel):
    labelers: tuple[str, str]
    shared_cases: int
    risk: RiskStat
    should_flag: KappaStat
    out_of_scope: KappaStat = Field(
        description="per-file in/out decisions over every file of every shared case; the interval is "
        "clustered by case (the files of one case are not independent)"
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


def _outwards(bounds: tuple[float, float] | None) -> tuple[float, float] | None:
    return None if bounds is None else (round_down(bounds[0]), round_up(bounds[1]))


def _stat(
    a: Sequence[Hashable],
    b: Sequence[Hashable],
    categories: Sequence[Hashable],
    clusters: Sequence[Hashable] | None = None,
) -> KappaStat:
    kappa = cohen_kappa(a, b, categories)
    return KappaStat(
        n=len(a),
        raw_agreement=raw_agreement(a, b),
        kappa=kappa,
        ci95=_outwards(kappa_interval(a, b, categories, clusters=clusters)),
        undefined=kappa is None and len(a) > 0,
    )


def _pair_agreement(
    pair: tuple[str, str], shared: list[tuple[LabeledCase, LabelSet, LabelSet]]
) -> PairAgreement:
    risk_a = [la.risk for _, la, _ in shared]
    risk_b = [lb.risk for _, _, lb in shared]
    flag_a = [la.should_flag for _, la, _ in shared]
    flag_b = [lb.should_flag for _, _, lb in shared]
    oos_a: list[bool] = []
    oos_b: list[bool] = []
    oos_case: list[str] = []
    for case, la, lb in shared:
        for path in case.paths:
            oos_a.append(path in la.out_of_scope)
            oos_b.append(path in lb.out_of_scope)
            oos_case.append(case.id)
    base = _stat(risk_a, risk_b, RISK_CLASSES)
    return PairAgreement(
        labelers=pair,
        shared_cases=len(shared),
        risk=RiskStat(
            **base.model_dump(),
            weighted_kappa=weighted_kappa(risk_a, risk_b),
            weighted_kappa_ci95=_outwards(weighted_kappa_interval(risk_a, risk_b)),
        ),
        should_flag=_stat(flag_a, flag_b, (False, True)),
        out_of_scope=_stat(oos_a, oos_b, (False, True), clusters=oos_case),
        disagreeing_case_ids=sorted(c.id for c, la, lb in shared if la.scored() != lb.scored()),
    )


@dataclass(frozen=True, slots=True)
class LabeledCase:
    """What agreement needs of a case two or more labelers labeled.

    Its id, each labeler's label set and its distinct file paths (for the out-of-scope decisions);
    not its inputs.
    """

    id: str
    labels: dict[str, LabelSet]
    paths: tuple[str, ...]


class AgreementTally:
    """`agreement` over cases seen one at a time (a streamed run's first pass).

    It keeps every labeler's handle and a `LabeledCase` of each case that two or more labelers
    share, never a case's inputs, so it stays the size of the double-labeled label data.
    """

    def __init__(self) -> None:
        self._labelers: set[str] = set()
        self._shared: dict[str, LabeledCase] = {}

    def add(self, case: EvalCase) -> None:
        by_labeler = {label.labeler: label for label in case.labels}  # a labeler's last set counts
        self._labelers.update(by_labeler)
        if len(by_labeler) >= 2:
            paths = tuple(dict.fromkeys(f.path for f in case.inputs.files))
            self._shared[case.id] = LabeledCase(case.id, by_labeler, paths)
        else:
            self._shared.pop(case.id, None)

    def report(self, min_shared: int = MIN_SHARED_CASES) -> AgreementReport:
        """Every labeler pair, each using its own label sets (never the adjudication)."""
        pairs: list[PairAgreement] = []
        skipped: list[SkippedPair] = []
        ordered = [self._shared[i] for i in sorted(self._shared)]
        for pair in combinations(sorted(self._labelers), 2):
            first, second = pair
            shared = [
                (c, c.labels[first], c.labels[second])
                for c in ordered
                if first in c.labels and second in c.labels
            ]
            if len(shared) < min_shared:
                skipped.append(SkippedPair(labelers=pair, shared_cases=len(shared)))
            else:
                pairs.append(_pair_agreement(pair, shared))
        return AgreementReport(min_shared_cases=min_shared, pairs=pairs, skipped_pairs=skipped)


def agreement(cases: Iterable[EvalCase], min_shared: int = MIN_SHARED_CASES) -> AgreementReport:
    """Every labeler pair, each using its own label sets (never the adjudication)."""
    tally = AgreementTally()
    for case in cases:
        tally.add(case)
    return tally.report(min_shared)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _kappa(stat: KappaStat) -> str:
    """`0.400 [0.129–0.626]`, or why there is no kappa."""
    if stat.undefined:
        return "undefined (both used one class only)"
    return _with_interval(stat.kappa, stat.ci95)


def _with_interval(value: float | None, bounds: tuple[float, float] | None) -> str:
    if value is None or bounds is None:
        return "n/a"
    return f"{value:.3f} [{bounds[0]:.3f}–{bounds[1]:.3f}]"


def agreement_check(report: AgreementReport) -> tuple[bool, list[str]]:
    """The risk-kappa check.

    Passes only when some pair was compared and every pair's risk kappa is defined and at least the
    target. With no pair, agreement is not measured: it fails.

    Returns (passed, the pairs below target or undefined).
    """
    failing = [
        " / ".join(p.labelers)
        for p in report.pairs
        if p.risk.kappa is None or p.risk.kappa < report.target_risk_kappa
    ]
    return bool(report.pairs) and not failing, failing


def render_agreement(report: AgreementReport) -> str:
    """Human text for `graft-eval agreement`: one block per pair, ids and numbers only."""
    lines: list[str] = []
    if not report.pairs:
        lines.append(
            f"no labeler pair shares at least {report.min_shared_cases} cases: agreement is not measured "
            "(assign double labeling with `graft-eval assign-double`)"
        )
    for p in report.pairs:
        risk, flag, oos = p.risk, p.should_flag, p.out_of_scope
        weighted = (
            "undefined" if risk.undefined else _with_interval(risk.weighted_kappa, risk.weighted_kappa_ci95)
        )
        lines.append(f"{p.labelers[0]} / {p.labelers[1]}: {p.shared_cases} shared cases")
        lines.append(
            f"  risk         agreement {_fmt(risk.raw_agreement)}  kappa {_kappa(risk)}"
            f"  weighted kappa {weighted}"
        )
        lines.append(f"  should-flag  agreement {_fmt(flag.raw_agreement)}  kappa {_kappa(flag)}")
        lines.append(
            f"  out-of-scope agreement {_fmt(oos.raw_agreement)}  kappa {_kappa(oos)}"
            f"  ({oos.n} file decisions, interval clustered by case)"
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
