"""Rates over cases of several repositories, with intervals clustered by repository.

Rates over files (out of scope) clustered by case.

Why: the cases of one repository share its code, conventions and agents, so they are not
independent draws; an interval that counts every case as independent is too narrow when a set
pools repositories. Each repository is a cluster, and the interval is the one the trials use
(`trials.cluster_interval`: Clopper-Pearson at the Korn-Graubard effective size, never below the
number of repositories' worth of information). Few repositories give wide intervals: that is
what the data can say. Only opaque repository labels (`repo-<hex>`) enter the rows. The files
of one case share its PR in the same way: out-of-scope precision and recall count files, and
their interval takes each case as a cluster (the same interval).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from graft_eval_pipeline.card import RISK_ORDER
from graft_eval_pipeline.evalset.scoring.rates import RATE_DECIMALS, rate, rounded
from graft_eval_pipeline.evalset.scoring.report_schema import (
    CaseClusteredRate,
    CaseRow,
    ClusteredRate,
    RepositoryClusters,
)
from graft_eval_pipeline.evalset.scoring.trials import cluster_interval, effective_size

Indicator = Callable[[CaseRow], bool]


def clustered_rate(rows: Sequence[CaseRow], domain: Indicator, hit: Indicator) -> ClusteredRate:
    """`k` of `n` over the rows in `domain`, each repository one cluster."""
    counts: dict[str, int] = defaultdict(int)
    sizes: dict[str, int] = defaultdict(int)
    for row in rows:
        if row.repository is not None and domain(row):
            sizes[row.repository] += 1
            counts[row.repository] += hit(row)
    labels = sorted(sizes)
    k, n = sum(counts.values()), sum(sizes.values())
    size = effective_size([counts[x] for x in labels], [sizes[x] for x in labels])
    value = rate(k, n)
    return ClusteredRate(
        k=k,
        n=n,
        value=None if value is None else round(value, RATE_DECIMALS),
        ci95=rounded(cluster_interval([counts[x] for x in labels], [sizes[x] for x in labels])),
        effective_n=None if size is None else round(size, 1),
    )


def case_clustered_rate(counts: Sequence[int], sizes: Sequence[int]) -> CaseClusteredRate:
    """sum(counts) of sum(sizes) files, each case (one entry) a cluster of its files."""
    k, n = sum(counts), sum(sizes)
    size = effective_size(counts, sizes)
    value = rate(k, n)
    return CaseClusteredRate(
        k=k,
        n=n,
        value=None if value is None else round(value, RATE_DECIMALS),
        ci95=rounded(cluster_interval(counts, sizes)),
        method="clopper-pearson",
        clustered_by="case",
        clusters=sum(m > 0 for m in sizes),
        effective_n=None if size is None else round(size, 1),
    )


def _scored(row: CaseRow) -> bool:
    return row.gold is not None and row.final is not None


def repository_clusters(run: Sequence[CaseRow]) -> RepositoryClusters | None:
    """The headline safety rates clustered by repository.

    None unless the scored cases come from two or more repositories (a designed set, or a single
    repository, has nothing to cluster).
    """
    repositories = {r.repository for r in run if r.repository is not None and _scored(r)}
    if len(repositories) < 2:
        return None

    def under(row: CaseRow) -> bool:
        return (
            row.gold is not None
            and row.final is not None
            and RISK_ORDER[row.final] < RISK_ORDER[row.gold.risk]
        )

    def sensitive_gold(row: CaseRow) -> bool:
        return _scored(row) and row.gold is not None and row.gold.risk == "sensitive"

    return RepositoryClusters(
        repositories=len(repositories),
        under_classification_final=clustered_rate(run, _scored, under),
        severe_under_classification_sensitive_final=clustered_rate(
            run, sensitive_gold, lambda r: r.final == "trivial"
        ),
        unavailable_rate=clustered_rate(run, lambda _r: True, lambda r: r.status == "unavailable"),
    )
