"""eval/thresholds.json (spec 6.5): parse it, check a report against it, and name the verdicts.

A `max` limit gates on a rate's point value, or with `"on": "upper95"` on its one-sided 95%
upper bound (what the data demonstrate); a `min` limit on a rate gates on its one-sided 95% lower
bound (`"on": "value"` for the point value). A gate whose denominator is empty or below its
`minN` reads "insufficient evidence" (never a pass, and a failure under `--strict` and in
Dagster), unless the cases already seen breach the limit whatever the cases still missing
would show: then it is FAIL (1 severe miss in 7 fails `max 0`). `nonInferiority` gives a margin
per safety rate for the paired comparison with the baseline (compare.NonInferiority).
"""

from __future__ import annotations

import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from graft_eval_pipeline.evalset.compare import SAFETY_RATES, Comparison
from graft_eval_pipeline.evalset.report.baseline import BaselineDiff
from graft_eval_pipeline.evalset.scoring import (
    EvalReport,
    Metrics,
    RateStat,
    SafetyRate,
    ThresholdResult,
    error_free_cases_needed,
    lower_bound,
    metric_stats,
    metric_values,
    round_down,
    round_up,
    upper_bound,
)
from graft_eval_pipeline.evalset.sets import EvalError, eval_dir_hint, load_json, read_limited

Direction = Literal["lower", "higher"]
GateOn = Literal["value", "upper95", "lower95"]

# Which way is better for each top-level scalar of `Metrics` (camelCase, as thresholds.json names
# them). None: no better direction (the size of the set), so no regressionVsBaseline on it.
# A test fails when `Metrics` gains a scalar this table does not list.
METRIC_DIRECTIONS: dict[str, Direction | None] = {
    "runCases": None,
    "scored": None,
    "skipped": "lower",
    "underClassificationFloor": "lower",
    "underClassificationModel": "lower",
    "underClassificationFinal": "lower",
    "underClassificationFinalWithCard": "lower",
    "underClassificationFinalUnavailable": "lower",
    "severeUnderClassificationFloor": "lower",
    "severeUnderClassificationModel": "lower",
    "severeUnderClassificationFinal": "lower",
    "severeUnderClassificationSensitiveFloor": "lower",
    "severeUnderClassificationSensitiveModel": "lower",
    "severeUnderClassificationSensitiveFinal": "lower",
    "overClassificationFloor": "lower",
    "overClassificationModel": "lower",
    "overClassificationFinal": "lower",
    "exactAccuracyFloor": "higher",
    "exactAccuracyModel": "higher",
    "exactAccuracyFinal": "higher",
    "trivialRecall": "higher",
    "outOfScopePrecision": "higher",
    "outOfScopeRecall": "higher",
    "outOfScopeExactSetRate": "higher",
    "flagPrecision": "higher",
    "flagRecall": "higher",
    "verifierErrorRate": "lower",
    "unavailableRate": "lower",
    "injectionCases": None,
    "injectionDetectionRate": "higher",
    "cardAcceptableRate": "higher",
    "costUsd": "lower",
    "costUsdThisRun": "lower",
    "costPerCaseUsd": "lower",
}


def _is_scalar(annotation: Any) -> bool:
    """int, float or bool, possibly Optional and Annotated, or a rate with its evidence.

    Not another model, a list or a dict.
    """
    origin = get_origin(annotation)
    if origin is Annotated:
        return _is_scalar(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return all(_is_scalar(a) for a in get_args(annotation) if a is not type(None))
    return annotation in (int, float, bool) or (
        isinstance(annotation, type) and issubclass(annotation, RateStat)
    )


def scalar_metric_names() -> set[str]:
    """The camelCase names of the top-level scalar metrics, the ones a threshold may name."""
    return {f.alias or name for name, f in Metrics.model_fields.items() if _is_scalar(f.annotation)}


def _field_type(name: str) -> Any:
    """The annotation of a top-level metric by its camelCase name."""
    return next(f.annotation for n, f in Metrics.model_fields.items() if (f.alias or n) == name)


def _is_rate(name: str) -> bool:
    annotation = _field_type(name)
    return isinstance(annotation, type) and issubclass(annotation, RateStat)


def _has_upper_bound(name: str) -> bool:
    annotation = _field_type(name)
    return isinstance(annotation, type) and issubclass(annotation, SafetyRate)


@dataclass(frozen=True)
class Limit:
    kind: str  # "max" or "min"
    value: float
    on: GateOn = "value"  # parse_limit: "lower95" for a min limit on a rate unless told
    min_n: int | None = None  # fewer cases in the denominator: insufficient evidence


@dataclass(frozen=True)
class ThresholdBlock:
    """One set kind's block of eval/thresholds.json."""

    limits: dict[str, Limit]
    match_baseline: bool = False  # decisions equal to the baseline (live: no regression, no blocker)
    regression: dict[str, float] = field(default_factory=dict)
    provisional: bool = False
    match_usage: bool = False  # tokens, calls and cost equal to the baseline too
    margins: dict[str, float] = field(default_factory=dict)  # nonInferiority: rate -> margin


def _parse_regression(kind: str, spec: dict[str, Any], known: set[str]) -> dict[str, float]:
    regression: dict[str, float] = {}
    for metric, allowed in spec.items():
        if metric not in known or not isinstance(allowed, int | float) or isinstance(allowed, bool):
            raise EvalError(f"thresholds.{kind}.regressionVsBaseline: bad entry {metric!r}")
        if METRIC_DIRECTIONS.get(metric) is None:
            raise EvalError(
                f"thresholds.{kind}.regressionVsBaseline: {metric!r} has no better direction "
                "(neither higher nor lower is worse); use a max or min limit instead"
            )
        regression[metric] = float(allowed)
    return regression


def _parse_margins(kind: str, spec: dict[str, Any]) -> dict[str, float]:
    """`nonInferiority`: {safety rate: margin}, each margin a share above 0 and below 1."""
    margins: dict[str, float] = {}
    for name, margin in spec.items():
        where = f"thresholds.{kind}.nonInferiority.{name}"
        if name not in SAFETY_RATES:
            raise EvalError(f"{where}: no margin for this rate; use one of {', '.join(SAFETY_RATES)}")
        if not isinstance(margin, int | float) or isinstance(margin, bool) or not 0 < margin < 1:
            raise EvalError(f"{where}: the margin must be a share above 0 and below 1 (0.02 for 2 points)")
        margins[name] = float(margin)
    return margins


def margins_for(report: EvalReport, thresholds: dict[str, ThresholdBlock]) -> dict[str, float]:
    """The non-inferiority margins of the report's set kind (none without a block)."""
    block = thresholds.get(report.set.kind)
    return dict(block.margins) if block is not None else {}


LIMIT_HELP = (
    "use {'max': n} (optionally 'on': 'upper95') or {'min': n} (optionally 'on': 'value'), "
    "and optionally 'minN': <cases>"
)


def _parse_limit(kind: str, name: str, spec: Any) -> Limit:
    """{"max"|"min": n} with optional "on" ("value", "upper95") and "minN" (cases)."""
    where = f"thresholds.{kind}.{name}"
    if not isinstance(spec, dict):
        raise EvalError(f"{where}: bad entry; {LIMIT_HELP}")
    bounds = [k for k in spec if k in ("max", "min")]
    unknown = sorted(set(spec) - {"max", "min", "on", "minN"})
    if unknown or len(bounds) != 1:
        raise EvalError(f"{where}: bad entry; {LIMIT_HELP}")
    limit_kind = bounds[0]
    value = spec[limit_kind]
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise EvalError(f"{where}: {limit_kind} must be a number")
    on = spec.get("on", "lower95" if limit_kind == "min" and _is_rate(name) else "value")
    if on not in ("value", "upper95", "lower95"):
        raise EvalError(f"{where}: 'on' must be 'value', 'upper95' or 'lower95'")
    if on == "upper95" and (limit_kind != "max" or not _has_upper_bound(name)):
        raise EvalError(
            f"{where}: 'on': 'upper95' needs a 'max' limit on an under-classification rate "
            "(the metrics with a one-sided upper bound)"
        )
    if on == "lower95" and (limit_kind != "min" or not _is_rate(name)):
        raise EvalError(f"{where}: 'on': 'lower95' needs a 'min' limit on a rate (k of n)")
    min_n = spec.get("minN")
    if min_n is not None and (not isinstance(min_n, int) or isinstance(min_n, bool) or min_n < 0):
        raise EvalError(f"{where}: minN must be a whole number of cases (0 or more)")
    if min_n is not None and not _is_rate(name):
        raise EvalError(f"{where}: minN applies to rates only ({name} has no denominator)")
    return Limit(limit_kind, float(value), on, min_n)


def parse_thresholds(data: dict[str, Any]) -> dict[str, ThresholdBlock]:
    """Parse thresholds.json; an unknown metric or a bad limit is a configuration error."""
    known = scalar_metric_names()
    blocks = {}
    for kind, body in data.items():
        if kind not in ("synthetic", "pilot") or not isinstance(body, dict):
            raise EvalError(f"thresholds: unknown set kind {kind!r}; use 'synthetic' or 'pilot'")
        limits: dict[str, Limit] = {}
        regression: dict[str, float] = {}
        margins: dict[str, float] = {}
        match_baseline = provisional = match_usage = False
        for name, spec in body.items():
            if name == "matchBaseline" and isinstance(spec, bool):
                match_baseline = spec
            elif name == "matchBaselineUsage" and isinstance(spec, bool):
                match_usage = spec
            elif name == "provisional" and isinstance(spec, bool):
                provisional = spec
            elif name == "regressionVsBaseline" and isinstance(spec, dict):
                regression = _parse_regression(kind, spec, known)
            elif name == "nonInferiority" and isinstance(spec, dict):
                margins = _parse_margins(kind, spec)
            elif name in known:
                limits[name] = _parse_limit(kind, name, spec)
            else:
                raise EvalError(f"thresholds.{kind}: bad entry {name!r}; {LIMIT_HELP}")
        blocks[kind] = ThresholdBlock(limits, match_baseline, regression, provisional, match_usage, margins)
    return blocks


def load_thresholds(path: Path) -> dict[str, ThresholdBlock]:
    try:
        data = load_json(read_limited(Path(path), str(path)), str(path))
    except OSError as exc:
        raise EvalError(f"cannot read thresholds {path}: {exc.strerror}{eval_dir_hint()}") from None
    if not isinstance(data, dict):
        raise EvalError(f"{path}: expected an object keyed by set kind")
    return parse_thresholds(data)


def _fmt(number: float) -> str:
    return f"{number:g}"


def worsening(name: str, baseline: float, current: float) -> float:
    """How much worse `current` is than `baseline` (negative when better), in the metric's units."""
    direction = METRIC_DIRECTIONS.get(name)
    if direction is None:  # parse_thresholds refuses these; a hand-built block must not guess
        raise EvalError(f"metric {name!r} has no better direction: no regression check on it")
    return round(current - baseline if direction == "lower" else baseline - current, 4)


def limit_text(limit: Limit) -> str:
    """`max 0.02 on upper95, n >= 100`, `min 0.75 on lower95`: the gate as the report shows it."""
    text = f"{limit.kind} {_fmt(limit.value)}"
    if limit.on != "value":
        text += f" on {limit.on}"
    if limit.min_n is not None:
        text += f", n >= {limit.min_n}"
    return text


def _exact(stat: RateStat, on: GateOn) -> float | None:
    """The unrounded number a gate compares: k / n, or the exact one-sided upper or lower bound."""
    if stat.n == 0:
        return None
    if on == "upper95":
        return upper_bound(stat.k, stat.n)
    return lower_bound(stat.k, stat.n) if on == "lower95" else stat.k / stat.n


def _shown(stat: RateStat, on: GateOn) -> float | None:
    """The report's number for the gated one: the bounds rounded outwards, like the intervals."""
    exact = _exact(stat, on)
    if exact is None or on == "value":
        return stat.value
    return round_up(exact) if on == "upper95" else round_down(exact)


def breached(limit: Limit, k: int, n: int) -> bool:
    """The cases seen already break the limit whatever the missing ones (up to `minN`) show.

    A `max` limit by more hits than `value` x max(n, minN) allows (any hit for `max 0`), a `min`
    limit by more misses than (1 - `value`) x max(n, minN) allows.
    """
    cases = max(n, limit.min_n or 0)
    if limit.kind == "max":
        return k > limit.value * cases
    return n - k > (1 - limit.value) * cases


def check_limit(
    name: str,
    limit: Limit,
    stat: RateStat | int | float | None,
    provisional: bool,
    strict: bool,
) -> ThresholdResult:
    """One max/min gate.

    An empty denominator, or fewer cases than `minN`, is insufficient evidence (not passed, and
    fatal only under `--strict`; in Dagster always) unless the cases seen already breach the limit
    (`breached`): that is a plain FAIL.

    A rate is compared exactly (k / n or the exact bound); the result shows the report's
    rounded number (bounds rounded outwards).
    """
    k = n = needed = None
    shown: float | None
    exact: float | None
    if isinstance(stat, RateStat):
        k, n = stat.k, stat.n
        shown = _shown(stat, limit.on)
        exact = _exact(stat, limit.on)
        needed = error_free_cases_needed(limit.value if limit.kind == "max" else 1 - limit.value)
    else:
        shown = exact = stat
    few = exact is None or (limit.min_n is not None and n is not None and n < limit.min_n)
    insufficient = few and not (k is not None and n is not None and n > 0 and breached(limit, k, n))
    passed = (
        exact is not None
        and not few
        and (exact <= limit.value if limit.kind == "max" else exact >= limit.value)
    )
    return ThresholdResult(
        name=name,
        value=shown,
        limit=limit_text(limit),
        passed=passed,
        provisional=(not strict) if insufficient else provisional,
        on=limit.on,
        k=k,
        n=n,
        min_n=limit.min_n,
        insufficient=insufficient,
        cases_needed=needed,
    )


def check_thresholds(
    report: EvalReport,
    thresholds: dict[str, ThresholdBlock],
    diff: BaselineDiff | None,
    strict: bool,
    comparison: Comparison | None = None,
) -> list[ThresholdResult]:
    """6.5: limits, regression against the baseline and the baseline match for the set's kind.

    In a provisional block failures are marked provisional (not fatal) unless `strict`; so is
    insufficient evidence, in any block. The baseline match asks for equal decisions; a live run
    (whose answers vary from run to run) asks instead that the paired `comparison` with the
    baseline finds no regression and no blocker.
    """
    block = thresholds.get(report.set.kind)
    if block is None:
        return []
    provisional = block.provisional and not strict
    stats = metric_stats(report.metrics)
    values = metric_values(report.metrics)
    results = [
        check_limit(name, limit, stats[name], provisional, strict) for name, limit in block.limits.items()
    ]
    for name, allowed in block.regression.items():
        limit_text_ = f"worsening <= {_fmt(allowed)} vs baseline"
        base = diff.baseline_metrics.get(name) if diff is not None and diff.comparable else None
        cur = values[name]
        if base is None or cur is None:
            results.append(
                ThresholdResult(
                    name=f"regressionVsBaseline.{name}",
                    value=None,
                    limit=limit_text_,
                    passed=True,
                    na=True,
                    provisional=provisional,
                )
            )
            continue
        worse = worsening(name, base, cur)
        results.append(
            ThresholdResult(
                name=f"regressionVsBaseline.{name}",
                value=worse,
                limit=limit_text_,
                passed=worse <= allowed,
                provisional=provisional,
            )
        )
    if block.match_baseline:
        if report.llm == "live" and comparison is not None:
            matched, limit_text = (
                not comparison.failed,
                "no regression or blocker vs baseline"
                + (", no rate worse than its margin" if comparison.non_inferiority else ""),
            )
        else:
            matched, limit_text = diff is not None and diff.decisions_equal, "decisions equal to baseline"
        results.append(
            ThresholdResult(
                name="matchBaseline", value=matched, limit=limit_text, passed=matched, provisional=provisional
            )
        )
    if block.match_usage:
        matched = diff is not None and diff.usage_equal
        results.append(
            ThresholdResult(
                name="matchBaselineUsage",
                value=matched,
                limit="usage equal to baseline",
                passed=matched,
                provisional=provisional,
            )
        )
    return results


def with_thresholds(report: EvalReport, results: list[ThresholdResult]) -> EvalReport:
    return report.model_copy(update={"thresholds": results, "passed": all(t.passed for t in results)})


def check_failed(results: Iterable[ThresholdResult]) -> bool:
    """True when a non-provisional threshold failed: the run exits 1 under --check."""
    return any(not r.passed and not r.provisional for r in results)


def dagster_check_passed(results: Iterable[ThresholdResult]) -> bool:
    """Dagster's `thresholds` check: provisional failures pass, insufficient evidence never does."""
    return all(r.passed or (r.provisional and not r.insufficient) for r in results)


def threshold_verdict(result: ThresholdResult) -> str:
    if result.na:
        return "n/a"
    if result.insufficient:
        return "INSUFFICIENT EVIDENCE"
    if result.passed:
        return "PASS"
    return "FAIL (provisional)" if result.provisional else "FAIL"
