"""Does the second model earn its cost? The verifier measured against the human gold labels.

On scored cases whose verifier answered: how often it raised the class when the class without it
(floor, writer, instructions in data) was below gold — a true catch —, how often it raised a
class that was already right or high — a false alarm —, and how often it let an
under-classification through; each with a Wilson interval, beside Cohen's kappa of the
verifier's own class (and, for reference, the writer's) against gold, with the interval labeler
agreement uses (scoring/kappa.py; "undefined" when both used one class only). The same for the
flag (a disagreeing verifier) against the gold should-flag. And what the verifier's calls cost.
Computed from report rows (ids, classes, counts and cost only).
"""

from __future__ import annotations

from collections.abc import Iterable

from graft_eval_pipeline.card import RISK_CLASSES, RISK_ORDER, CamelModel, RiskClass, max_risk
from graft_eval_pipeline.evalset.scoring import (
    CaseRow,
    cohen_kappa,
    kappa_interval,
    round_down,
    round_up,
    wilson,
)

DECIMALS = 4


class Share(CamelModel):
    k: int
    n: int
    rate: float | None
    low: float | None
    high: float | None


class Kappa(CamelModel):
    n: int
    kappa: float | None
    low: float | None
    high: float | None


class RiskCalibration(CamelModel):
    cases: int  # scored, card available, writer and verifier answered
    below_gold_without_verifier: int
    catches: Share  # of those below gold: the verifier raised the class
    catches_to_gold: Share  # of those below gold: raised to gold or above
    missed: Share  # of those below gold: not raised
    false_alarms: Share  # of those at or above gold: raised anyway
    verifier_kappa: Kappa  # the verifier's own class against gold
    writer_kappa: Kappa  # the writer's class against gold, for reference


class FlagCalibration(CamelModel):
    cases: int  # scored, card available, verifier answered
    should_flag: int
    catches: Share  # of those that should be flagged: flagged
    missed: Share
    false_alarms: Share  # of those that should not: flagged anyway
    kappa: Kappa  # flagged against should-flag


class VerifierCost(CamelModel):
    verifier_cost_usd: float | None
    total_cost_usd: float | None
    share_of_cost: float | None
    cost_per_catch_usd: float | None  # verifier cost per true catch of a class or a flag


class Calibration(CamelModel):
    rows_have_classes: bool  # false for reports made before rows carried the verifier's class
    risk: RiskCalibration
    flags: FlagCalibration
    cost: VerifierCost


def share(k: int, n: int) -> Share:
    interval = wilson(k, n)
    return Share(
        k=k,
        n=n,
        rate=round(k / n, DECIMALS) if n else None,
        low=round_down(interval[0]) if interval else None,  # bounds outwards, as every report bound
        high=round_up(interval[1]) if interval else None,
    )


def kappa_of(pairs: list[tuple[int, int]], classes: int) -> Kappa:
    """Kappa of the pairs (class indices) with its 95% interval (scoring's `kappa_interval`)."""
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    value = cohen_kappa(a, b, range(classes))
    interval = kappa_interval(a, b, range(classes))
    return Kappa(
        n=len(pairs),
        kappa=round(value, DECIMALS) if value is not None else None,
        low=round_down(interval[0]) if interval else None,  # bounds outwards, as every report bound
        high=round_up(interval[1]) if interval else None,
    )


def without_verifier(row: CaseRow) -> RiskClass | None:
    """The class the card would have had without the verifier.

    Floor, writer and the writer's own report of instructions in the data. A lift to logic that only
    the verifier's report of instructions caused is the verifier's (rows that do not say who
    reported it: the combined flag, as before rows said so).
    """
    writer_saw = (
        row.instructions_in_data
        if row.instructions_in_data_from is None
        else "writer" in row.instructions_in_data_from
    )
    return max_risk(row.floor, row.writer, "logic" if writer_saw else None)


def _answered(rows: Iterable[CaseRow]) -> list[CaseRow]:
    return [r for r in rows if r.skipped is None and r.gold is not None and r.status == "ok"]


def risk_calibration(rows: list[CaseRow]) -> RiskCalibration:
    judged = [r for r in _answered(rows) if r.verifier is not None and r.writer is not None]
    below: list[tuple[CaseRow, RiskClass]] = []
    at_or_above: list[tuple[CaseRow, RiskClass]] = []
    for row in judged:
        before = without_verifier(row)
        assert row.gold is not None and before is not None and row.final is not None
        (below if RISK_ORDER[before] < RISK_ORDER[row.gold.risk] else at_or_above).append((row, before))
    raised = [(r, b) for r, b in below if RISK_ORDER[r.final or b] > RISK_ORDER[b]]
    to_gold = [
        r
        for r, _ in raised
        if r.gold is not None and RISK_ORDER[r.final or "trivial"] >= RISK_ORDER[r.gold.risk]
    ]
    alarms = [r for r, b in at_or_above if RISK_ORDER[r.final or b] > RISK_ORDER[b]]
    gold_index = {c: i for i, c in enumerate(RISK_CLASSES)}
    return RiskCalibration(
        cases=len(judged),
        below_gold_without_verifier=len(below),
        catches=share(len(raised), len(below)),
        catches_to_gold=share(len(to_gold), len(below)),
        missed=share(len(below) - len(raised), len(below)),
        false_alarms=share(len(alarms), len(at_or_above)),
        verifier_kappa=kappa_of(
            [(gold_index[r.verifier], gold_index[r.gold.risk]) for r in judged if r.verifier and r.gold],
            3,
        ),
        writer_kappa=kappa_of(
            [(gold_index[r.writer], gold_index[r.gold.risk]) for r in judged if r.writer and r.gold], 3
        ),
    )


def flag_calibration(rows: list[CaseRow]) -> FlagCalibration:
    judged = [r for r in _answered(rows) if r.flag in ("tp", "fp", "fn", "tn")]
    count = {kind: sum(r.flag == kind for r in judged) for kind in ("tp", "fp", "fn", "tn")}
    should = count["tp"] + count["fn"]
    return FlagCalibration(
        cases=len(judged),
        should_flag=should,
        catches=share(count["tp"], should),
        missed=share(count["fn"], should),
        false_alarms=share(count["fp"], count["fp"] + count["tn"]),
        kappa=kappa_of([(int(r.flag in ("tp", "fp")), int(r.flag in ("tp", "fn"))) for r in judged], 2),
    )


def verifier_cost(rows: list[CaseRow], catches: int) -> VerifierCost:
    run = [r for r in rows if r.skipped is None]
    verifier = [r.verifier_cost_usd for r in run]
    total = [r.cost_usd for r in run]
    v = None if None in verifier else round(sum(c or 0.0 for c in verifier), 6)
    t = None if None in total else round(sum(c or 0.0 for c in total), 6)
    return VerifierCost(
        verifier_cost_usd=v,
        total_cost_usd=t,
        share_of_cost=round(v / t, DECIMALS) if v is not None and t else None,
        cost_per_catch_usd=round(v / catches, 6) if v is not None and catches else None,
    )


def calibrate(rows: list[CaseRow]) -> Calibration:
    risk = risk_calibration(rows)
    flags = flag_calibration(rows)
    return Calibration(
        rows_have_classes=any(r.writer is not None or r.verifier is not None for r in rows),
        risk=risk,
        flags=flags,
        cost=verifier_cost(rows, risk.catches.k + flags.catches.k),
    )


# --- rendering -------------------------------------------------------------------------------


def _share_text(s: Share) -> str:
    if s.rate is None:
        return f"n/a ({s.k}/{s.n})"
    return f"{s.rate:.4f} ({s.k}/{s.n}, 95% CI {s.low:.4f}–{s.high:.4f})"


def _kappa_text(k: Kappa) -> str:
    if k.kappa is None:
        return f"{'undefined (both used one class only)' if k.n else 'n/a'} (n = {k.n})"
    interval = f", 95% CI {k.low:.4f}–{k.high:.4f}" if k.low is not None and k.high is not None else ""
    return f"{k.kappa:.4f} (n = {k.n}{interval})"


def _usd(value: float | None) -> str:
    return "n/a" if value is None else f"${value:.4f}"


def calibration_lines(c: Calibration) -> list[str]:
    """The calibration as `label: value` lines (report.md renders them as a list, the CLI as text)."""
    r, f, cost = c.risk, c.flags, c.cost
    risk_lines = [
        f"class, on {r.cases} scored case(s) the verifier answered; "
        f"{r.below_gold_without_verifier} below gold without the verifier",
        f"  true catches (raised when below gold): {_share_text(r.catches)}",
        f"  raised to gold or above: {_share_text(r.catches_to_gold)}",
        f"  missed under-classifications: {_share_text(r.missed)}",
        f"  false alarms (raised when already at or above gold): {_share_text(r.false_alarms)}",
        f"  kappa vs gold: verifier {_kappa_text(r.verifier_kappa)}; writer {_kappa_text(r.writer_kappa)}",
    ]
    if not c.rows_have_classes:
        risk_lines = [
            "class: n/a (the rows carry no writer or verifier class: a report made before they were)"
        ]
    return [
        *risk_lines,
        f"flag, on {f.cases} scored case(s); {f.should_flag} should be flagged",
        f"  true catches: {_share_text(f.catches)}",
        f"  missed: {_share_text(f.missed)}",
        f"  false alarms: {_share_text(f.false_alarms)}",
        f"  kappa vs gold: {_kappa_text(f.kappa)}",
        f"cost: verifier {_usd(cost.verifier_cost_usd)} of {_usd(cost.total_cost_usd)}"
        + (f" ({cost.share_of_cost:.1%})" if cost.share_of_cost is not None else "")
        + f"; per true catch {_usd(cost.cost_per_catch_usd)}",
    ]


def render_calibration(c: Calibration) -> str:
    return "verifier calibration against gold\n" + "".join(f"  {line}\n" for line in calibration_lines(c))


def calibration_markdown(c: Calibration) -> str:
    return "".join(
        f"- {line.strip()}\n" if not line.startswith("  ") else f"  - {line.strip()}\n"
        for line in calibration_lines(c)
    )
