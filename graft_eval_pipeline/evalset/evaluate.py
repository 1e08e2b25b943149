"""The whole evaluation in one call: harness, then metrics, then the report.

This is the one place that composes the stages (run → scoring → report, with labeling's
agreement), so the harness itself needs nothing from the report. `graft-eval run` and the
Dagster assets both end up here or in the same steps.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from graft_eval_pipeline.card.result import CardResult
from graft_eval_pipeline.evalset.labeling import TARGET_RISK_KAPPA, AgreementReport, agreement
from graft_eval_pipeline.evalset.report import build_report
from graft_eval_pipeline.evalset.run import RunOptions, collector_policy, run_harness
from graft_eval_pipeline.evalset.scoring import (
    EvalReport,
    LabelAgreement,
    PairKappa,
    compute_metrics,
    round_down,
    round_up,
)
from graft_eval_pipeline.evalset.sets import EvalCase


def report_agreement(report: AgreementReport) -> LabelAgreement:
    """Labeling's per-pair agreement as the report holds it: risk kappa with its interval."""
    return LabelAgreement(
        target=TARGET_RISK_KAPPA,
        pairs=[
            PairKappa(
                labelers=p.labelers,
                n=p.risk.n,
                kappa=None if p.risk.kappa is None else round(p.risk.kappa, 4),
                ci95=None if p.risk.ci95 is None else (round_down(p.risk.ci95[0]), round_up(p.risk.ci95[1])),
                status="undefined" if p.risk.undefined else "ok",
            )
            for p in report.pairs
        ],
        skipped_pairs=len(report.skipped_pairs),
    )


@dataclass(frozen=True)
class Evaluation:
    """The report, and the cards behind it (model prose: only the synthetic report.html shows them)."""

    report: EvalReport
    results: dict[str, CardResult]


def evaluate(options: RunOptions) -> Evaluation:
    """Harness, metrics and report in one call: what `graft-eval run` does before checking."""
    measured: list[AgreementReport] = []

    def measure(cases: list[EvalCase]) -> None:
        measured.append(agreement(cases))

    with collector_policy(options):  # a fake run keeps the collector paused through the report too
        harness = run_harness(replace(options, on_cases=measure))
        label_agreement = report_agreement(measured[0]) if measured else None
        report = build_report(harness, compute_metrics(harness.rows), label_agreement=label_agreement)
        return Evaluation(report, harness.results)


def run_eval(options: RunOptions) -> EvalReport:
    """The report alone."""
    return evaluate(options).report
