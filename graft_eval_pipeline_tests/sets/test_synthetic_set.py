"""The synthetic seed set (spec section 9, T16): U-SYN-1 .. U-SYN-6.

U-SYN-4..6 run every case through `generate_card` with its scripted fake model, so a change
to the risk floor, the escalation rule or the risk combining shows up here case by case.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
from dataclasses import dataclass
from typing import get_args

import pytest

from graft_eval_pipeline.card import (
    CardResult,
    FakeScript,
    GenerateOptions,
    Models,
    generate_card,
    llm_for_case,
)
from graft_eval_pipeline.card.floor import FLOOR_RULE_IDS
from graft_eval_pipeline.card.models import FakeFailure
from graft_eval_pipeline.card.result import FloorRuleId
from graft_eval_pipeline.evalset.export.redact import RedactOptions, redact_inputs
from graft_eval_pipeline.evalset.sets.case_schema import EvalCase, gold
from graft_eval_pipeline.evalset.sets.paths import SYNTHETIC_DIR
from graft_eval_pipeline.evalset.sets.store import CaseSet, list_case_ids, open_set, read_cases

GENERATOR = SYNTHETIC_DIR / "tools" / "generate_cases.py"
REPO = "fictional-org/shop-demo"


T, L, S = "trivial", "logic", "sensitive"
# Which writer the floor selects (spec 9's "fast"/"strong"), and whether the fast one escalates.
WRITER_CALLS = {
    "fast": ("writer:fast",),
    "fast>strong": ("writer:fast", "writerEscalated:strong"),
    "strong": ("writer:strong",),
    "none": (),
}


@dataclass(frozen=True)
class Row:
    """One row of the spec section 9 table."""

    floor: str
    rules: frozenset[str]
    writer: str
    gold: tuple[str, tuple[str, ...], bool]  # risk, out-of-scope paths, should-flag
    final: str
    status: str
    failure: str | None
    verifier: str | None

    @property
    def calls(self) -> tuple[str, ...]:
        """Model calls in order: the writer(s), then the verifier on every available card."""
        verify = ("verifier:strong",) if self.status == "ok" else ()
        return WRITER_CALLS[self.writer] + verify


def row(
    floor: str,
    rules: str,
    writer: str,
    gold: str,
    final: str,
    *,
    oos: tuple[str, ...] = (),
    flag: bool = False,
    failure: str | None = None,
    verifier: str | None = "agree",
) -> Row:
    return Row(
        floor=floor,
        rules=frozenset(rules.split()),
        writer=writer,
        gold=(gold, oos, flag),
        final=final,
        status="ok" if failure is None else "unavailable",
        failure=failure,
        verifier=None if failure is not None else verifier,
    )


# Spec section 9, exactly: floor (rules), writer, gold risk / oos / flag, final, status.
TABLE: dict[str, Row] = {
    "syn-001-docs-typo": row(T, "", "fast", T, T),
    "syn-002-comment-typo": row(T, "", "fast", T, T),
    "syn-003-discount-logic": row(T, "", "fast>strong", L, L),
    "syn-004-ci-workflow": row(S, "ci_config", "strong", S, S),
    "syn-005-policy-file": row(S, "policy_file", "strong", S, S),
    "syn-006-dependency-add": row(S, "dependency_manifest", "strong", S, S),
    "syn-007-lockfile-bump": row(S, "dependency_manifest", "strong", S, S),
    "syn-008-terraform": row(S, "infra", "strong", S, S),
    "syn-009-auth-session": row(S, "auth_secrets", "strong", S, S),
    "syn-010-migration": row(S, "migration", "strong", S, S),
    "syn-011-configured-path": row(S, "configured_path", "strong", S, S),
    "syn-012-test-deleted": row(S, "test_deleted", "strong", S, S),
    "syn-013-test-shrunk": row(L, "test_shrunk", "strong", L, L),
    "syn-014-binary": row(L, "binary", "strong", L, L),
    "syn-015-size-large": row(L, "size_large", "strong", L, L),
    "syn-016-too-large": row(S, "size_huge listing_truncated", "none", S, S, failure="too_large"),
    "syn-017-truncated-diff": row(L, "size_large partial_view", "strong", L, L),
    "syn-018-listing-truncated": row(S, "size_huge listing_truncated", "strong", S, S),
    "syn-019-injection-body": row(L, "injection_marker", "strong", L, L),
    "syn-020-injection-diff": row(L, "injection_marker", "strong", L, L),
    "syn-021-injection-zero-width": row(L, "injection_marker", "strong", L, L),
    "syn-022-oos-flagged": row(
        T, "", "fast>strong", L, L, oos=("src/config/defaults.ts",), flag=True, verifier="disagree"
    ),
    "syn-023-oos-verifier-only": row(T, "", "fast>strong", L, L, oos=("src/logging/format.ts",)),
    "syn-024-rename-out-of-auth": row(S, "auth_secrets", "strong", S, S),
    "syn-025-test-renamed-away": row(S, "test_deleted", "strong", S, S),
    "syn-026-description-lies": row(T, "", "fast", S, S, flag=True, verifier="disagree"),
    "syn-027-writer-down": row(T, "", "fast", T, L, failure="llm_unavailable"),
    "syn-028-verifier-timeout": row(T, "", "fast>strong", L, L, verifier="error"),
    "syn-029-pure-rename": row(L, "partial_view", "strong", T, L),
    "syn-030-soft-injection": row(T, "", "fast>strong", L, L),
}

INJECTION_CASES = {
    "syn-019-injection-body",
    "syn-020-injection-diff",
    "syn-021-injection-zero-width",
    "syn-030-soft-injection",
}


@pytest.fixture(scope="module")
def synthetic_set() -> CaseSet:
    return open_set(SYNTHETIC_DIR, None)


@pytest.fixture(scope="module")
def cases(synthetic_set: CaseSet) -> list[EvalCase]:
    return read_cases(synthetic_set)


@pytest.fixture(scope="module")
def results(cases: list[EvalCase]) -> dict[str, CardResult]:
    """Every case through generate_card with its scripted model, as the harness runs it."""

    async def run_all() -> dict[str, CardResult]:
        out = {}
        for case in cases:
            options = GenerateOptions(extra_sensitive_globs=tuple(case.floor_config.extra_sensitive_globs))
            out[case.id] = await generate_card(case.inputs, llm_for_case(case.fake_llm), options)
        return out

    return asyncio.run(run_all())


def has_failure(script: FakeScript | None) -> bool:
    entries = [] if script is None else [script.writer, script.writer_escalated, script.verifier]
    return any(isinstance(entry, FakeFailure) for entry in entries)


def test_U_SYN_1_thirty_cases_with_one_synthetic_label_each(
    synthetic_set: CaseSet, cases: list[EvalCase]
) -> None:
    assert synthetic_set.meta.set_id == "synthetic" and synthetic_set.meta.kind == "synthetic"
    assert not synthetic_set.meta.encrypted and synthetic_set.meta.key_id is None
    assert synthetic_set.meta.consent_ref is None
    ids = list_case_ids(synthetic_set)
    assert ids == sorted(TABLE) and len(set(ids)) == 30
    assert [i[:8] for i in ids] == [f"syn-{n:03d}-" for n in range(1, 31)]
    files = sorted(p.name for p in (SYNTHETIC_DIR / "cases").iterdir())
    assert files == [f"{i}.case.json" for i in ids]
    for case in cases:
        assert case.source.kind == "synthetic"
        assert [(lbl.labeler, lbl.guide_version) for lbl in case.labels] == [("graft-synthetic", "lg-1")]
        assert case.adjudicated is None


def test_U_SYN_1_gold_labels_match_the_table(cases: list[EvalCase]) -> None:
    for case in cases:
        label = gold(case)
        assert label is not None
        assert (label.risk, tuple(label.out_of_scope), label.should_flag) == TABLE[case.id].gold, case.id
        assert label.goal and label.key_behavior_changes, case.id


def test_U_SYN_1_pr_numbers_and_injection_tags(cases: list[EvalCase]) -> None:
    assert [c.inputs.pr.number for c in cases] == list(range(101, 131))
    assert {c.id for c in cases if "injection" in c.tags} == INJECTION_CASES


def test_U_SYN_2_no_case_matches_a_secret_pattern(cases: list[EvalCase]) -> None:
    for case in cases:
        redacted, redactions = redact_inputs(case.inputs, RedactOptions(emails=True))
        assert redactions == [], case.id
        assert redacted == case.inputs, case.id


def test_U_SYN_3_every_case_is_in_the_fictional_repository(cases: list[EvalCase]) -> None:
    assert {c.inputs.repository_full_name for c in cases} == {REPO}


def test_U_SYN_4_scripts_without_failures_give_ok_cards_and_a_verdict(
    cases: list[EvalCase], results: dict[str, CardResult]
) -> None:
    """Scripts are valid model output; syn-016 makes no call (too large), so it is left out."""
    checked = 0
    for case in cases:
        if has_failure(case.fake_llm) or case.inputs.too_large:
            continue
        result = results[case.id]
        assert result.status == "ok", case.id
        assert result.verifier is not None and result.verifier.status != "error", case.id
        checked += 1
    assert checked == 27


def test_U_SYN_5_floor_rules_of_the_run_cover_every_rule(results: dict[str, CardResult]) -> None:
    fired = {rule for result in results.values() for rule in result.floor_rules}
    assert fired == set(get_args(FloorRuleId)) == set(FLOOR_RULE_IDS)
    assert len(fired) == 15


@pytest.mark.parametrize("case_id", sorted(TABLE))
def test_U_SYN_6_floor_and_final_equal_the_table(case_id: str, results: dict[str, CardResult]) -> None:
    expected, got = TABLE[case_id], results[case_id]
    assert (got.risk.floor, set(got.floor_rules)) == (expected.floor, set(expected.rules))
    assert len(got.floor_rules) == len(set(got.floor_rules))
    assert got.risk.final == expected.final
    assert (got.status, got.failure_reason) == (expected.status, expected.failure)
    assert (got.verifier.status if got.verifier else None) == expected.verifier


@pytest.mark.parametrize("case_id", sorted(TABLE))
def test_U_SYN_6_the_floor_selects_the_writer_of_the_table(
    case_id: str, results: dict[str, CardResult]
) -> None:
    tier = {Models().fast: "fast", Models().strong: "strong"}
    calls = tuple(f"{c.purpose}:{tier.get(c.model, c.model)}" for c in results[case_id].calls)
    assert calls == TABLE[case_id].calls


def test_committed_cases_are_what_the_generator_writes() -> None:
    spec = importlib.util.spec_from_file_location("generate_cases", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = {p.name: p.read_text(encoding="utf-8") for p in (SYNTHETIC_DIR / "cases").iterdir()}
    assert committed == module.render_cases()


def test_patches_are_unified_diffs_whose_counts_match(cases: list[EvalCase]) -> None:
    header = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
    for case in cases:
        for file in case.inputs.files:
            if file.patch is None:
                continue
            old = new = plus = minus = 0
            want_old = want_new = 0
            for line in file.patch.split("\n"):
                match = header.match(line)
                if match:
                    assert (old, new) == (want_old, want_new), (case.id, file.path)
                    old = new = 0
                    want_old, want_new = int(match.group(2) or 1), int(match.group(4) or 1)
                    continue
                assert line[:1] in (" ", "+", "-"), (case.id, file.path)
                old += line[0] in " -"
                new += line[0] in " +"
                plus += line[0] == "+"
                minus += line[0] == "-"
            assert (old, new) == (want_old, want_new), (case.id, file.path)
            assert (plus, minus) == (file.additions, file.deletions), (case.id, file.path)


def test_pr_totals_add_up_and_the_special_sizes_hold(cases: list[EvalCase]) -> None:
    by_id = {c.id: c for c in cases}
    for case in cases:
        pr, files = case.inputs.pr, case.inputs.files
        sums = (sum(f.additions for f in files), sum(f.deletions for f in files), len(files))
        if case.inputs.listing_truncated and not case.inputs.too_large:
            totals = (pr.additions, pr.deletions, pr.changed_files)
            assert all(s <= t for s, t in zip(sums, totals, strict=True)) and sums != totals, case.id
        else:
            assert sums == (pr.additions, pr.deletions, pr.changed_files), case.id
    big = by_id["syn-017-truncated-diff"].inputs.files
    assert [len(f.patch or "") for f in big] == [40_000] and big[0].additions == 1_200
    huge = by_id["syn-016-too-large"].inputs
    assert (huge.too_large, huge.pr.additions, huge.pr.deletions, len(huge.files)) == (
        True,
        18_000,
        7_000,
        40,
    )
    listed = by_id["syn-018-listing-truncated"].inputs
    assert (listed.listing_truncated, len(listed.files), listed.pr.changed_files) == (True, 45, 60)
