"""Coverage of the report's clustered and agreement intervals, seeded.

Every cell against the 93-97% target of issue 22, each miss named with its figure.

Run: .venv/bin/python bench/bench_intervals.py [--sets 1000] [--seed 1] [--part trials,kappa,oos]

trials: a rate over `--trials N`, clustered by case (`trials.cluster_interval`, Clopper-Pearson at
  the Korn-Graubard effective size). Each data set: `cases` x `trials`; each case draws a latent
  share from a beta with mean `rate` and intraclass correlation `icc` (icc 1: the case is either
  always or never wrong), and its trials from that share. Exact intervals run above 95% at rare
  rates and few cases (they never undercover by construction at icc 1).
kappa: Cohen's kappa (`kappa_interval`) and linear-weighted kappa (`weighted_kappa_interval`) on
  `n` shared items. Two raters' classes come from p_ij = (1 - k) m_i m_j + k m_i [i = j] with
  margins m (3 risk classes: even, skewed; binary should-flag: prevalence 0.5, 0.2), and in the
  "biased" margins rater B moves 10% (binary: 5%) of its calls one class up; the true kappa is
  that of the cell probabilities (below k when biased). Coverage is over the tables whose kappa is
  defined; `undefined` is the share of tables where both raters used one and the same class (no
  kappa, no interval: stated as "undefined"). The large-sample interval the report used before
  (Fleiss-Cohen-Everitt, statsmodels' `cohens_kappa`) is printed beside it.
oos: out-of-scope precision (the same for recall: a ratio of files over cases) and the per-file
  out-of-scope kappa, clustered by case. Each case has 1-8 files; precision: each case's share of
  right out-of-scope calls drawn from a beta with mean `rate` and intraclass correlation `icc`;
  kappa: each case's out-of-scope prevalence drawn from Beta(1, 3) (files of a case alike), two
  labelers' per-file decisions at agreement k within the case; the true kappa is that of the
  pooled cell probabilities. Beside it, the interval that treats files as independent (Wilson, and
  the unclustered kappa interval), which is what the report used before.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence

import numpy as np

from graft_eval_pipeline.card.models import RISK_CLASSES
from graft_eval_pipeline.evalset.scoring.intervals import wilson
from graft_eval_pipeline.evalset.scoring.kappa import kappa_interval, weighted_kappa_interval
from graft_eval_pipeline.evalset.scoring.trials import cluster_interval

LOW, HIGH = 0.93, 0.97
TRIAL_GRID = [
    (cases, trials, rate, icc)
    for cases in (30, 100, 300)
    for trials in (3,)
    for rate in (0.02, 0.05, 0.2)
    for icc in (0.0, 0.5, 1.0)
]
KAPPA_SIZES = (5, 10, 20, 50, 200)
KAPPAS = (0.2, 0.4, 0.6, 0.8, 0.95)
MARGINS: dict[str, tuple[tuple[float, ...], float]] = {
    "risk even": ((0.5, 0.3, 0.2), 0.0),
    "risk skewed": ((0.7, 0.2, 0.1), 0.0),
    "risk biased": ((0.5, 0.3, 0.2), 0.1),
    "flag 0.5": ((0.5, 0.5), 0.0),
    "flag 0.2": ((0.8, 0.2), 0.0),
    "flag biased": ((0.8, 0.2), 0.05),
}
OOS_CASES = (10, 30, 100)
OOS_RATES = (0.5, 0.8, 0.95)
OOS_ICCS = (0.0, 0.3, 0.7)
OOS_KAPPAS = (0.4, 0.8)
LINEAR = np.abs(np.subtract.outer(np.arange(3), np.arange(3))) / 2

Interval = Callable[[list[int], list[int]], tuple[float, float] | None]


def verdict(value: float) -> str:
    return "" if LOW <= value <= HIGH else ("  MISS above" if value > HIGH else "  MISS below")


def shares(rng: np.random.Generator, size: int, rate: float, icc: float) -> np.ndarray:
    if icc >= 1.0:
        return rng.binomial(1, rate, size=size).astype(float)
    if icc <= 0.0:
        return np.full(size, rate)
    total = (1 - icc) / icc
    return rng.beta(rate * total, (1 - rate) * total, size=size)


def trial_coverage(
    rng: np.random.Generator, cases: int, trials: int, rate: float, icc: float, sets: int
) -> float:
    covered = 0
    for _ in range(sets):
        counts = rng.binomial(trials, shares(rng, cases, rate, icc))
        bounds = cluster_interval(list(counts), [trials] * cases)
        covered += bounds is not None and bounds[0] <= rate <= bounds[1]
    return covered / sets


def joint(margins: Sequence[float], kappa: float, bias: float) -> np.ndarray:
    m = np.asarray(margins, float)
    p = (1 - kappa) * np.outer(m, m) + kappa * np.diag(m)
    if bias:
        moved = np.zeros_like(p)
        for j in range(len(m)):
            up = min(j + 1, len(m) - 1)
            moved[:, j] += p[:, j] * (1 - bias)
            moved[:, up] += p[:, j] * bias
        p = moved
    return p


def true_kappa(p: np.ndarray, weights: np.ndarray | None) -> float:
    w = 1 - np.eye(len(p)) if weights is None else weights
    expected = np.outer(p.sum(1), p.sum(0))
    return float(1 - (p * w).sum() / (expected * w).sum())


def labels(table: Sequence[int], k: int) -> tuple[list[int], list[int]]:
    a: list[int] = []
    b: list[int] = []
    for cell, count in enumerate(table):
        a += [cell // k] * count
        b += [cell % k] * count
    return a, b


def fce(a: list[int], b: list[int], k: int) -> tuple[float, float] | None:
    """The large-sample kappa interval the report used before (Fleiss, Cohen and Everitt 1969), in numpy.

    The large-sample interval the report used before (Fleiss, Cohen and Everitt 1969, the variance
    statsmodels' `cohens_kappa` computes), in numpy: statsmodels takes 17 ms a table.
    """
    table = np.zeros((k, k))
    np.add.at(table, (a, b), 1)
    n = table.sum()
    p = table / n
    row, col = p.sum(1), p.sum(0)
    p_e = float(row @ col)
    if p_e >= 1:
        return None
    kappa = (np.trace(p) - p_e) / (1 - p_e)
    diagonal = float((np.diag(p) * (1 - (row + col) * (1 - kappa)) ** 2).sum())
    spread = np.add.outer(col, row) ** 2
    off = float((p * spread).sum() - (np.diag(p) * np.diag(spread)).sum())
    variance = (diagonal + (1 - kappa) ** 2 * off - (kappa - p_e * (1 - kappa)) ** 2) / ((1 - p_e) ** 2 * n)
    half = 1.959963984540054 * math.sqrt(max(variance, 0.0))
    return max(-1.0, kappa - half), min(1.0, kappa + half)


def kappa_cell(
    rng: np.random.Generator, n: int, p: np.ndarray, truth: float, intervals: dict[str, Interval], sets: int
) -> tuple[float, dict[str, float]]:
    k = len(p)
    tables = rng.multinomial(n, p.ravel(), size=sets)
    cache: dict[tuple[int, ...], dict[str, tuple[float, float] | None]] = {}
    defined = 0
    covered = dict.fromkeys(intervals, 0)
    for row in tables:
        key = tuple(int(x) for x in row)
        if key not in cache:
            a, b = labels(key, k)
            cache[key] = {name: fn(a, b) for name, fn in intervals.items()}
        found = cache[key]
        if next(iter(found.values())) is None:
            continue
        defined += 1
        for name, bounds in found.items():
            covered[name] += bounds is not None and bounds[0] <= truth <= bounds[1]
    return 1 - defined / sets, {name: c / defined if defined else math.nan for name, c in covered.items()}


def _kappa_intervals(k: int) -> dict[str, Interval]:
    def new(a: list[int], b: list[int]) -> tuple[float, float] | None:
        return kappa_interval(a, b, range(k))

    def before(a: list[int], b: list[int]) -> tuple[float, float] | None:
        return fce(a, b, k)

    return {"new": new, "fce": before}


def _weighted(a: list[int], b: list[int]) -> tuple[float, float] | None:
    return weighted_kappa_interval([RISK_CLASSES[x] for x in a], [RISK_CLASSES[x] for x in b])


def kappa_part(rng: np.random.Generator, sets: int) -> list[str]:
    misses: list[str] = []
    for stat in ("kappa", "weighted kappa"):
        print(f"\n{stat} interval coverage, {sets} tables per cell (target {LOW:.2f}-{HIGH:.2f})")
        head = f"{'margins':<13} {'n':>4} {'kappa':>6} {'true':>6} {'undefined':>9} {'coverage':>9}"
        print(f"{head} {'FCE before':>11}")
        for name, (margins, bias) in MARGINS.items():
            k = len(margins)
            if stat == "weighted kappa" and k != 3:
                continue
            intervals: dict[str, Interval] = _kappa_intervals(k) if stat == "kappa" else {"new": _weighted}
            for n in KAPPA_SIZES:
                for kappa in KAPPAS:
                    p = joint(margins, kappa, bias)
                    truth = true_kappa(p, LINEAR if stat == "weighted kappa" else None)
                    undefined, cover = kappa_cell(rng, n, p, truth, intervals, sets)
                    before = f"{cover['fce']:>11.3f}" if "fce" in cover else f"{'':>11}"
                    flag = verdict(cover["new"])
                    cell = f"{name:<13} {n:>4} {kappa:>6.2f} {truth:>6.3f} {undefined:>9.3f}"
                    print(f"{cell} {cover['new']:>9.3f}{before}{flag}")
                    if flag:
                        misses.append(f"{stat} {name} n={n} kappa={kappa}: {cover['new']:.3f}")
    return misses


def oos_precision(
    rng: np.random.Generator, cases: int, rate: float, icc: float, sets: int
) -> tuple[float, float]:
    clustered = pooled = 0
    for _ in range(sets):
        files = rng.integers(1, 9, size=cases)
        right = rng.binomial(files, shares(rng, cases, rate, icc))
        bounds = cluster_interval(list(right), list(files))
        clustered += bounds is not None and bounds[0] <= rate <= bounds[1]
        flat = wilson(int(right.sum()), int(files.sum()))
        pooled += flat is not None and flat[0] <= rate <= flat[1]
    return clustered / sets, pooled / sets


def oos_kappa(rng: np.random.Generator, cases: int, kappa: float, sets: int) -> tuple[float, float, float]:
    draws = rng.beta(1, 3, size=20_000)
    pooled = np.mean([joint((1 - x, x), kappa, 0.0) for x in draws], axis=0)
    truth = true_kappa(pooled, None)
    clustered = flat = defined = 0
    for _ in range(sets):
        a: list[int] = []
        b: list[int] = []
        ids: list[int] = []
        for case in range(cases):
            files = int(rng.integers(1, 9))
            share = float(rng.beta(1, 3))
            p = joint((1 - share, share), kappa, 0.0)
            cells = rng.multinomial(files, p.ravel())
            x, y = labels([int(c) for c in cells], 2)
            a += x
            b += y
            ids += [case] * files
        with_cases = kappa_interval(a, b, (0, 1), clusters=ids)
        if with_cases is None:
            continue
        defined += 1
        clustered += with_cases[0] <= truth <= with_cases[1]
        alone = kappa_interval(a, b, (0, 1))
        flat += alone is not None and alone[0] <= truth <= alone[1]
    return truth, clustered / defined, flat / defined


def oos_part(rng: np.random.Generator, sets: int) -> list[str]:
    misses: list[str] = []
    target = f"{sets} sets per cell (target {LOW:.2f}-{HIGH:.2f})"
    print(f"\nout-of-scope precision/recall, clustered by case, {target}")
    print(f"{'cases':>6} {'rate':>5} {'icc':>4} {'coverage':>9} {'files as independent':>21}")
    for cases in OOS_CASES:
        for rate in OOS_RATES:
            for icc in OOS_ICCS:
                clustered, pooled = oos_precision(rng, cases, rate, icc, sets)
                flag = verdict(clustered)
                print(f"{cases:>6} {rate:>5.2f} {icc:>4.1f} {clustered:>9.3f} {pooled:>21.3f}{flag}")
                if flag:
                    misses.append(f"oos precision cases={cases} rate={rate} icc={icc}: {clustered:.3f}")
    print(f"\nper-file out-of-scope kappa, clustered by case, {target}")
    print(f"{'cases':>6} {'kappa':>6} {'true':>6} {'coverage':>9} {'files as independent':>21}")
    for cases in OOS_CASES:
        for kappa in OOS_KAPPAS:
            truth, clustered, flat = oos_kappa(rng, cases, kappa, sets)
            flag = verdict(clustered)
            print(f"{cases:>6} {kappa:>6.2f} {truth:>6.3f} {clustered:>9.3f} {flat:>21.3f}{flag}")
            if flag:
                misses.append(f"oos kappa cases={cases} kappa={kappa}: {clustered:.3f}")
    return misses


def trials_part(rng: np.random.Generator, sets: int) -> list[str]:
    misses: list[str] = []
    print(f"trial interval coverage, {sets} data sets per cell (target {LOW:.2f}-{HIGH:.2f})")
    print(f"{'cases':>6} {'trials':>6} {'rate':>6} {'icc':>5} {'coverage':>9}")
    for cases, trials, rate, icc in TRIAL_GRID:
        value = trial_coverage(rng, cases, trials, rate, icc, sets)
        flag = verdict(value)
        print(f"{cases:>6} {trials:>6} {rate:>6.2f} {icc:>5.1f} {value:>9.3f}{flag}")
        if flag:
            misses.append(f"trials cases={cases} rate={rate} icc={icc}: {value:.3f}")
    return misses


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sets", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--part", default="trials,kappa,oos", help="comma-separated: trials, kappa, oos")
    args = parser.parse_args()
    parts = {"trials": trials_part, "kappa": kappa_part, "oos": oos_part}
    misses: list[str] = []
    for part in args.part.split(","):
        misses += parts[part](np.random.default_rng(args.seed), args.sets)
    print(f"\n{len(misses)} cell(s) outside {LOW:.2f}-{HIGH:.2f}" + (":" if misses else ""))
    for miss in misses:
        print(f"  {miss}")


if __name__ == "__main__":
    main()
