"""eval/thresholds.json (spec 6.5): parse it, check a report against it, and name the verdicts."""

from __future__ import annotations

import json
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from graft_eval_pipeline.evalset.report.baseline import BaselineDiff
from graft_eval_pipeline.evalset.report.compare import Comparison
from graft_eval_pipeline.evalset.scoring import EvalReport, Metrics, ThresholdResult
from graft_eval_pipeline.evalset.sets import EvalError

Direction = Literal["lower", "higher"]

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
    "severeUnderClassificationFloor": "lower",
    "severeUnderClassificationModel": "lower",
    "severeUnderClassificationFinal": "lower",
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
    """int, float or bool, possibly Optional and Annotated (a Rate); not a model, list or dict."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _is_scalar(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return all(_is_scalar(a) for a in get_args(annotation) if a is not type(None))
    return annotation in (int, float, bool)


def scalar_metric_names() -> set[str]:
    """camelCase names of the top-level scalar metrics, the ones a threshold may name."""
    return {f.alias or name for name, f in Metrics.model_fields.items() if _is_scalar(f.annotation)}


@dataclass(frozen=True)
class Limit:
    kind: str  # "max" or "min"
    value: float


@dataclass(frozen=True)
class ThresholdBlock:
    """One set kind's block of eval/thresholds.json."""

    limits: dict[str, Limit]
    match_baseline: bool = False  # decisions equal to the baseline (live: no regression, no blocker)
    regression: dict[str, float] = field(default_factory=dict)
    provisional: bool = False
    match_usage: bool = False  # tokens, calls and cost equal to the baseline too


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


def parse_thresholds(data: dict[str, Any]) -> dict[str, ThresholdBlock]:
    """Parse thresholds.json; an unknown metric or a bad limit is a configuration error."""
    known = scalar_metric_names()
    blocks = {}
    for kind, body in data.items():
        if kind not in ("synthetic", "pilot") or not isinstance(body, dict):
            raise EvalError(f"thresholds: unknown set kind {kind!r}; use 'synthetic' or 'pilot'")
        limits: dict[str, Limit] = {}
        regression: dict[str, float] = {}
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
            elif (
                name in known
                and isinstance(spec, dict)
                and len(spec) == 1
                and next(iter(spec)) in ("max", "min")
                and isinstance(next(iter(spec.values())), int | float)
            ):
                (limit_kind, value), *_ = spec.items()
                limits[name] = Limit(limit_kind, float(value))
            else:
                raise EvalError(f"thresholds.{kind}: bad entry {name!r}; use {{'max': n}} or {{'min': n}}")
        blocks[kind] = ThresholdBlock(limits, match_baseline, regression, provisional, match_usage)
    return blocks


def load_thresholds(path: Path) -> dict[str, ThresholdBlock]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise EvalError(f"cannot read thresholds {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise EvalError(f"{path} is not valid JSON (line {exc.lineno})") from None
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


def check_thresholds(
    report: EvalReport,
    thresholds: dict[str, ThresholdBlock],
    diff: BaselineDiff | None,
    strict: bool,
    comparison: Comparison | None = None,
) -> list[ThresholdResult]:
    """6.5: limits, regression against the baseline and the baseline match for the set's kind.

    A null metric passes as n/a. In a provisional block failures are marked provisional (not
    fatal) unless `strict`. The baseline match asks for equal decisions; a live run (whose
    answers vary from run to run) asks instead that the paired `comparison` with the baseline
    finds no regression and no blocker.
    """
    block = thresholds.get(report.set.kind)
    if block is None:
        return []
    provisional = block.provisional and not strict
    metrics = report.metrics.to_json_dict()
    results = []
    for name, limit in block.limits.items():
        value = metrics[name]
        if value is None:
            results.append(
                ThresholdResult(
                    name=name,
                    value=None,
                    limit=f"{limit.kind} {_fmt(limit.value)}",
                    passed=True,
                    na=True,
                    provisional=provisional,
                )
            )
            continue
        ok = value <= limit.value if limit.kind == "max" else value >= limit.value
        results.append(
            ThresholdResult(
                name=name,
                value=value,
                limit=f"{limit.kind} {_fmt(limit.value)}",
                passed=ok,
                provisional=provisional,
            )
        )
    for name, allowed in block.regression.items():
        limit_text = f"worsening <= {_fmt(allowed)} vs baseline"
        base = diff.baseline_metrics.get(name) if diff is not None and diff.comparable else None
        cur = metrics[name]
        if base is None or cur is None:
            results.append(
                ThresholdResult(
                    name=f"regressionVsBaseline.{name}",
                    value=None,
                    limit=limit_text,
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
                limit=limit_text,
                passed=worse <= allowed,
                provisional=provisional,
            )
        )
    if block.match_baseline:
        if report.llm == "live" and comparison is not None:
            matched, limit_text = not comparison.failed, "no regression or blocker vs baseline"
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


def threshold_verdict(result: ThresholdResult) -> str:
    if result.na:
        return "n/a"
    if result.passed:
        return "PASS"
    return "FAIL (provisional)" if result.provisional else "FAIL"
