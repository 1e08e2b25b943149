"""The whole evaluation in one call: harness, then metrics, then the report.

This is the one place that composes the stages (run → scoring → report, with labeling's
agreement), so the harness itself needs nothing from the report. `graft-eval run` and the
Dagster assets both end up here or in the same steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

from graft_eval_pipeline.card import CardResult
from graft_eval_pipeline.evalset.compare import compare_reports
from graft_eval_pipeline.evalset.labeling import TARGET_RISK_KAPPA, AgreementReport, AgreementTally
from graft_eval_pipeline.evalset.report import CaseDetail, build_report, case_detail, ended_detail
from graft_eval_pipeline.evalset.run import RunOptions, collector_policy, run_harness
from graft_eval_pipeline.evalset.scoring import (
    CaseRow,
    ConfirmationTrials,
    EvalReport,
    LabelAgreement,
    PairKappa,
    compute_metrics,
    round_down,
    round_up,
    total_cost,
)
from graft_eval_pipeline.evalset.sets import EvalCase, EvalError

T = TypeVar("T")


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
    """The report, and each case's panel data for report.html.

    Ids, classes and counts of its card result for every set, and for the synthetic set alone its
    title and card (model prose: only that file shows it).
    """

    report: EvalReport
    details: dict[str, CaseDetail] | None


def _spent(rows: list[CaseRow]) -> tuple[float, int]:
    """Money and tokens the calls of these rows cost this run (cached rows cost nothing now)."""
    fresh = [r for r in rows if not r.cached]
    usd = sum(r.cost_usd or 0.0 for r in fresh)
    tokens = sum(
        r.usage.input_tokens + r.usage.output_tokens + r.usage.cache_read_tokens + r.usage.cache_write_tokens
        for r in fresh
    )
    return usd, tokens


def confirm_blockers(options: RunOptions, report: EvalReport, baseline: EvalReport | None) -> EvalReport:
    """The live gate's second look.

    Re-run the cases whose blocker event showed in this run without reproducing enough to decide
    (`Comparison.unconfirmed`), up to the trials the rule asks for, within what is left of the run's
    caps; their rows go to `report.confirmation`.

    Each trial has its own cache entry, so a second evaluation re-runs nothing. Fake runs are
    scripted (one trial decides), and without a baseline there is nothing to confirm.
    """
    if baseline is None or options.mode != "live":
        return report
    try:
        comparison = compare_reports(baseline, report)
    except EvalError:
        return report
    ids = {c.id for c in comparison.unconfirmed if c.needs_trials is not None}
    if not ids:
        return report
    trials = comparison.blocker_rule.confirm_trials
    have = report.trials.trials if report.trials is not None else 1
    rows = [*report.cases, *(report.trials.rows if report.trials is not None else [])]
    usd, tokens = _spent(rows)
    extra = run_harness(
        replace(
            options,
            case_filter=lambda case_id, _tags: case_id in ids,
            trials=trials,
            max_cost_usd=max(options.max_cost_usd - usd, 0.0),
            max_tokens=max(options.max_tokens - tokens, 1),
            on_case=None,
            on_result=None,
            card_results=None,
        )
    )
    confirm_rows = [r for r in extra.trial_rows if r.trial >= have]
    return report.model_copy(
        update={
            "confirmation": ConfirmationTrials(
                trials=trials, cases=sorted(ids), rows=confirm_rows, cost_usd=total_cost(confirm_rows)
            )
        }
    )


def evaluate(options: RunOptions, baseline: EvalReport | None = None) -> Evaluation:
    """Harness, metrics and report in one call (`evaluate_then` without a next step)."""
    return evaluate_then(options, baseline, lambda evaluation: evaluation)


def evaluate_then(options: RunOptions, baseline: EvalReport | None, then: Callable[[Evaluation], T]) -> T:
    """Harness, metrics and report, then `then`, all under the run's collector policy.

    `then` is what `graft-eval run` writes of them; the policy is `collector_policy` (a fake run
    keeps the collector paused through its report files too). Returns what `then` returns.

    The harness streams its cases; the first pass shows each case here once, and only its label
    data is kept for labeler agreement (every case of the set, as `agreement` over the whole set
    would see them). For report.html's case panel each case keeps the classes and counts of its
    card (`CaseFacts`), and for the synthetic set alone its title and card text (report.html holds
    them all anyway); a pilot set keeps nothing of the cards' content.
    A live run with a `baseline` re-runs its unconfirmed blocker candidates (`confirm_blockers`).
    """
    labels = AgreementTally()
    content = options.set.meta.kind == "synthetic"
    details: dict[str, CaseDetail] = {}

    def seen(case: EvalCase) -> None:
        labels.add(case)
        if content:
            details[case.id] = case_detail(case, None, content=True)

    def ended(case: EvalCase, result: CardResult) -> None:
        details[case.id] = ended_detail(details.get(case.id), case, result, content=content)

    with collector_policy(options):
        harness = run_harness(replace(options, on_case=seen, on_result=ended))
        label_agreement = report_agreement(labels.report())
        report = build_report(harness, compute_metrics(harness.rows), label_agreement=label_agreement)
        return then(Evaluation(confirm_blockers(options, report, baseline), details))


def run_eval(options: RunOptions) -> EvalReport:
    """The report alone."""
    return evaluate(options).report
