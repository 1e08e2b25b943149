"""One report row per case from the engine's result (spec 6.6 `cases[]`, E21).

Paths enter a row only as out-of-scope counts (E8); cost is priced per call and model.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from graft_eval_pipeline.card import CamelModel, CardResult, FloorResult, LlmPurpose, max_risk
from graft_eval_pipeline.evalset.scoring.metrics import flag_outcome, oos_counts
from graft_eval_pipeline.evalset.scoring.pricing import cost
from graft_eval_pipeline.evalset.scoring.report_schema import (
    CaseRow,
    GitInfo,
    GoldSummary,
    ModelPair,
    PromptInfo,
    RunInfo,
    SetSummary,
    SkipReason,
    UsageSummary,
)
from graft_eval_pipeline.evalset.sets import (
    CaseStratum,
    CaseTally,
    EvalCase,
    PilotSource,
    SetMeta,
    gold,
    repository_label,
    stratum_label,
)

ROW_COST_DECIMALS = 8


class HarnessRun(CamelModel):
    """What a harness run hands to scoring and reporting (the Dagster harness asset's value).

    Report material only (ids, classes, counts, cost): one row per case. The card results
    (model prose) went into the set as each case ended; `card_results` is their file there
    (sealed in a pilot set), or None when the run kept none.
    """

    set: SetSummary
    prompt: PromptInfo
    models: ModelPair
    llm: Literal["fake", "live"]
    run: RunInfo
    created_at: datetime
    git: GitInfo
    rows: list[CaseRow]
    card_results: str | None = None
    trials: int = 1
    trial_rows: list[CaseRow] = Field(
        default_factory=list
    )  # --trials N: the rows of trials 1 to N-1 (`rows` is trial 0)


def case_cost(result: CardResult, purpose: LlmPurpose | None = None) -> float | None:
    """Each call (of `purpose`, or all) priced at its own model's rates (batch calls at batch prices).

    None when a model has no price.
    """
    costs = [
        cost(call.model, call.usage, batch=call.batch)
        for call in result.calls
        if purpose in (None, call.purpose)
    ]
    if any(c is None for c in costs):
        return None
    return round(sum(c for c in costs if c is not None), ROW_COST_DECIMALS)


def gold_summary(case: EvalCase) -> GoldSummary | None:
    """The gold label's scored fields, and how it came about (label sets, adjudication, confidence)."""
    label = gold(case)
    if label is None:
        return None
    return GoldSummary(
        risk=label.risk,
        should_flag=label.should_flag,
        out_of_scope_count=len(label.out_of_scope),
        label_sets=len(case.labels),
        adjudicated=case.adjudicated is not None,
        confidence=label.confidence,
    )


def case_stratum(case: EvalCase, label_key: bytes | None) -> CaseStratum | None:
    """The export stratum a pilot case was drawn in, as opaque labels.

    Labels for its sealed frame and key (`stratum_label`; `label_key`: the set's key); None for
    designed (synthetic) cases.
    """
    stratum = case.source.stratum if isinstance(case.source, PilotSource) else None
    return None if stratum is None else stratum_label(stratum, label_key)


def case_repository(case: EvalCase, label_key: bytes | None) -> str | None:
    """A pilot case's repository as an opaque label, for intervals clustered by repository.

    The label is `repository_label`'s; None for designed (synthetic) cases.
    """
    if not isinstance(case.source, PilotSource):
        return None
    return repository_label(case.source.repository, label_key)


def build_row(case: EvalCase, result: CardResult, cached: bool, *, label_key: bytes | None) -> CaseRow:
    """One report row: classes, rule ids, counts and cost.

    Paths only enter as counts, the stratum as opaque labels (`label_key`: the set's key).
    """
    label = gold(case)
    ok = result.status == "ok"
    verifier_status = result.verifier.status if result.verifier is not None else None
    oos = None
    if label is not None and ok:
        predicted = [e.path for e in result.card.out_of_scope_edits] if result.card is not None else []
        predicted += result.verifier.unexplained if result.verifier is not None else []
        oos = oos_counts(predicted, label.out_of_scope)
    risk = result.risk
    usage = result.usage
    return CaseRow(
        id=case.id,
        tags=list(case.tags),
        gold=gold_summary(case),
        floor=risk.floor,
        model=max_risk(risk.writer, risk.first_pass, risk.verifier),
        final=risk.final,
        status=result.status,
        failure_reason=result.failure_reason,
        verifier_status=verifier_status,
        raised_by=list(result.raised_by),
        floor_rules=list(result.floor_rules),
        instructions_in_data=result.instructions_in_data,
        instructions_in_data_from=result.instructions_in_data_from,
        oos=oos,
        flag=flag_outcome(verifier_status, label.should_flag if label else None) if ok else "na",
        usage=UsageSummary(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            calls=len(result.calls),
        ),
        cost_usd=case_cost(result),
        cached=cached,
        skipped=None,
        stratum=case_stratum(case, label_key),
        repository=case_repository(case, label_key),
        writer=max_risk(risk.writer, risk.first_pass),
        verifier=risk.verifier,
        verifier_cost_usd=case_cost(result, "verifier"),
    )


def skipped_row(
    case: EvalCase, floor: FloorResult, reason: SkipReason = "budget", *, label_key: bytes | None
) -> CaseRow:
    """A case that did not start (the budget caps, or a secret in its prompt text).

    The floor is known, nothing else ran.

    It is not a run case, so the metrics leave it out; it costs nothing.
    """
    return CaseRow(
        id=case.id,
        tags=list(case.tags),
        gold=gold_summary(case),
        floor=floor.risk,
        model=None,
        final=None,
        status=None,
        failure_reason=None,
        verifier_status=None,
        raised_by=[],
        floor_rules=list(floor.rules),
        instructions_in_data=False,
        oos=None,
        flag="na",
        usage=UsageSummary(
            input_tokens=0, output_tokens=0, cache_read_tokens=0, cache_write_tokens=0, calls=0
        ),
        cost_usd=0.0,
        cached=False,
        skipped=reason,
        stratum=case_stratum(case, label_key),
        repository=case_repository(case, label_key),
    )


def git_info(cwd: Path) -> GitInfo:
    """Commit and dirty flag of the code that ran; both None outside a git checkout."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain"], cwd=cwd, capture_output=True, text=True, check=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return GitInfo(commit=None, dirty=None)
    return GitInfo(commit=commit or None, dirty=bool(status.strip()))


def set_summary(meta: SetMeta, cases: CaseTally | Iterable[EvalCase], rows: list[CaseRow]) -> SetSummary:
    """`cases`: the run's cases, or the tally a streamed run kept of them."""
    tally = cases if isinstance(cases, CaseTally) else _tally(cases)
    counts = tally.counts()
    return SetSummary(
        set_id=meta.set_id,
        kind=meta.kind,
        case_set_hash=tally.case_set_hash(),
        cases=counts.cases,
        scored=sum(r.gold is not None and r.skipped is None for r in rows),
        unlabeled=counts.unlabeled,
        needs_adjudication=counts.needs_adjudication,
    )


def _tally(cases: Iterable[EvalCase]) -> CaseTally:
    tally = CaseTally()
    for case in cases:
        tally.add(case)
    return tally
