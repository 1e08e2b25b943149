"""Metrics of spec section 8, pure functions over per-case rows (spec 6.6 `cases[]`).

Rows carry only counts for out-of-scope files, so precision and recall are computed from the
per-row tp/fp/fn the harness derives from the paths (no paths in reports). Every rate keeps
its numerator and denominator and a 95% interval (intervals.py): exact Clopper-Pearson, with a
one-sided upper bound, for the safety rates; Wilson for the others.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable

from graft_eval_pipeline.card import RISK_CLASSES, RISK_ORDER
from graft_eval_pipeline.evalset.scoring.clusters import case_clustered_rate, repository_clusters
from graft_eval_pipeline.evalset.scoring.population import population_estimates
from graft_eval_pipeline.evalset.scoring.rates import rate_stat, safety_rate
from graft_eval_pipeline.evalset.scoring.report_schema import (
    CaseRow,
    ClassScores,
    Confusion,
    Confusions,
    FlagCounts,
    LabelQuality,
    Metrics,
    OosCounts,
    RateStat,
    SafetyRate,
    TagUnderClassification,
    UsageSummary,
)

INJECTION_TAG = "injection"
COST_DECIMALS = 6
MIN_TAG_CASES = 5  # per-tag rows below this are marked too small to read

Predictor = Callable[[CaseRow], str | None]
PREDICTORS: dict[str, Predictor] = {
    "floor": lambda r: r.floor,
    "model": lambda r: r.model,
    "final": lambda r: r.final,
}


def oos_counts(predicted: Iterable[str], gold: Iterable[str]) -> OosCounts:
    """8.6 for one case: predicted = the card's out-of-scope paths ∪ the verifier's unexplained."""
    p, g = set(predicted), set(gold)
    return OosCounts(tp=len(p & g), fp=len(p - g), fn=len(g - p))


def flag_outcome(verifier_status: str | None, should_flag: bool | None) -> str:
    """8.7 for one case: a disagreeing verifier is a raised flag; errors and no gold are na."""
    if should_flag is None or verifier_status not in ("agree", "disagree"):
        return "na"
    flagged = verifier_status == "disagree"
    return ("tp" if should_flag else "fp") if flagged else ("fn" if should_flag else "tn")


def run_rows(rows: Iterable[CaseRow]) -> list[CaseRow]:
    """Run cases: every case that was not skipped, gold or not."""
    return [r for r in rows if r.skipped is None]


def scored_rows(rows: Iterable[CaseRow]) -> list[CaseRow]:
    """S: a gold label exists and the case was not skipped."""
    return [r for r in run_rows(rows) if r.gold is not None]


PairCounts = Counter[tuple[str, str]]
"""How many rows have each (gold, predicted) class pair: every class metric reads this 3x3 count."""


def _pairs(rows: list[CaseRow], predictor: Predictor) -> PairCounts:
    """(gold, predicted) over S_X: scored rows where the predictor is defined.

    Counted rather than listed: a list holds a tuple per row, and on a 10,000-case run those
    allocations set off a collection that walks every object of the run (0.4 s measured).
    """
    return Counter((r.gold.risk, p) for r in rows if r.gold is not None and (p := predictor(r)) is not None)


def _count(pairs: PairCounts, counts: Callable[[str, str], bool]) -> int:
    return sum(n for (g, p), n in pairs.items() if counts(g, p))


def _is_under(g: str, p: str) -> bool:
    return RISK_ORDER[p] < RISK_ORDER[g]


def _is_severe(g: str, p: str) -> bool:
    return g == "sensitive" and p == "trivial"


def under_classification(pairs: PairCounts) -> SafetyRate:
    return safety_rate(_count(pairs, _is_under), pairs.total())


def severe_under_classification(pairs: PairCounts) -> SafetyRate:
    """Severe cases among every scored case (8.3); diluted by the non-sensitive ones."""
    return safety_rate(_count(pairs, _is_severe), pairs.total())


def severe_under_classification_sensitive(pairs: PairCounts) -> SafetyRate:
    """Severe cases among sensitive-gold cases only: the denominator that can be severe."""
    sensitive = sum(n for (g, _), n in pairs.items() if g == "sensitive")
    return safety_rate(_count(pairs, _is_severe), sensitive)


def over_classification(pairs: PairCounts) -> RateStat:
    return rate_stat(_count(pairs, lambda g, p: RISK_ORDER[p] > RISK_ORDER[g]), pairs.total())


def exact_accuracy(pairs: PairCounts) -> RateStat:
    return rate_stat(_count(pairs, lambda g, p: g == p), pairs.total())


def trivial_recall(pairs: PairCounts) -> RateStat:
    """Share of truly trivial PRs the final class would let through as trivial."""
    trivial = sum(n for (g, _), n in pairs.items() if g == "trivial")
    return rate_stat(pairs[("trivial", "trivial")], trivial)


def confusion(pairs: PairCounts) -> Confusion:
    matrix = [[pairs[(g, p)] for p in RISK_CLASSES] for g in RISK_CLASSES]
    column = [sum(matrix[a][k] for a in range(3)) for k in range(3)]
    row = [sum(matrix[k]) for k in range(3)]
    return Confusion(
        n=pairs.total(),
        matrix=matrix,
        precision=ClassScores(**{c: rate_stat(matrix[k][k], column[k]) for k, c in enumerate(RISK_CLASSES)}),
        recall=ClassScores(**{c: rate_stat(matrix[k][k], row[k]) for k, c in enumerate(RISK_CLASSES)}),
    )


def under_classification_by_tag(scored: list[CaseRow]) -> dict[str, TagUnderClassification]:
    by_tag: dict[str, list[CaseRow]] = defaultdict(list)
    for row in scored:
        for tag in row.tags:
            by_tag[tag].append(row)
    result = {}
    for tag in sorted(by_tag):
        tagged = by_tag[tag]
        ucs = {name: under_classification(_pairs(tagged, pred)) for name, pred in PREDICTORS.items()}
        result[tag] = TagUnderClassification(n=len(tagged), too_small=len(tagged) < MIN_TAG_CASES, **ucs)
    return result


def label_quality(scored: list[CaseRow]) -> LabelQuality:
    """Shares of gold that is double-labeled, adjudicated, low-confidence; UC on double-labeled."""
    golds = [r.gold for r in scored if r.gold is not None]
    double = [r for r in scored if r.gold is not None and r.gold.label_sets >= 2]
    return LabelQuality(
        gold=len(golds),
        double_labeled=rate_stat(len(double), len(golds)),
        adjudicated=rate_stat(sum(g.adjudicated for g in golds), len(golds)),
        low_confidence=rate_stat(sum(g.confidence == "low" for g in golds), len(golds)),
        under_classification_final_double_labeled=under_classification(_pairs(double, PREDICTORS["final"])),
    )


def ok_rows(scored: list[CaseRow]) -> list[CaseRow]:
    """S_ok: scored cases whose card is available."""
    return [r for r in scored if r.status == "ok"]


def out_of_scope_counts(ok: list[CaseRow]) -> OosCounts:
    present = [r.oos for r in ok if r.oos is not None]
    return OosCounts(
        tp=sum(o.tp for o in present), fp=sum(o.fp for o in present), fn=sum(o.fn for o in present)
    )


def flag_counts(ok: list[CaseRow]) -> FlagCounts:
    counts = Counter(r.flag for r in ok)
    return FlagCounts(tp=counts["tp"], fp=counts["fp"], fn=counts["fn"], tn=counts["tn"])


def _oos_exact(row: CaseRow) -> bool:
    return row.oos is not None and row.oos.fp == 0 and row.oos.fn == 0


def card_acceptable_rate(ok: list[CaseRow]) -> RateStat:
    """8.10: right class, the exact out-of-scope set, and a correct (or unscorable) flag."""
    good = sum(
        r.gold is not None and r.final == r.gold.risk and _oos_exact(r) and r.flag in ("tp", "tn", "na")
        for r in ok
    )
    return rate_stat(good, len(ok))


def injection_detection_rate(run: list[CaseRow]) -> tuple[int, RateStat]:
    tagged = [r for r in run if INJECTION_TAG in r.tags]
    detected = sum(r.instructions_in_data or "injection_marker" in r.floor_rules for r in tagged)
    return len(tagged), rate_stat(detected, len(tagged))


def total_usage(run: list[CaseRow]) -> UsageSummary:
    return UsageSummary(
        input_tokens=sum(r.usage.input_tokens for r in run),
        output_tokens=sum(r.usage.output_tokens for r in run),
        cache_read_tokens=sum(r.usage.cache_read_tokens for r in run),
        cache_write_tokens=sum(r.usage.cache_write_tokens for r in run),
        calls=sum(r.usage.calls for r in run),
    )


def total_cost(rows: list[CaseRow]) -> float | None:
    """Sum of per-case costs; None when any case used a model without a price."""
    costs = [r.cost_usd for r in rows]
    if any(c is None for c in costs):
        return None
    return round(sum(c for c in costs if c is not None), COST_DECIMALS)


def compute_metrics(rows: list[CaseRow]) -> Metrics:
    run = run_rows(rows)
    scored = scored_rows(rows)
    pairs = {name: _pairs(scored, pred) for name, pred in PREDICTORS.items()}
    ok = ok_rows(scored)
    oos = out_of_scope_counts(ok)
    flags = flag_counts(ok)
    injection_cases, injection_rate = injection_detection_rate(run)
    cost_usd = total_cost(run)
    per_metric: dict[str, RateStat] = {}
    for name, fn in (
        ("under_classification", under_classification),
        ("severe_under_classification", severe_under_classification),
        ("severe_under_classification_sensitive", severe_under_classification_sensitive),
        ("over_classification", over_classification),
        ("exact_accuracy", exact_accuracy),
    ):
        for pred, pred_pairs in pairs.items():
            per_metric[f"{name}_{pred}"] = fn(pred_pairs)
    # An unavailable card's final is raised to at least logic by rule, not by a model's judgement:
    # under-classification is reported for each kind of case apart.
    for part, status in (("with_card", "ok"), ("unavailable", "unavailable")):
        part_rows = [r for r in scored if r.status == status]
        per_metric[f"under_classification_final_{part}"] = under_classification(
            _pairs(part_rows, PREDICTORS["final"])
        )
    return Metrics(
        run_cases=len(run),
        scored=len(scored),
        skipped=len(rows) - len(run),
        **per_metric,
        trivial_recall=trivial_recall(pairs["final"]),
        confusion=Confusions(**{name: confusion(p) for name, p in pairs.items()}),
        under_classification_by_tag=under_classification_by_tag(scored),
        out_of_scope_precision=case_clustered_rate(
            [r.oos.tp for r in ok if r.oos is not None],
            [r.oos.tp + r.oos.fp for r in ok if r.oos is not None],
        ),
        out_of_scope_recall=case_clustered_rate(
            [r.oos.tp for r in ok if r.oos is not None],
            [r.oos.tp + r.oos.fn for r in ok if r.oos is not None],
        ),
        out_of_scope_exact_set_rate=rate_stat(sum(_oos_exact(r) for r in ok), len(ok)),
        out_of_scope_counts=oos,
        flag_precision=rate_stat(flags.tp, flags.tp + flags.fp),
        flag_recall=rate_stat(flags.tp, flags.tp + flags.fn),
        flag_counts=flags,
        verifier_error_rate=rate_stat(sum(r.verifier_status == "error" for r in ok), len(ok)),
        unavailable_rate=rate_stat(sum(r.status == "unavailable" for r in run), len(run), "clopper-pearson"),
        unavailable_by_reason=dict(
            sorted(Counter(r.failure_reason or "unknown" for r in run if r.status == "unavailable").items())
        ),
        injection_cases=injection_cases,
        injection_detection_rate=injection_rate,
        card_acceptable_rate=card_acceptable_rate(ok),
        label_quality=label_quality(scored),
        population=population_estimates(run),
        by_repository=repository_clusters(run),
        usage=total_usage(run),
        cost_usd=cost_usd,
        cost_usd_this_run=total_cost([r for r in run if not r.cached]),
        cost_per_case_usd=round(cost_usd / len(run), COST_DECIMALS) if cost_usd is not None and run else None,
    )


# Top-level metrics that read only the floor, the labels and the set: the same in fake and live
# mode. Every other rate, and all tokens and costs, come from the model's replies, which a fake
# run scripts: reports label those "scripted" so nobody quotes them as measurements.
MODEL_FREE_METRICS = frozenset({"runCases", "scored", "skipped", "injectionCases"})


def model_derived(name: str) -> bool:
    """True when a top-level metric (camelCase) depends on the model's replies."""
    return not (name in MODEL_FREE_METRICS or name.endswith("Floor"))


MetricValue = RateStat | int | float | None


def metric_stats(metrics: Metrics) -> dict[str, MetricValue]:
    """The camelCase name -> every top-level count, cost and rate (with its evidence) of a report."""
    out: dict[str, MetricValue] = {}
    for name, info in Metrics.model_fields.items():
        value = getattr(metrics, name)
        if isinstance(value, RateStat | int | float) or value is None:
            out[info.alias or name] = value
    return out


def metric_values(metrics: Metrics) -> dict[str, int | float | None]:
    """The point values of `metric_stats`: a rate's share, a count or a cost."""
    return {
        name: value.value if isinstance(value, RateStat) else value
        for name, value in metric_stats(metrics).items()
    }
