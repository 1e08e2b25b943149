"""`graft-eval rescan` and the `rescanned_cases` asset: the current secret rules over stored cases.

The cases with secrets are written straight through the store, bypassing redaction, as an
export with older rules would have left them. Every secret is made up and built at run time.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import dagster as dg
import pytest

from graft_eval_pipeline.cli import main
from graft_eval_pipeline.defs.assets.export import rescanned_cases
from graft_eval_pipeline.defs.checks import RESCAN_CHECK
from graft_eval_pipeline.defs.io_manager import SealedIOManager
from graft_eval_pipeline.defs.resources import CaseSetsResource, GitHubResource
from graft_eval_pipeline.evalset.export.redact import RedactOptions, redact_inputs, redact_text, secret_counts
from graft_eval_pipeline.evalset.export.rescan import rescan_set
from graft_eval_pipeline.evalset.sets.case_schema import PilotSource, Redaction
from graft_eval_pipeline.evalset.sets.crypto import generate_key, parse_key
from graft_eval_pipeline.evalset.sets.paths import SYNTHETIC_DIR
from graft_eval_pipeline.evalset.sets.store import CaseSet, list_case_ids, open_set, read_case, write_case
from graft_eval_pipeline.secrets.rules import secret_kinds
from graft_eval_pipeline_tests.builders import (
    copy_synthetic,
    make_file,
    make_inputs,
    make_label,
    make_pilot_case,
    make_pilot_set,
    pilot_source,
)

DATA = Path(__file__).parents[1] / "secrets" / "data"
TITLE = "Rotate the billing webhook TITLEMARK-7c2"
GITLAB = "glpat-" + "Ab3dEf6hIj9kLm2nOp5q"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
DB_PASSWORD = "Vq8rT2mXk9Lp"
SET_ID = "pilot-acme"
OLD, CLEAN = f"{SET_ID}--shop-demo-101", f"{SET_ID}--shop-demo-102"


def old_format_set(root: Path, key: bytes) -> CaseSet:
    """Two pilot cases: one with three secrets today's rules find, one with none.

    Two pilot cases: 101 holds three secrets today's rules find (and had one redaction recorded by
    its export), 102 holds none.
    """
    cs = make_pilot_set(root / SET_ID, key=key)
    patch = (
        "@@ -1,2 +1,3 @@\n"
        " import stripe\n"
        f'-stripe.api_key = "[REDACTED:assignment]"\n'
        f'+const key = "{STRIPE}"\n'
        f"+DATABASE_URL=postgres://app:{DB_PASSWORD}@db.internal:5432/app"
    )
    leaky = make_inputs(
        [make_file("src/billing/webhook.ts", patch=patch, additions=2, deletions=1)],
        pr={"number": 101, "title": TITLE, "body": f"CI token for the mirror: {GITLAB}"},
    )
    source = pilot_source(SET_ID, 101, redactions=[Redaction(kind="assignment", count=1)])
    write_case(cs, make_pilot_case(SET_ID, 101, inputs=leaky, source=source))
    clean = make_inputs(pr={"number": 102, "title": TITLE, "body": "token = peek_token(parser)"})
    write_case(cs, make_pilot_case(SET_ID, 102, inputs=clean))
    return cs


def case_bytes(cs: CaseSet) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((cs.dir / "cases").iterdir())}


@pytest.fixture
def pilot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CaseSet:
    key = generate_key()
    monkeypatch.setenv("GRAFT_EVAL_KEY", key)
    return old_format_set(tmp_path, parse_key(key))


# --- the scan and its report -------------------------------------------------------------------


def test_rescan_finds_what_older_rules_missed_by_kind_and_case_and_rewrites_nothing(pilot: CaseSet) -> None:
    before = case_bytes(pilot)
    result = rescan_set(pilot)
    assert result.scanned == 2 and not result.applied
    assert [a.case_id for a in result.affected] == [OLD]
    assert result.found_by_kind == {"gitlab_token": 1, "stripe_key": 1, "url_password": 1}
    assert result.cases_by_kind == {"gitlab_token": [OLD], "stripe_key": [OLD], "url_password": [OLD]}
    assert case_bytes(pilot) == before


def test_cli_rescan_reports_kinds_and_ids_only_and_exits_1_when_secrets_remain(
    pilot: CaseSet, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rescan", "--set", str(pilot.dir)]) == 1
    out, err = capsys.readouterr()
    assert "2 case(s) scanned, 1 with secrets" in out
    assert f"  stripe_key: 1 in 1 case(s): {OLD}" in out and "--apply" in out
    assert "1 case(s) hold secrets" in err
    for content in (TITLE, GITLAB, STRIPE, DB_PASSWORD, "src/billing/webhook.ts"):
        assert content not in out + err


def test_cli_rescan_apply_rewrites_sealed_records_the_counts_and_is_idempotent(
    pilot: CaseSet, capsys: pytest.CaptureFixture[str]
) -> None:
    label = make_label("alice", risk="logic")
    stored = read_case(pilot, OLD)
    write_case(pilot, stored.model_copy(update={"labels": [label]}))
    clean_before = (pilot.dir / "cases" / f"{CLEAN}.case.enc").read_bytes()

    assert main(["rescan", "--set", str(pilot.dir), "--apply"]) == 0
    assert "applied: rewrote 1 case(s)" in capsys.readouterr().out
    case = read_case(pilot, OLD)
    text = case.inputs.model_dump_json()
    assert GITLAB not in text and STRIPE not in text and DB_PASSWORD not in text
    assert "[REDACTED:gitlab_token]" in case.inputs.pr.body
    patch = case.inputs.files[0].patch or ""
    assert patch.count("\n") == 4 and [line[:1] for line in patch.split("\n")[1:]] == [" ", "-", "+", "+"]
    assert isinstance(case.source, PilotSource)
    assert [r.to_json_dict() for r in case.source.redactions] == [
        {"kind": "assignment", "count": 1},
        {"kind": "gitlab_token", "count": 1},
        {"kind": "stripe_key", "count": 1},
        {"kind": "url_password", "count": 1},
    ]
    assert case.labels == [label] and case.inputs.pr.title == TITLE  # nothing else changed
    raw = (pilot.dir / "cases" / f"{OLD}.case.enc").read_bytes()
    assert b"REDACTED" not in raw and b"glpat" not in raw  # sealed on disk
    assert (pilot.dir / "cases" / f"{CLEAN}.case.enc").read_bytes() == clean_before

    after_first = case_bytes(pilot)
    assert main(["rescan", "--set", str(pilot.dir), "--apply"]) == 0
    assert "2 case(s) scanned, 0 with secrets" in capsys.readouterr().out
    assert case_bytes(pilot) == after_first  # a second --apply finds nothing and writes nothing
    assert main(["rescan", "--set", str(pilot.dir)]) == 0
    assert "2 case(s) scanned, 0 with secrets" in capsys.readouterr().out


def test_apply_keeps_a_label_saved_between_the_scan_and_the_rewrite(pilot: CaseSet) -> None:
    label = make_label("bob", risk="sensitive")

    def label_meanwhile(done: int, total: int) -> None:
        if done == total:  # every case scanned, nothing rewritten yet
            write_case(pilot, read_case(pilot, OLD).model_copy(update={"labels": [label]}))

    rescan_set(pilot, apply=True, progress=label_meanwhile)
    case = read_case(pilot, OLD)
    assert case.labels == [label] and STRIPE not in (case.inputs.files[0].patch or "")


def test_rescan_apply_refuses_the_synthetic_set_but_may_scan_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthetic = copy_synthetic(tmp_path)
    before = case_bytes(open_set(synthetic, None))
    assert main(["rescan", "--set", str(synthetic), "--apply"]) == 2
    assert "not a pilot set" in capsys.readouterr().err
    assert main(["rescan", "--set", str(synthetic)]) == 0
    assert "0 with secrets" in capsys.readouterr().out
    assert case_bytes(open_set(synthetic, None)) == before


def test_rescan_without_the_key_or_of_a_missing_set_exits_2(
    pilot: CaseSet, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["rescan", "--set", str(tmp_path / "nowhere")]) == 2
    monkeypatch.delenv("GRAFT_EVAL_KEY")
    assert main(["rescan", "--set", str(pilot.dir)]) == 2
    assert "GRAFT_EVAL_KEY" in capsys.readouterr().err


# --- the rules behind it ------------------------------------------------------------------------


def _corpus_lines() -> list[str]:
    lines = (DATA / "true_positives.jsonl").read_text().splitlines()
    return [str(json.loads(line)["line"]) for line in lines if line.strip()]


def test_secret_kinds_counts_what_redaction_counts_and_redacted_text_is_not_found_again() -> None:
    """Over the committed corpus, as plain text and as an added patch line.

    The kinds a rescan or the live check reports equal the redaction's counts, and a redacted text
    is clean (so `--apply` is idempotent).
    """
    checked = 0
    for line in _corpus_lines():
        for text, is_patch in ((line, False), ("@@ -0,0 +1 @@\n+" + line.replace("\n", "\n+"), True)):
            counts: Counter[str] = Counter()
            redacted = redact_text(text, RedactOptions(), counts, is_patch=is_patch)
            assert secret_kinds(text, is_patch=is_patch) == counts
            assert secret_kinds(redacted, is_patch=is_patch) == Counter(), counts
            checked += bool(counts)
    assert checked >= 600  # nearly every entry, in both forms, has something to count


# --- Dagster -------------------------------------------------------------------------------------


def resources(sets: CaseSetsResource) -> dict[str, object]:
    return {"case_sets": sets, "github": GitHubResource(), "io_manager": SealedIOManager(sets=sets)}


def materialize_rescan(cs: CaseSet, instance: dg.DagsterInstance, apply: bool) -> dg.ExecuteInProcessResult:
    sets = CaseSetsResource(
        eval_dir=str(cs.dir.parent), synthetic_dir=str(SYNTHETIC_DIR), eval_key=dg.EnvVar("GRAFT_EVAL_KEY")
    )
    return dg.materialize(
        [rescanned_cases],
        partition_key=cs.set_id,
        instance=instance,
        resources=resources(sets),
        run_config={"ops": {"rescanned_cases": {"config": {"apply": apply}}}},
        raise_on_error=False,
    )


def stored_metadata(instance: dg.DagsterInstance) -> list[dict[str, object]]:
    """Every materialization of the asset the instance recorded, oldest first, as plain values."""
    records = instance.fetch_materializations(dg.AssetKey("rescanned_cases"), limit=10).records
    return [
        {k: v.value for k, v in r.asset_materialization.metadata.items()}  # type: ignore[union-attr]
        for r in reversed(records)
    ]


def test_rescanned_cases_asset_reports_counts_by_kind_then_applies(pilot: CaseSet) -> None:
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("case_set", [SET_ID])
        before = case_bytes(pilot)
        first = materialize_rescan(pilot, instance, apply=False)
        assert first.success and case_bytes(pilot) == before
        assert {e.check_name: e.passed for e in first.get_asset_check_evaluations()} == {RESCAN_CHECK: False}

        second = materialize_rescan(pilot, instance, apply=True)
        assert second.success
        assert {e.check_name: e.passed for e in second.get_asset_check_evaluations()} == {RESCAN_CHECK: True}
        third = materialize_rescan(pilot, instance, apply=False)
        assert third.success

        scan, applied, again = stored_metadata(instance)
    assert scan["found_stripe_key"] == 1 and scan["found_gitlab_token"] == 1 and scan["found_total"] == 3
    assert scan["affected_cases"] == 1 and scan["scanned"] == 2 and scan["applied"] is False
    assert scan["cases_by_kind"] == {"gitlab_token": [OLD], "stripe_key": [OLD], "url_password": [OLD]}
    assert applied["applied"] is True and applied["found_url_password"] == 1
    assert again["found_total"] == 0 and again["affected_cases"] == 0
    assert not any(k.startswith("found_") and k != "found_total" for k in again)
    assert STRIPE not in (read_case(pilot, OLD).inputs.files[0].patch or "")
    shown = json.dumps([scan, applied, again], default=str)
    for content in (TITLE, GITLAB, STRIPE, DB_PASSWORD, "webhook"):
        assert content not in shown
    assert sorted(list_case_ids(pilot)) == [OLD, CLEAN]


def test_rescanned_cases_asset_refuses_the_synthetic_partition(tmp_path: Path) -> None:
    synthetic = open_set(copy_synthetic(tmp_path), None)
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("case_set", ["synthetic"])
        sets = CaseSetsResource(eval_dir=str(tmp_path / "pilots"), synthetic_dir=str(synthetic.dir))
        result = dg.materialize(
            [rescanned_cases],
            partition_key="synthetic",
            instance=instance,
            resources={
                "case_sets": sets,
                "github": GitHubResource(),
                "io_manager": SealedIOManager(sets=sets),
            },
            raise_on_error=False,
        )
    assert not result.success
    failure = next(e for e in result.all_events if e.is_step_failure)
    error = failure.step_failure_data.error
    assert error is not None and "not a pilot set" in error.to_string()


# --- what the newer rules find: a gitleaks-only kind and a token next to a keyword ----------------
SONAR = "squ_" + "4aae13c154b919634099d1a99bb916a5d9a5668f"  # made up; gitleaks' sonar-api-token
NEAR = "Qm9vdF4xZk3pL8sT2vW7yB5nR0cX"  # made up: a token of no known format


def test_rescan_reports_a_gitleaks_only_kind_and_a_high_entropy_token_by_kind_and_apply_rewrites_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key = generate_key()
    monkeypatch.setenv("GRAFT_EVAL_KEY", key)
    cs = make_pilot_set(tmp_path / SET_ID, key=parse_key(key))
    added = [f"sonar.token={SONAR}", "# staging API token (rotate monthly)", NEAR]
    patch = "@@ -1,1 +1,4 @@\n import os\n" + "\n".join("+" + line for line in added)
    leaky = make_inputs([make_file("ci/sonar.properties", patch=patch, additions=3)], pr={"number": 101})
    write_case(cs, make_pilot_case(SET_ID, 101, inputs=leaky))

    result = rescan_set(cs)
    assert result.found_by_kind == {"gl_sonar_api_token": 1, "high_entropy": 1}
    assert main(["rescan", "--set", str(cs.dir)]) == 1
    out = capsys.readouterr().out
    assert f"  gl_sonar_api_token: 1 in 1 case(s): {OLD}" in out
    assert f"  high_entropy: 1 in 1 case(s): {OLD}" in out
    assert SONAR not in out and NEAR not in out

    assert main(["rescan", "--set", str(cs.dir), "--apply"]) == 0
    rewritten = read_case(cs, OLD).inputs.files[0].patch or ""
    assert SONAR not in rewritten and NEAR not in rewritten
    assert rewritten.split("\n")[2:] == [
        "+sonar.token=[REDACTED:gl_sonar_api_token]",
        "+# staging API token (rotate monthly)",
        "+[REDACTED:high_entropy]",
    ]
    capsys.readouterr()
    assert main(["rescan", "--set", str(cs.dir)]) == 0  # nothing left to find


def test_a_rescan_counts_what_redacting_the_whole_case_would_report() -> None:
    """`secret_counts` (one prefilter pass over every field) against `redact_inputs` on cases.

    Cases built from the corpus four lines at a time (title, body, two patches) and a look-alike
    line in a third patch: the counts are the ones redaction would record.
    """
    lines = _corpus_lines()
    lookalikes = [
        str(json.loads(line)["line"])
        for line in (DATA / "lookalikes.jsonl").read_text().splitlines()
        if line.strip()
    ]
    with_findings = 0
    for at in range(0, len(lines) - 3, 4):
        title, body, first, second = lines[at : at + 4]
        patches = [first, second, lookalikes[at % len(lookalikes)]]
        files = [
            make_file(path=f"src/f{i}.py", patch="@@ -0,0 +1 @@\n+" + p.replace("\n", "\n+"))
            for i, p in enumerate(patches)
        ]
        inputs = make_inputs(files, pr={"title": title.replace("\n", " "), "body": body})
        expected = redact_inputs(inputs, RedactOptions())[1]
        assert secret_counts(inputs) == expected
        with_findings += bool(expected)
    assert with_findings >= len(lines) // 4 - 2
