"""Per-case blockers that must reproduce.

The binomial rule against scipy, the decisions, and the rule's false-alarm and detection rates by
simulation.
"""

from __future__ import annotations

import random

import pytest

from graft_eval_pipeline.evalset.compare.blockers import (
    BASE_TRIALS,
    BLOCKER_ALPHA,
    CONFIRM_POWER,
    FLIP_TOLERANCE,
    binom_sf,
    confirm_trials,
    critical_count,
    decide_blockers,
)
from graft_eval_pipeline.evalset.scoring import CaseRow
from graft_eval_pipeline_tests.row_builders import make_row

# The oracles are imported inside the tests that use them, and those tests share one xdist worker:
# the default lane's other worker never loads scipy or statsmodels.
pytestmark = pytest.mark.xdist_group("oracles")


@pytest.mark.parametrize("n", [0, 1, 2, 5, 6, 12, 40])
def test_binom_sf_matches_scipy_from_k_0_to_n(n: int) -> None:
    from scipy.stats import binom

    for p in (0.0, 0.1, 0.5, 0.9, 1.0, random.Random(n).random()):
        for k in range(-1, n + 2):
            assert binom_sf(k, n, p) == pytest.approx(float(binom.sf(k - 1, n, p)), abs=1e-12), (k, n, p)


@pytest.mark.parametrize("tests", [1, 2, 30, 100, 150, 400])
def test_critical_count_is_the_fewest_trials_that_reach_the_bonferroni_level(tests: int) -> None:
    from scipy.stats import binom

    level = BLOCKER_ALPHA / tests
    for trials in range(1, 13):
        found = critical_count(trials, tests)
        tails = [float(binom.sf(t - 1, trials, FLIP_TOLERANCE)) for t in range(1, trials + 1)]
        expected = next(
            (t for t, tail in zip(range(1, trials + 1), tails, strict=True) if tail <= level), None
        )
        assert found == expected, (trials, tests)
    assert critical_count(1, tests) is None  # one trial never shows more than a flip


@pytest.mark.parametrize("tests", [1, 30, 100, 300])
def test_confirm_trials_block_a_really_regressed_case_with_the_stated_power(tests: int) -> None:
    from scipy.stats import binom

    trials = confirm_trials(tests)
    needed = critical_count(trials, tests)
    assert needed is not None
    assert float(binom.sf(needed - 1, trials, 1 - FLIP_TOLERANCE)) >= CONFIRM_POWER
    fewer = critical_count(trials - 1, tests)
    assert fewer is None or float(binom.sf(fewer - 1, trials - 1, 1 - FLIP_TOLERANCE)) < CONFIRM_POWER


def sensitive(case_id: str, under: bool, trial: int = 0) -> CaseRow:
    return make_row(
        case_id, gold="sensitive", floor="trivial", model="logic" if under else "sensitive", trial=trial
    )


def runs(pattern: dict[str, list[bool]]) -> dict[str, list[CaseRow]]:
    return {i: [sensitive(i, u, t) for t, u in enumerate(shown)] for i, shown in pattern.items()}


CLEAN = [False] * BASE_TRIALS


def test_one_live_trial_never_blocks_it_asks_for_confirmation_trials() -> None:
    base = runs({"a": CLEAN, "b": CLEAN, "c": [True, False, False]})
    new = runs({"a": [True], "b": [False], "c": [True]})
    decision = decide_blockers(base, new, ["a", "b", "c"], deterministic=False)
    assert decision.blockers == [] and decision.flaky == []
    assert [(c.id, c.shown, c.trials, c.needs_trials) for c in decision.unconfirmed] == [
        ("a", 1, 1, confirm_trials(3))
    ]  # c was under-classified in a base trial already: not new
    assert decision.rule.tests == 3 and not decision.rule.deterministic


def test_a_reproduced_case_blocks_and_a_case_shown_in_few_trials_is_flaky() -> None:
    trials = confirm_trials(2)
    base = runs({"a": CLEAN, "b": CLEAN})
    new = runs({"a": [True] * trials, "b": [True, False] + [False] * (trials - 2)})
    decision = decide_blockers(base, new, ["a", "b"], deterministic=False)
    assert [(b.id, b.shown, b.trials, b.base_shown, b.base_trials) for b in decision.blockers] == [
        ("a", trials, trials, 0, BASE_TRIALS)
    ]
    assert f"in {trials} of {trials} trial(s), base 0 of {BASE_TRIALS}" in decision.blockers[0].detail
    assert [c.id for c in decision.flaky] == ["b"] and decision.unconfirmed == []


def test_a_live_base_with_one_trial_cannot_show_the_case_is_new() -> None:
    """The base needs BASE_TRIALS clean trials before a case can block.

    A case under-classified in most runs that happened to be right in the baseline's one trial would
    block whenever it reproduces: the base needs BASE_TRIALS clean trials.
    """
    trials = confirm_trials(1)
    decision = decide_blockers(runs({"a": [False]}), runs({"a": [True] * trials}), ["a"], deterministic=False)
    assert decision.blockers == []
    assert [(c.id, c.needs_trials, c.base_needs_trials) for c in decision.unconfirmed] == [
        ("a", None, BASE_TRIALS)
    ]


def test_a_case_shown_in_a_base_trial_is_not_new() -> None:
    base = runs({"a": [True, False, False]})
    new = runs({"a": [True] * 6})
    assert decide_blockers(base, new, ["a"], deterministic=False).blockers == []


def test_scripted_runs_repeat_exactly_so_one_trial_decides() -> None:
    decision = decide_blockers(runs({"a": [False]}), runs({"a": [True]}), ["a"], deterministic=True)
    assert [b.id for b in decision.blockers] == ["a"] and decision.rule.confirm_trials == 1


def test_unavailable_with_a_sensitive_floor_must_reproduce_too() -> None:
    ok = make_row("u", gold="logic", floor="sensitive", model="logic")
    down = make_row(
        "u", gold="logic", floor="sensitive", model=None, final="sensitive", status="unavailable",
        failure_reason="llm_unavailable", verifier_status=None, flag="na",
    )  # fmt: skip
    clean = [ok.model_copy(update={"trial": t}) for t in range(BASE_TRIALS)]
    once = decide_blockers({"u": clean}, {"u": [down]}, ["u"], deterministic=False)
    assert [c.kind for c in once.unconfirmed] == ["newly_unavailable_sensitive_floor"]
    again = [down.model_copy(update={"trial": t}) for t in range(confirm_trials(1))]
    assert [
        b.kind for b in decide_blockers({"u": clean}, {"u": again}, ["u"], deterministic=False).blockers
    ] == ["newly_unavailable_sensitive_floor"]


def _simulate(rng: random.Random, cases: int, flip: float, regressed: set[int]) -> tuple[set[str], set[str]]:
    """One comparison with confirmation.

    Every case flips at `flip`; `regressed` ones are now under-classified in 1 - flip of trials.
    Returns the ids that block and the candidates.
    """
    ids = [f"s-{i:03d}" for i in range(cases)]
    base = {i: [sensitive(i, rng.random() < flip, t) for t in range(BASE_TRIALS)] for i in ids}

    def draw(i: str, trial: int) -> CaseRow:
        p = 1 - flip if int(i[2:]) in regressed else flip
        return sensitive(i, rng.random() < p, trial)

    new = {i: [draw(i, 0)] for i in ids}
    first = decide_blockers(base, new, ids, deterministic=False)
    for c in first.unconfirmed:
        new[c.id] += [draw(c.id, t) for t in range(1, first.rule.confirm_trials)]
    blocked = {b.id for b in decide_blockers(base, new, ids, deterministic=False).blockers}
    return blocked, {c.id for c in first.unconfirmed} | {b.id for b in first.blockers}


@pytest.mark.slow  # a simulation of the rule's error rates
def test_the_rule_false_alarms_under_its_bound_and_catches_a_regressed_case_by_simulation() -> None:
    """100 sensitive cases flipping at the tolerated rate, nothing changed.

    A blocker in at most BLOCKER_ALPHA of 600 comparisons (+ 2 standard errors). One regressed case
    (now shown in 90% of runs): once it is a candidate, blocked with CONFIRM_POWER (at least 80% of
    them); overall about 0.9 x 0.9^3 x that, since it must show in the first trial and in no base
    trial.
    """
    rng = random.Random(22)
    null = [bool(_simulate(rng, 100, FLIP_TOLERANCE, set())[0]) for _ in range(600)]
    assert sum(null) / len(null) <= BLOCKER_ALPHA + 2 * (BLOCKER_ALPHA * (1 - BLOCKER_ALPHA) / 600) ** 0.5
    runs_ = [_simulate(rng, 100, FLIP_TOLERANCE, {7}) for _ in range(400)]
    caught = ["s-007" in blocked for blocked, candidates in runs_ if "s-007" in candidates]
    assert sum(caught) / len(caught) >= 0.80
    assert 0.5 <= sum("s-007" in blocked for blocked, _ in runs_) / len(runs_) <= 0.8
