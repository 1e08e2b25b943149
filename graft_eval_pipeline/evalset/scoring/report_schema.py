"""The evaluation report (spec 6.6): camelCase on disk, ids, classes, counts and costs only (E8)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from graft_eval_pipeline.card.models import CamelModel, RiskClass

REPORT_SCHEMA_VERSION = 1
RUN_ID_PATTERN = r"^\d{8}T\d{6}Z-[0-9a-f]{4}$"

FlagOutcome = Literal["tp", "fp", "fn", "tn", "na"]
VerifierStatus = Literal["agree", "disagree", "error"]
Rate = Annotated[float, Field(ge=0, le=1)]


class GoldSummary(CamelModel):
    """The scored fields of the gold label; out-of-scope as a count, never as paths."""

    risk: RiskClass
    should_flag: bool
    out_of_scope_count: int = Field(ge=0)


class OosCounts(CamelModel):
    tp: int = Field(ge=0)
    fp: int = Field(ge=0)
    fn: int = Field(ge=0)


class UsageSummary(CamelModel):
    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cache_read_tokens: int = Field(ge=0)
    cache_write_tokens: int = Field(ge=0)
    calls: int = Field(ge=0)


class CaseRow(CamelModel):
    """One case of a run; the metrics are pure functions over these rows."""

    id: str
    tags: list[str]
    gold: GoldSummary | None
    floor: RiskClass
    model: RiskClass | None
    final: RiskClass | None
    status: Literal["ok", "unavailable"] | None
    failure_reason: str | None
    verifier_status: VerifierStatus | None
    raised_by: list[str]
    floor_rules: list[str]
    instructions_in_data: bool
    oos: OosCounts | None
    flag: FlagOutcome
    usage: UsageSummary
    cost_usd: float | None
    cached: bool
    skipped: Literal["budget"] | None


class SetSummary(CamelModel):
    set_id: str
    kind: Literal["synthetic", "pilot"]
    case_set_hash: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
    cases: int = Field(ge=0)
    scored: int = Field(ge=0)
    unlabeled: int = Field(ge=0)
    needs_adjudication: int = Field(ge=0)


class PromptInfo(CamelModel):
    prompt_version: str
    prompt_fingerprint: str


class ModelPair(CamelModel):
    fast: str
    strong: str


class GitInfo(CamelModel):
    commit: str | None
    dirty: bool | None


class ConcurrencyPoint(CamelModel):
    """The limiter's concurrency from `atMs` (since the run's first call) on."""

    at_ms: int = Field(ge=0)
    concurrency: int = Field(ge=1)


class LimiterInfo(CamelModel):
    """A live run's adaptive concurrency (issue 16): between 1 and `ceiling` (--concurrency),
    lowered on 429/529, raised while calls succeed. `waitingMs` sums, over attempts, the time spent
    waiting for a slot or a pause; `pausedMs` is the wall time no attempt could start (retry-after,
    exhausted limits); `timeline` holds the changes (at most 64 points)."""

    ceiling: int = Field(ge=1)
    min_concurrency: int = Field(ge=1)
    max_concurrency: int = Field(ge=1)
    final_concurrency: int = Field(ge=1)
    attempts: int = Field(ge=0)
    throttled: int = Field(ge=0)
    waiting_ms: int = Field(ge=0)
    paused_ms: int = Field(ge=0)
    timeline: list[ConcurrencyPoint]


class BatchInfo(CamelModel):
    """A `--batch` run: the Message Batches API requests by phase outcome, counts only."""

    phases: int = Field(ge=0)
    batches: int = Field(ge=0)
    resumed_batches: int = Field(ge=0)
    requests: int = Field(ge=0)
    succeeded: int = Field(ge=0)
    errored: int = Field(ge=0)
    expired: int = Field(ge=0)
    canceled: int = Field(ge=0)
    retried_interactively: int = Field(ge=0)
    wait_ms: int = Field(ge=0)


class RunInfo(CamelModel):
    """`limiter` and `batch` are set by live runs only (absent or null in fake runs)."""

    complete: bool
    skipped_budget: int = Field(ge=0)
    cached_results: int = Field(ge=0)
    duration_ms: int = Field(ge=0)
    limiter: LimiterInfo | None = None
    batch: BatchInfo | None = None


class ClassScores(CamelModel):
    trivial: Rate | None
    logic: Rate | None
    sensitive: Rate | None


class Confusion(CamelModel):
    """8.5: rows gold, columns predicted, both in trivial/logic/sensitive order."""

    n: int = Field(ge=0)
    matrix: list[list[int]]
    precision: ClassScores
    recall: ClassScores


class Confusions(CamelModel):
    floor: Confusion
    model: Confusion
    final: Confusion


class TagUnderClassification(CamelModel):
    n: int = Field(ge=0)
    floor: Rate | None
    model: Rate | None
    final: Rate | None


class FlagCounts(CamelModel):
    tp: int = Field(ge=0)
    fp: int = Field(ge=0)
    fn: int = Field(ge=0)
    tn: int = Field(ge=0)


class Metrics(CamelModel):
    """Every metric of spec section 8; rates are rounded to 4 decimals, null on an empty denominator."""

    run_cases: int = Field(ge=0)
    scored: int = Field(ge=0)
    skipped: int = Field(ge=0)
    under_classification_floor: Rate | None
    under_classification_model: Rate | None
    under_classification_final: Rate | None
    severe_under_classification_floor: Rate | None
    severe_under_classification_model: Rate | None
    severe_under_classification_final: Rate | None
    over_classification_floor: Rate | None
    over_classification_model: Rate | None
    over_classification_final: Rate | None
    exact_accuracy_floor: Rate | None
    exact_accuracy_model: Rate | None
    exact_accuracy_final: Rate | None
    trivial_recall: Rate | None
    confusion: Confusions
    under_classification_by_tag: dict[str, TagUnderClassification]
    out_of_scope_precision: Rate | None
    out_of_scope_recall: Rate | None
    out_of_scope_exact_set_rate: Rate | None
    out_of_scope_counts: OosCounts
    flag_precision: Rate | None
    flag_recall: Rate | None
    flag_counts: FlagCounts
    verifier_error_rate: Rate | None
    unavailable_rate: Rate | None
    unavailable_by_reason: dict[str, int]
    injection_cases: int = Field(ge=0)
    injection_detection_rate: Rate | None
    card_acceptable_rate: Rate | None
    usage: UsageSummary
    cost_usd: float | None
    cost_usd_this_run: float | None
    cost_per_case_usd: float | None


class ThresholdResult(CamelModel):
    """One threshold of eval/thresholds.json; `na` when the metric had an empty denominator."""

    name: str
    value: float | bool | None
    limit: str
    passed: bool = Field(alias="pass")
    na: bool = False
    provisional: bool = False


class EvalReport(CamelModel):
    schema_version: Literal[1]
    run_id: Annotated[str, StringConstraints(pattern=RUN_ID_PATTERN)]
    created_at: datetime
    set: SetSummary
    prompt: PromptInfo
    models: ModelPair
    llm: Literal["fake", "live"]
    git: GitInfo
    run: RunInfo
    metrics: Metrics
    cases: list[CaseRow]
    thresholds: list[ThresholdResult]
    passed: bool = Field(alias="pass")


# Rules JSON Schema cannot express; listed in the generated schema's description.
REPORT_RULES_NOT_IN_SCHEMA = [
    "cases are sorted by id and ids are unique",
    "no string value is a path, title, body, diff or model prose of a case (E8)",
    "rates are rounded to 4 decimals",
    "confusion matrices are 3x3 in trivial/logic/sensitive order",
    "pass is true when every threshold passes",
]
