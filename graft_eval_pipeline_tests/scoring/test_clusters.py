"""Safety rates clustered by repository.

The interval against numpy + statsmodels, its coverage when repositories differ, and opaque
repository labels only.
"""

from __future__ import annotations

import numpy as np
import pytest

from graft_eval_pipeline.evalset.report.render import render_markdown
from graft_eval_pipeline.evalset.scoring.clusters import clustered_rate, repository_clusters
from graft_eval_pipeline.evalset.scoring.intervals import clopper_pearson
from graft_eval_pipeline.evalset.scoring.metrics import compute_metrics
from graft_eval_pipeline.evalset.scoring.report_schema import CaseRow, OosCounts
from graft_eval_pipeline.evalset.scoring.rows import case_repository
from graft_eval_pipeline_tests.builders import make_case, make_pilot_case
from graft_eval_pipeline_tests.row_builders import make_row
from graft_eval_pipeline_tests.scoring.test_population import report_of_rows
from graft_eval_pipeline_tests.scoring.test_trials import oracle


def _rows(errors_by_repo: list[list[bool]]) -> list[CaseRow]:
    return [
        make_row(
            f"r{i}-{j}",
            gold="logic",
            floor="logic",
            final="trivial" if e else "logic",
            repository=f"repo-{i}",
        )
        for i, errors in enumerate(errors_by_repo)
        for j, e in enumerate(errors)
    ]


@pytest.mark.parametrize("seed", range(6))
def test_clustered_rate_matches_the_oracle(seed: int) -> None:
    rng = np.random.default_rng(seed)
    errors = [
        list(rng.random(int(rng.integers(1, 30))) < rng.choice([0.02, 0.1, 0.3]))
        for _ in range(int(rng.integers(2, 9)))
    ]
    got = clustered_rate(_rows(errors), lambda r: True, lambda r: r.final == "trivial")
    assert (got.k, got.n) == (sum(map(sum, errors)), sum(map(len, errors)))
    assert got.ci95 is not None
    low, high = oracle([[int(e) for e in repo] for repo in errors])  # repositories as the clusters
    assert got.ci95[0] == pytest.approx(low, abs=1e-4) and got.ci95[1] == pytest.approx(high, abs=1e-4)


def test_one_repository_or_a_designed_set_has_nothing_to_cluster() -> None:
    assert repository_clusters(_rows([[True, False, False]])) is None
    assert repository_clusters([make_row("a"), make_row("b")]) is None  # synthetic rows: no repository
    assert compute_metrics([make_row("a")]).by_repository is None


@pytest.mark.slow  # a coverage simulation
def test_coverage_when_repositories_differ() -> None:
    """The clustered interval covers the mean share when repositories differ; the naive one does not.

    8 repositories x 25 cases, each repository's error share drawn around 0.08 (intraclass
    correlation 0.1): the clustered interval covers the mean share in at least 93% of 500 seeded
    sets; the interval that treats the 200 cases as independent covers less.
    """
    rng = np.random.default_rng(5)
    rate, icc, sets = 0.08, 0.1, 500
    total = (1 - icc) / icc
    clustered = naive = 0
    for _ in range(sets):
        shares = rng.beta(rate * total, (1 - rate) * total, size=8)
        errors = [list(rng.random(25) < share) for share in shares]
        stat = clustered_rate(_rows(errors), lambda r: True, lambda r: r.final == "trivial")
        assert stat.ci95 is not None
        clustered += stat.ci95[0] <= rate <= stat.ci95[1]
        flat = clopper_pearson(stat.k, stat.n)
        assert flat is not None
        naive += flat[0] <= rate <= flat[1]
    assert clustered / sets >= 0.93 > naive / sets


def test_rows_carry_an_opaque_repository_label_and_report_md_shows_the_clustered_rates() -> None:
    case = make_pilot_case(pr_number=7)
    label = case_repository(case, b"k" * 32)
    assert label is not None and label.startswith("repo-") and len(label) == 17
    assert case.source.repository.split("/")[1] not in label  # type: ignore[union-attr]
    assert case_repository(case, b"k" * 32) == label != case_repository(case, b"j" * 32)
    assert case_repository(make_case(), None) is None
    report = report_of_rows(_rows([[True] + [False] * 9, [False] * 10, [True, True] + [False] * 8]))
    clusters = report.metrics.by_repository
    assert clusters is not None and clusters.repositories == 3
    text = render_markdown(report, None)
    assert "## Clustered by repository (3 repositories)" in text
    assert "| underClassificationFinal | 3/30 |" in text


@pytest.mark.parametrize("seed", range(5))
def test_out_of_scope_precision_and_recall_are_clustered_by_case_against_the_oracle(seed: int) -> None:
    """Each case's files are one cluster.

    The interval is the trials' oracle over per-file outcomes grouped by case (numpy CR1 design
    effect, Korn-Graubard, statsmodels' exact interval).
    """
    rng = np.random.default_rng(seed)
    cases = int(rng.integers(2, 40))
    counts = [
        (int(rng.integers(0, 6)), int(rng.integers(0, 3)), int(rng.integers(0, 3))) for _ in range(cases)
    ]
    rows = [make_row(f"c{i}", oos=OosCounts(tp=tp, fp=fp, fn=fn)) for i, (tp, fp, fn) in enumerate(counts)]
    metrics = compute_metrics(rows)
    for stat, wrong in ((metrics.out_of_scope_precision, 1), (metrics.out_of_scope_recall, 2)):
        outcomes = [[1] * c[0] + [0] * c[wrong] for c in counts if c[0] + c[wrong] > 0]
        assert stat.clustered_by == "case" and stat.clusters == len(outcomes)
        assert stat.k == sum(map(sum, outcomes)) and stat.n == sum(map(len, outcomes))
        if not outcomes:
            assert stat.ci95 is None and stat.value is None
            continue
        low, high = oracle(outcomes)
        assert stat.ci95 is not None
        assert stat.ci95 == pytest.approx((low, high), abs=1.01e-4)
        assert stat.ci95[0] <= low + 1e-12 and stat.ci95[1] >= high - 1e-12  # rounded outwards


def test_files_of_one_case_alike_give_a_wider_out_of_scope_interval_than_independent_files() -> None:
    # 12 cases of 5 files: 8 cases all right, 4 all wrong. Twelve cases' worth, not sixty files'.
    rows = [
        make_row(f"c{i}", oos=OosCounts(tp=5, fp=0, fn=0) if i < 8 else OosCounts(tp=0, fp=5, fn=0))
        for i in range(12)
    ]
    precision = compute_metrics(rows).out_of_scope_precision
    flat = clopper_pearson(40, 60)
    assert precision.ci95 is not None and flat is not None
    assert precision.ci95[1] - precision.ci95[0] > 1.5 * (flat[1] - flat[0])
    assert precision.effective_n is not None and precision.effective_n < 20
