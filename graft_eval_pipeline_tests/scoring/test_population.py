"""Strata recorded by the export and the report's post-stratified estimates (issue 13 §5)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from graft_eval_pipeline.evalset.export.options import CandidateSettings, ExportSettings, SampleSettings
from graft_eval_pipeline.evalset.export.run import run_export
from graft_eval_pipeline.evalset.report.publish import build_report
from graft_eval_pipeline.evalset.report.render import render_markdown, summary_text
from graft_eval_pipeline.evalset.scoring.metrics import compute_metrics
from graft_eval_pipeline.evalset.scoring.population import population_estimates
from graft_eval_pipeline.evalset.scoring.report_schema import (
    CaseRow,
    EvalReport,
    GitInfo,
    ModelPair,
    PromptInfo,
    RunInfo,
)
from graft_eval_pipeline.evalset.scoring.rows import HarnessRun, set_summary
from graft_eval_pipeline.evalset.sets.case_schema import (
    CaseStratum,
    PilotSource,
    SetMeta,
    dump_case,
    parse_case,
)
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.store import list_case_ids, read_case
from graft_eval_pipeline.github.auth import TokenAuth
from graft_eval_pipeline.github.client import GitHubClient
from graft_eval_pipeline.github.rate_limit import RateLimiter, RateLimitOptions
from graft_eval_pipeline_tests.builders import make_pilot_case, make_pilot_set, pilot_source
from graft_eval_pipeline_tests.fake_github import FakeClock, FakeCommit, FakeFile, FakeGitHub, FakePull
from graft_eval_pipeline_tests.row_builders import make_row

# The oracles are imported inside the tests that use them, and those tests share one xdist worker:
# the default lane's other worker never loads scipy or statsmodels.
pytestmark = pytest.mark.xdist_group("oracles")

FRAME = "fictional-org/shop-demo merged 2026-06-01..2026-06-30 seed 1"


def stratum(key: str, population: int, sampled: int, frame: str = FRAME) -> CaseStratum:
    return CaseStratum(frame=frame, key=key, population=population, sampled=sampled)


def rows_of(key: str, population: int, outcomes: list[bool], **over: Any) -> list[CaseRow]:
    """Scored rows of one stratum: gold logic, final trivial when the outcome is an error."""
    s = stratum(key, population, len(outcomes))
    return [
        make_row(
            f"{key.replace('/', '-').lower()}-{i}",
            gold="logic",
            floor="logic",
            final="trivial" if under else "logic",
            stratum=s,
            **over,
        )
        for i, under in enumerate(outcomes)
    ]


def reference(strata: list[tuple[int, list[bool]]]) -> tuple[float, float, float]:
    """Post-stratified share, its stratified variance (fpc) and the effective n, by the textbook formulas.

    For a stratified mean: Σ W_h p_h and Σ W_h² (1 − f_h) s²_h / m_h.
    """
    total = sum(size for size, _ in strata)
    p = sum(size / total * sum(o) / len(o) for size, o in strata)
    variance = 0.0
    for size, outcomes in strata:
        m = len(outcomes)
        p_h = sum(outcomes) / m
        s2 = p_h * (1 - p_h) * m / (m - 1)
        variance += (size / total) ** 2 * (1 - m / size) * s2 / m
    n = sum(len(o) for _, o in strata)
    return p, variance, min(n, p * (1 - p) / variance)


def test_post_stratified_rate_weighs_each_stratum_by_its_population() -> None:
    from scipy.stats import beta

    common = [True] + [False] * 19  # 1 of 20 sampled from 1,000
    rare = [True] * 5 + [False] * 5  # 5 of 10 sampled from 50: over-represented on purpose
    rows = rows_of("S/source", 1000, common) + rows_of("XL/sensitive", 50, rare)
    m = compute_metrics(rows)
    assert (m.under_classification_final.k, m.under_classification_final.n) == (6, 30)  # unweighted 0.2
    estimates = m.population
    assert estimates.status == "estimated" and estimates.population == 1050 and estimates.unstratified == 0
    uc = estimates.under_classification_final
    assert uc is not None and uc.value is not None and uc.effective_n is not None
    p, variance, effective = reference([(1000, common), (50, rare)])
    assert uc.value == round(p, 4) == 0.0714
    assert uc.effective_n == pytest.approx(effective, abs=0.05)
    lo = beta.ppf(0.025, p * effective, effective - p * effective + 1)
    hi = beta.ppf(0.975, p * effective + 1, effective - p * effective)
    assert uc.ci95 == pytest.approx((lo, hi), abs=1e-4)
    assert uc.upper95 == pytest.approx(beta.ppf(0.95, p * effective + 1, effective - p * effective), abs=1e-4)
    assert math.sqrt(variance) > 0
    table = {s.stratum: s for s in estimates.strata}
    assert (table["S/source"].weight, table["XL/sensitive"].weight) == (50.0, 5.0)
    assert (table["XL/sensitive"].under_classification_final.k, table["XL/sensitive"].scored) == (5, 10)


def test_no_error_in_any_stratum_uses_the_kish_effective_n_of_the_weights() -> None:
    """A rate of 0 has no variance to measure.

    The weights say what the cases are worth, Kish's (Σw)²/Σw², all 30 cases under equal weights,
    fewer under unequal ones.
    """
    from scipy.stats import beta

    equal = rows_of("S/source", 400, [False] * 20) + rows_of("M/tests", 200, [False] * 10)
    uc = compute_metrics(equal).population.under_classification_final
    assert uc is not None and (uc.value, uc.effective_n, uc.n) == (0.0, 30.0, 30)
    assert uc.ci95 == (0.0, 0.1158) and uc.upper95 == 0.0951
    unequal = rows_of("S/source", 400, [False] * 20) + rows_of("M/tests", 40, [False] * 10)
    uc = compute_metrics(unequal).population.under_classification_final
    kish = (400 + 40) ** 2 / (20 * 20**2 + 10 * 4**2)
    assert uc is not None and uc.effective_n == round(kish, 1)
    assert uc.upper95 == pytest.approx(beta.ppf(0.95, 1, kish), abs=1e-4)


def test_severe_among_sensitive_gold_is_a_domain_estimate_and_skipped_rows_are_left_out() -> None:
    s_a, s_b = stratum("S/sensitive", 100, 4), stratum("L/sensitive", 10, 2)
    rows = [
        make_row("a1", gold="sensitive", floor="sensitive", stratum=s_a),
        make_row("a2", gold="logic", floor="logic", stratum=s_a),
        make_row("a3", gold="logic", floor="logic", stratum=s_a),
        make_row("a4", gold="logic", floor="logic", stratum=s_a),
        make_row("b1", gold="sensitive", floor="trivial", model="trivial", stratum=s_b),
        make_row("b2", gold="sensitive", floor="sensitive", stratum=s_b),
        make_row(
            "b3", final=None, model=None, status=None, verifier_status=None, skipped="budget", stratum=s_b
        ),
    ]
    population = compute_metrics(rows).population
    severe = population.severe_under_classification_sensitive_final
    # weights 100/4 and 10/2: sensitive mass 25·1 + 5·2 = 35, severe mass 5·1 = 5
    assert severe is not None and severe.n == 3 and severe.value == round(5 / 35, 4)
    assert {s.stratum: (s.run_cases, s.scored) for s in population.strata} == {
        "L/sensitive": (2, 2),
        "S/sensitive": (4, 4),
    }


def test_a_set_without_strata_is_not_a_sample() -> None:
    rows = [make_row("a"), make_row("b", gold="logic", floor="logic")]
    population = population_estimates(rows)
    assert population.status == "not a sample" and population.strata == []
    assert population.under_classification_final is None and population.unstratified == 2


def test_two_exports_are_two_frames_never_one_stratum() -> None:
    first = rows_of("S/source", 100, [False] * 4)
    second = [
        r.model_copy(update={"id": r.id + "-b", "stratum": stratum("S/source", 300, 4, frame="other frame")})
        for r in first
    ]
    population = population_estimates(first + second)
    assert [(s.frame, s.population) for s in population.strata] == [(FRAME, 100), ("other frame", 300)]
    assert population.population == 400


def test_case_stratum_is_additive_and_round_trips_byte_for_byte() -> None:
    plain = make_pilot_case()
    text = dump_case(plain)
    assert '"stratum"' not in text and dump_case(parse_case(text, "x")) == text
    stratified = make_pilot_case(
        source=pilot_source("pilot-acme", 412, stratum=stratum("M/sensitive", 12, 3))
    )
    text = dump_case(stratified)
    assert '"stratum": {' in text and dump_case(parse_case(text, "x")) == text
    with pytest.raises(ValueError, match="sampled must not exceed"):
        stratum("M/sensitive", 2, 3)


def test_export_records_each_case_stratum_with_its_population_and_picks(tmp_path: Path) -> None:
    repo, start = "fictional-org/shop-demo", datetime(2026, 6, 1, tzinfo=UTC)
    key = parse_key(generate_key())
    cs = make_pilot_set(tmp_path / "pilot-acme", key=key)
    clock = FakeClock(datetime(2026, 7, 1, tzinfo=UTC).timestamp())
    fake = FakeGitHub(repo, clock=clock.now)
    for n in range(1, 9):
        at = start + timedelta(days=n)
        lines = 10 if n <= 6 else 400  # six small PRs, two medium-large ones
        fake.add_pull(
            FakePull(
                n,
                updated_at=at,
                merged_at=at,
                title=f"Title {n}",
                commits=[FakeCommit(f"Change {n}\n\nGraft-Agent: fictional-agent")],
                files=[FakeFile(f"src/mod_{n}.py", additions=lines, deletions=0)],
            )
        )
    gh = GitHubClient(
        auth=TokenAuth("test-token"),
        limiter=RateLimiter(RateLimitOptions(), sleep=clock.sleep, now=clock.now),
        base_url="https://github.fake",
        transport=fake.transport(),
    )
    options = ExportSettings(
        CandidateSettings(repo=repo, merged_from=start, merged_to=start + timedelta(days=30)),
        SampleSettings(size=4),
    )
    summary = run_export(gh, cs, options, now=lambda: datetime(2026, 7, 1, tzinfo=UTC), emit=lambda _: None)
    assert summary.sample.frame == f"{repo} merged 2026-06-02..2026-06-09 seed 1"
    recorded = {}
    for case_id in list_case_ids(cs):
        source = read_case(cs, case_id).source
        assert isinstance(source, PilotSource) and source.stratum is not None
        recorded[source.stratum.key] = (source.stratum.population, source.stratum.sampled)
    assert recorded == {k: (c.population, c.sampled) for k, c in summary.sample.strata.items() if c.sampled}
    assert sum(p for p, _ in recorded.values()) == 8


def report_of_rows(rows: list[CaseRow]) -> EvalReport:
    """The report of a live run of a pilot set over these rows."""
    cases = [make_pilot_case(pr_number=400 + i) for i in range(len(rows))]
    meta = SetMeta(
        schema_version=1,
        set_id="pilot-acme",
        kind="pilot",
        encrypted=True,
        key_id="3f9a12bc",
        consent_ref="Acme agreement",
        created_at=datetime(2026, 10, 15, tzinfo=UTC),
    )
    harness = HarnessRun(
        set=set_summary(meta, cases, rows),
        prompt=PromptInfo(prompt_version="intent-v1", prompt_fingerprint="f" * 64),
        models=ModelPair(fast="claude-haiku-5-5", strong="claude-sonnet-5-5"),
        llm="live",
        run=RunInfo(complete=True, skipped_budget=0, cached_results=0, duration_ms=5),
        created_at=datetime(2026, 10, 15, tzinfo=UTC),
        git=GitInfo(commit=None, dirty=None),
        rows=rows,
    )
    return build_report(harness, compute_metrics(rows), run_id="20261015T100000Z-3f9a")


def test_report_shows_weighted_next_to_unweighted_and_the_strata_table() -> None:
    rows = rows_of("S/source", 1000, [True] + [False] * 19)
    rows += rows_of("XL/sensitive", 50, [True] * 5 + [False] * 5)
    report = report_of_rows(rows)
    md = render_markdown(report, None)
    assert "Post-stratified to a population of 1050 PRs" in md
    assert "| underClassificationFinal | 6/30 0.200 [0.077–0.386] ≤ 0.357 | 0.071 |" in md
    assert "scripted" not in md  # a live run's numbers are measured
    assert f"| {FRAME} | XL/sensitive | 50 | 10 | 10 | 10 | 5.0 | 5/10 0.500 [0.187–0.813] ≤ 0.778 |" in md
    assert "not a sample" not in md
    summary = summary_text(report, None, [])
    assert "population: 1050 PRs in 2 strata; underClassificationFinal post-stratified 0.071 [" in summary


def _coverage(design: list[tuple[int, int, float]], sets: int, seed: int) -> float:
    """Share of seeded data sets whose post-stratified 95% interval holds the true rate.

    Share of seeded data sets whose post-stratified 95% interval holds the population's true
    under-classification rate; `design`: (population, sampled cases, true rate) per stratum.
    """
    import random

    rng = random.Random(seed)
    truth = sum(size * p for size, _, p in design) / sum(size for size, _, _ in design)
    covered = 0
    for _ in range(sets):
        rows = [
            row
            for i, (size, m, p) in enumerate(design)
            for row in rows_of(f"S{i}/source", size, [rng.random() < p for _ in range(m)])
        ]
        uc = population_estimates(rows).under_classification_final
        assert uc is not None and uc.ci95 is not None
        covered += uc.ci95[0] <= truth <= uc.ci95[1]
    return covered / sets


@pytest.mark.parametrize(
    "design",
    [
        [(500, 1, 0.3), (100, 20, 0.05)],  # a singleton stratum carries most of the weight
        [(500, 3, 0.1), (100, 20, 0.05)],  # a small stratum whose cases usually all agree
        [(300, 2, 0.02), (300, 2, 0.02), (50, 30, 0.1)],
    ],
)
@pytest.mark.slow  # a coverage simulation: 400 seeded sets per design
def test_singleton_and_constant_strata_keep_the_interval_honest(design: list[tuple[int, int, float]]) -> None:
    """Such strata added no variance (coverage 0.00 and 0.42 in these designs).

    With the spread of their Jeffreys share they cover the population rate at least nominally (400
    seeded sets).
    """
    assert _coverage(design, sets=400, seed=len(design)) >= 0.95


def test_a_stratum_without_a_scored_case_is_named_and_outside_the_estimate() -> None:
    unlabeled = make_row("unlabeled-1", gold=None, stratum=stratum("XL/sensitive", 500, 2))
    rows = [*rows_of("S/source", 1000, [True] + [False] * 19), unlabeled]
    report = report_of_rows(rows)
    population = report.metrics.population
    assert population.population == 1500 and population.strata_without_scored == [f"{FRAME} XL/sensitive"]
    uc = population.under_classification_final
    assert uc is not None and uc.covered_population == 1000
    text = render_markdown(report, None)
    assert (
        f"No scored case in 1 stratum/strata ({FRAME} XL/sensitive): the estimates cover 1000 of the 1500 PRs"
        in text
    )
