"""The evaluation report (spec 6.6): camelCase on disk, ids, classes, counts and costs only (E8)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from graft_eval_pipeline.card import CamelModel, RiskClass
from graft_eval_pipeline.evalset.scoring.intervals import IntervalMethod
from graft_eval_pipeline.evalset.sets import CaseStratum, Confidence

# 2: every rate carries its counts and interval, label quality, population estimates, gates on
# evidence. Version 1 reports still load as baselines (their values are compared).
REPORT_SCHEMA_VERSION = 2
RUN_ID_PATTERN = r"^\d{8}T\d{6}Z-[0-9a-f]{4}$"

FlagOutcome = Literal["tp", "fp", "fn", "tn", "na"]
SkipReason = Literal["budget", "secret_detected"]
"""Why a case did not run: the budget caps, or a secret in its prompt text (live mode)."""
VerifierStatus = Literal["agree", "disagree", "error"]
Rate = Annotated[float, Field(ge=0, le=1)]
Interval = tuple[Rate, Rate]


class RateStat(CamelModel):
    """A rate with its evidence: k of n, the share (4 decimals) and its two-sided 95% interval.

    `value` and `ci95` are null when n is 0 (an empty denominator says nothing).
    """

    k: int = Field(ge=0)
    n: int = Field(ge=0)
    value: Rate | None
    ci95: Interval | None
    method: IntervalMethod


class CaseClusteredRate(RateStat):
    """A rate over files (out-of-scope precision and recall).

    `k` of `n` files, its interval clustered by case (the files of one PR are not independent):
    Clopper-Pearson at the Korn-Graubard effective size over `clusters` cases, never below one file
    per case. The three cluster fields are null in reports made before the interval was clustered (a
    pooled Wilson interval then).
    """

    clustered_by: Literal["case"] | None = None
    clusters: int | None = Field(default=None, ge=0)
    effective_n: float | None = None


class SafetyRate(RateStat):
    """An under-classification rate.

    Exact interval, plus the one-sided 95% upper bound (the rate is below it with 95% confidence; a
    threshold can gate on it with `"on": "upper95"`).
    """

    upper95: Rate | None


class GoldSummary(CamelModel):
    """The scored fields of the gold label; out-of-scope as a count, never as paths.

    `labelSets`, `adjudicated` and `confidence` (of the gold set) feed the label-quality block.
    """

    risk: RiskClass
    should_flag: bool
    out_of_scope_count: int = Field(ge=0)
    label_sets: int = Field(default=1, ge=0)
    adjudicated: bool = False
    confidence: Confidence = "high"


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
    skipped: SkipReason | None
    stratum: CaseStratum | None = None
    # A pilot case's repository as an opaque label (`repo-<hex>`), for intervals clustered by
    # repository; left out of the JSON for designed cases.
    repository: str | None = Field(default=None, exclude_if=lambda value: value is None)
    # The verifier's own class and the writer's (first pass or escalated), for the verifier
    # calibration; null where that model did not answer, and in reports made before they existed.
    writer: RiskClass | None = None
    verifier: RiskClass | None = None
    verifier_cost_usd: float | None = None  # the verifier's calls alone; null when unpriced
    # Which model reported instructions in the data ("writer", "verifier"); left out of the JSON
    # (and null) in rows of reports or cached results made before results said so.
    instructions_in_data_from: list[str] | None = Field(default=None, exclude_if=lambda value: value is None)
    # Which run of the case this is (--trials N): 0 for the first, left out of the JSON when 0.
    trial: int = Field(default=0, ge=0, exclude_if=lambda value: value == 0)


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
    # A hash of the card engine's code (`card.engine`); null in reports made before it was recorded.
    engine_fingerprint: str | None = Field(default=None, exclude_if=lambda value: value is None)


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
    """A live run's adaptive concurrency (issue 16).

    Between 1 and `ceiling` (--concurrency), lowered on 429/529, raised while calls succeed.
    `waitingMs` sums, over attempts, the time spent waiting for a slot or a pause; `pausedMs` is the
    wall time no attempt could start (retry-after, exhausted limits); `timeline` holds the changes
    (at most 64 points).
    """

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
    trivial: RateStat
    logic: RateStat
    sensitive: RateStat


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
    """Under-classification among a tag's scored cases; `tooSmall` below 5 cases (do not read it)."""

    n: int = Field(ge=0)
    floor: SafetyRate
    model: SafetyRate
    final: SafetyRate
    too_small: bool


class FlagCounts(CamelModel):
    tp: int = Field(ge=0)
    fp: int = Field(ge=0)
    fn: int = Field(ge=0)
    tn: int = Field(ge=0)


class LabelQuality(CamelModel):
    """How much the gold labels can be trusted.

    Shares of gold double-labeled, adjudicated and low-confidence, and final under-classification on
    double-labeled gold alone (a sensitivity line: if it differs much from the headline, single
    labels are moving the result).
    """

    gold: int = Field(ge=0)
    double_labeled: RateStat
    adjudicated: RateStat
    low_confidence: RateStat
    under_classification_final_double_labeled: SafetyRate


class StratumEstimate(CamelModel):
    """One export stratum: its population, the cases drawn, those run and scored, the weight."""

    frame: str
    stratum: str
    population: int = Field(ge=0)
    sampled: int = Field(ge=0)
    run_cases: int = Field(ge=0)
    scored: int = Field(ge=0)
    weight: float | None = Field(description="population / scored cases of the stratum")
    under_classification_final: SafetyRate


class PopulationRate(CamelModel):
    """A post-stratified estimate of a rate over the exported PR population.

    Each stratum's cases weigh population / cases of the stratum; the variance is the stratified
    (linearised ratio) variance with the finite-population correction, and the interval is
    Clopper-Pearson on the effective sample size (Korn-Graubard), never larger than `n`.
    """

    n: int = Field(ge=0)
    value: Rate | None
    ci95: Interval | None
    upper95: Rate | None
    effective_n: float | None
    method: Literal["post-stratified"] = "post-stratified"
    covered_population: int | None = Field(
        default=None, description="PRs of the strata with a case in this rate (null in older reports)"
    )


class ClusteredRate(CamelModel):
    """A rate whose cases come from several repositories.

    `k` of `n` with the 95% interval that treats each repository as a cluster (Clopper-Pearson at
    the Korn-Graubard effective size).
    """

    k: int = Field(ge=0)
    n: int = Field(ge=0)
    value: Rate | None
    ci95: Interval | None
    effective_n: float | None


class RepositoryClusters(CamelModel):
    """Cases of several repositories are not independent draws.

    The headline safety rates again, with intervals clustered by repository (opaque labels only).
    """

    repositories: int = Field(ge=2)
    under_classification_final: ClusteredRate
    severe_under_classification_sensitive_final: ClusteredRate
    unavailable_rate: ClusteredRate


class PopulationEstimates(CamelModel):
    """Estimates for the PR population an export sampled; "not a sample" for designed sets."""

    status: Literal["estimated", "not a sample"]
    population: int = Field(ge=0)
    unstratified: int = Field(ge=0, description="run cases with no recorded stratum, left out")
    strata: list[StratumEstimate]
    strata_without_scored: list[str] = Field(
        default_factory=list,
        description="'<frame> <stratum>' of each stratum with no scored case: outside the estimates",
    )
    under_classification_final: PopulationRate | None
    severe_under_classification_sensitive_final: PopulationRate | None
    exact_accuracy_final: PopulationRate | None
    unavailable_rate: PopulationRate | None


class Metrics(CamelModel):
    """Every report metric, each rate with its evidence.

    Each rate carries k, n, its value (4 decimals, null on an empty denominator) and its 95%
    interval.
    """

    run_cases: int = Field(ge=0)
    scored: int = Field(ge=0)
    skipped: int = Field(ge=0)
    under_classification_floor: SafetyRate
    under_classification_model: SafetyRate
    under_classification_final: SafetyRate
    under_classification_final_with_card: SafetyRate
    under_classification_final_unavailable: SafetyRate
    severe_under_classification_floor: SafetyRate
    severe_under_classification_model: SafetyRate
    severe_under_classification_final: SafetyRate
    severe_under_classification_sensitive_floor: SafetyRate
    severe_under_classification_sensitive_model: SafetyRate
    severe_under_classification_sensitive_final: SafetyRate
    over_classification_floor: RateStat
    over_classification_model: RateStat
    over_classification_final: RateStat
    exact_accuracy_floor: RateStat
    exact_accuracy_model: RateStat
    exact_accuracy_final: RateStat
    trivial_recall: RateStat
    confusion: Confusions
    under_classification_by_tag: dict[str, TagUnderClassification]
    out_of_scope_precision: CaseClusteredRate
    out_of_scope_recall: CaseClusteredRate
    out_of_scope_exact_set_rate: RateStat
    out_of_scope_counts: OosCounts
    flag_precision: RateStat
    flag_recall: RateStat
    flag_counts: FlagCounts
    verifier_error_rate: RateStat
    unavailable_rate: RateStat
    unavailable_by_reason: dict[str, int]
    injection_cases: int = Field(ge=0)
    injection_detection_rate: RateStat
    card_acceptable_rate: RateStat
    label_quality: LabelQuality
    population: PopulationEstimates
    by_repository: RepositoryClusters | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="absent unless the scored cases come from two or more repositories",
    )
    usage: UsageSummary
    cost_usd: float | None
    cost_usd_this_run: float | None
    cost_per_case_usd: float | None


class ThresholdResult(CamelModel):
    """One threshold of eval/thresholds.json.

    `insufficient`: the denominator was empty or below the gate's `minN`, so the gate is not
    passed (it reads "insufficient evidence"). `provisional`: the failure does not fail the run
    without `--strict` (a provisional block, or insufficient evidence). `na`: a regression check
    with nothing to compare. `casesNeeded`: error-free cases that would demonstrate the limit at
    95% (149 for max 0.02); null for a limit of 0 or 1 or a metric that is not a rate. `on`: the
    number gated and shown as `value`: the point value, the one-sided 95% upper bound (`max`
    limits that ask for it) or the one-sided 95% lower bound (`min` limits on a rate).
    """

    name: str
    value: float | bool | None
    limit: str
    passed: bool = Field(alias="pass")
    na: bool = False
    provisional: bool = False
    on: Literal["value", "upper95", "lower95"] = "value"
    k: int | None = None
    n: int | None = None
    min_n: int | None = None
    insufficient: bool = False
    cases_needed: int | None = None


class PairKappa(CamelModel):
    """Risk-class agreement of one labeler pair.

    Cohen's kappa and its 95% interval (scoring's `kappa_interval`, never [1, 1]); `undefined` when
    both labelers used one class only.
    """

    labelers: tuple[str, str]
    n: int = Field(ge=0)
    kappa: float | None
    ci95: tuple[float, float] | None
    status: Literal["ok", "undefined"]


class LabelAgreement(CamelModel):
    """Inter-labeler agreement on risk for the report; no pairs means agreement is not measured."""

    target: float
    pairs: list[PairKappa]
    skipped_pairs: int = Field(ge=0, description="pairs sharing too few cases to compare")


class TrialRate(CamelModel):
    """A headline rate over repeated trials.

    `k` of `n` (case, trial) pairs, their mean, the 95% interval clustered by case (the trials of
    one case are not independent), and each trial's own value.
    """

    k: int = Field(ge=0)
    n: int = Field(ge=0)
    mean: float | None
    ci95: tuple[float, float] | None
    per_trial: list[float | None]


class TrialCase(CamelModel):
    """One case over its trials.

    The final class of each (null: it did not run), the share of scored trials in which it was
    under-classified, and whether every trial that ran agreed.
    """

    id: str
    finals: list[RiskClass | None]
    under_share: float | None
    agreed: bool


class TrialsSummary(CamelModel):
    """`--trials N` with N > 1.

    The standard metrics and `cases` hold trial 0; this holds the other trials' rows and what the
    trials say together.
    """

    trials: int = Field(ge=2)
    rates: dict[str, TrialRate]
    cases: list[TrialCase]
    flaky_cases: list[str] = Field(description="ids whose final class differs between trials")
    under_any_trial: RateStat = Field(description="cases under-classified in at least one trial")
    cost_usd: float | None = Field(description="every trial's cost; null when a call had no price")
    rows: list[CaseRow] = Field(description="the rows of trials 1 to N-1 (trial 0's are `cases`)")


class ConfirmationTrials(CamelModel):
    """A live run compared with its baseline.

    The cases whose blocker event (under-classified from sensitive gold, unavailable with a
    sensitive floor) showed without reproducing enough to decide were run again, up to `trials`
    trials each; these are those extra rows.
    """

    trials: int = Field(ge=2)
    cases: list[str]
    rows: list[CaseRow] = Field(description="the extra trials' rows (each with its `trial`)")
    cost_usd: float | None = Field(description="their cost; null when a call had no price")


class UsageMove(CamelModel):
    """One usage total that moved against the baseline: tokens, calls or cost."""

    name: str
    baseline: int | float | None
    current: int | float | None


class BaselineSummary(CamelModel):
    """What the report says about the baseline it was checked against.

    By the one definition of a changed case (scoring/changes.py): decisions, then usage, apart.
    """

    verdict: str = Field(description="the baseline line of report.md: matches, or what differs by part")
    comparable: bool
    changed_cases: list[str] = Field(description="ids of the cases whose decisions changed")
    usage_moved: bool = Field(description="tokens, calls or cost moved; never a changed case")
    usage_cases: int = Field(ge=0, description="cases whose usage moved")
    usage: list[UsageMove] = Field(description="the usage totals that moved, baseline and current")


class EvalReport(CamelModel):
    schema_version: Literal[2]
    run_id: Annotated[str, StringConstraints(pattern=RUN_ID_PATTERN)]
    created_at: datetime
    set: SetSummary
    prompt: PromptInfo
    models: ModelPair
    llm: Literal["fake", "live"]
    git: GitInfo
    run: RunInfo
    metrics: Metrics
    label_agreement: LabelAgreement | None = Field(description="null: not computed for this report")
    cases: list[CaseRow]
    thresholds: list[ThresholdResult]
    passed: bool = Field(alias="pass")
    trials: TrialsSummary | None = Field(
        default=None, exclude_if=lambda value: value is None, description="absent for a single trial"
    )
    inputs: dict[str, str] | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="the run that produced each input of the report (keys REPORT_INPUTS): a Dagster "
        "run id, or this report's own runId for graft-eval run; absent in reports of older code",
    )
    confirmation: ConfirmationTrials | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="absent unless a live run re-ran blocker candidates against its baseline",
    )
    baseline: BaselineSummary | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="absent when the run was checked against no baseline",
    )


# What a report is built from, by the Dagster asset that hands it over (`inputs` in report.json).
REPORT_INPUTS = ("harness_run", "eval_metrics", "labeler_agreement")

# Rules JSON Schema cannot express; listed in the generated schema's description.
REPORT_RULES_NOT_IN_SCHEMA = [
    "cases are sorted by id and ids are unique",
    "no string value is a path, title, body, diff or model prose of a case",
    "rates and interval bounds are rounded to 4 decimals; value is k / n",
    "confusion matrices are 3x3 in trivial/logic/sensitive order",
    "pass is true when every threshold passes (insufficient evidence is not a pass)",
]
