"""Error rates of the non-inferiority verdict (issue 22 item 2), by simulation with its own code.

Run: .venv/bin/python bench/bench_margins.py [--sims N] [--seed S]

Model. n paired cases; in the base run each case shows the event (an under-classification, say)
with probability p, in the new run with probability p + d, independently per case (no pairing
correlation: the widest interval for these rates). For each cell the verdict comes from
`compare.margin_verdict` on the paired bootstrap interval (`paired_stats`, 2,000 resamples, as
`graft-eval compare`). Printed per cell: the share of each verdict at d = 0 (no change: how often
the set can show "not worse", and how often it calls "worse" wrongly) and at d = margin (a real
rise of exactly the margin: "not worse" there is the error the rule must keep near 2.5%).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from graft_eval_pipeline.evalset.compare.compare import margin_verdict
from graft_eval_pipeline.evalset.compare.paired_stats import (
    DEFAULT_RESAMPLES,
    paired_rate_differences,
    percentile_interval,
)

CELLS = [(100, 0.05, 0.05), (300, 0.05, 0.03), (300, 0.10, 0.05), (1000, 0.05, 0.02)]
VERDICTS = ("better", "not worse (within margin)", "inconclusive at this n", "worse")


def verdict_shares(
    n: int, p: float, d: float, margin: float, sims: int, rng: np.random.Generator
) -> list[float]:
    counts = dict.fromkeys(VERDICTS, 0)
    ones = np.ones((n, 1))
    for s in range(sims):
        base = (rng.random(n) < p).astype(np.float64)[:, None]
        new = (rng.random(n) < p + d).astype(np.float64)[:, None]
        replicates = paired_rate_differences(base, ones, new, ones, resamples=DEFAULT_RESAMPLES, seed=s)
        interval = percentile_interval(replicates[:, 0])
        low, high = (interval.low, interval.high) if interval else (None, None)
        counts[margin_verdict(low, high, margin)] += 1
    return [counts[v] / sims for v in VERDICTS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=400)
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.monotonic()
    print(f"{args.sims} simulated comparisons per row, seed {args.seed}")
    print(f"{'n':>5} {'p':>5} {'margin':>6} {'d':>6}  " + "  ".join(f"{v:>26}" for v in VERDICTS))
    for n, p, margin in CELLS:
        for d in (0.0, margin):
            shares = verdict_shares(n, p, d, margin, args.sims, rng)
            print(f"{n:>5} {p:>5} {margin:>6} {d:>6}  " + "  ".join(f"{s:>26.3f}" for s in shares))
    print(f"{time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
