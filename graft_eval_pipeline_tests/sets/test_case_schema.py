"""Case format (spec 6.1, T2): U-CASE-1 .. U-CASE-9 and the one-line format errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from graft_eval_pipeline.evalset.report.json_schemas import render_schemas
from graft_eval_pipeline.evalset.sets.case_schema import (
    CaseFormatError,
    EvalCase,
    SetMeta,
    case_hash,
    dump_case,
    gold,
    parse_case,
)
from graft_eval_pipeline.evalset.sets.paths import SCHEMA_DIR, SYNTHETIC_DIR
from graft_eval_pipeline_tests.builders import (
    NOW,
    make_case,
    make_file,
    make_inputs,
    make_label,
    make_pilot_case,
    pilot_source,
)

CASE_SCHEMA = SCHEMA_DIR / "eval-case.v1.schema.json"
REPORT_SCHEMA = SCHEMA_DIR / "eval-report.v2.schema.json"

# The example of spec 6.1 (line breaks between tokens aside, verbatim).
SPEC_EXAMPLE = r"""
{
  "schemaVersion": 1,
  "id": "syn-001-docs-typo",
  "source": { "kind": "synthetic", "author": "graft-team", "createdAt": "2026-10-15" },
  "tags": ["docs", "trivial"],
  "floorConfig": { "extraSensitiveGlobs": [] },
  "inputs": {
    "repositoryFullName": "fictional-org/shop-demo",
    "pr": { "number": 101, "title": "Fix typo in README",
      "body": "Fixes #100.\n\nCorrects 'recieve' in the setup section.",
      "additions": 1, "deletions": 1, "changedFiles": 1 },
    "issue": { "number": 100, "title": "Typo in README setup section",
      "body": "'recieve' should be 'receive'." },
    "files": [
      { "path": "README.md", "previousPath": null, "status": "modified", "additions": 1, "deletions": 1,
        "patch": "@@ -12,3 +12,3 @@\n ## Setup\n-You will recieve a token by e-mail.\n+You will receive a token by e-mail.\n " }
    ],
    "listingTruncated": false,
    "tooLarge": false
  },
  "labels": [
    { "labeler": "graft-synthetic", "labeledAt": "2026-10-15T00:00:00Z", "guideVersion": "lg-1",
      "risk": "trivial",
      "outOfScope": [], "goal": "Fixes a spelling mistake in the README setup section.",
      "keyBehaviorChanges": ["The README says 'receive' instead of 'recieve'."], "shouldFlag": false,
      "confidence": "high", "notes": "" }
  ],
  "adjudicated": null,
  "fakeLlm": {
    "writer": { "json": { "goal": "Fix a spelling mistake in the README setup section.",
      "behavior_changes": ["The README setup section spells 'receive' correctly."], "risk_class": "trivial",
      "risk_reason": "Documentation only.", "out_of_scope_edits": [], "instructions_in_data": false } },
    "verifier": "agree"
  }
}
"""  # noqa: E501 (the spec's patch string cannot be wrapped)


def synthetic_files() -> list[Path]:
    return sorted((SYNTHETIC_DIR / "cases").glob("*.case.json"))


def rejected(build: Any) -> str:
    """Run a builder that must fail validation; returns the error text."""
    with pytest.raises(ValidationError) as info:
        build()
    return str(info.value)


def test_U_CASE_1_every_synthetic_case_parses() -> None:
    files = synthetic_files()
    assert len(files) == 30
    for path in files:
        case = parse_case(path.read_text(encoding="utf-8"), path.name)
        assert path.name == f"{case.id}.case.json"


def test_U_CASE_1_spec_example_parses() -> None:
    case = parse_case(SPEC_EXAMPLE, "example.case.json")
    assert case.id == "syn-001-docs-typo"
    assert case.fake_llm is not None and case.fake_llm.verifier == "agree"
    label = gold(case)
    assert label is not None and label.risk == "trivial"


def test_U_CASE_2_pilot_fake_llm_and_id_prefixes_rejected() -> None:
    make_pilot_case()  # the valid control
    assert "fakeLlm must be null" in rejected(lambda: make_pilot_case(fake_llm={"verifier": "agree"}))
    assert "must start with 'syn-'" in rejected(lambda: make_case("case-001"))
    assert "must start with 'pilot-acme--'" in rejected(
        lambda: make_case("pilot-other--shop-demo-412", source=pilot_source("pilot-acme", 412), labels=[])
    )


def test_U_CASE_3_out_of_scope_must_be_listed_sorted_and_unique() -> None:
    files = [make_file("src/a.ts"), make_file("src/b.ts")]
    make_case(inputs=make_inputs(files), labels=[make_label(out_of_scope=["src/a.ts", "src/b.ts"])])
    assert "not in inputs.files" in rejected(
        lambda: make_case(inputs=make_inputs(files), labels=[make_label(out_of_scope=["src/c.ts"])])
    )
    assert "sorted and unique" in rejected(lambda: make_label(out_of_scope=["src/b.ts", "src/a.ts"]))
    assert "sorted and unique" in rejected(lambda: make_label(out_of_scope=["src/a.ts", "src/a.ts"]))


def test_U_CASE_3_adjudicated_out_of_scope_is_checked_too() -> None:
    assert "not in inputs.files" in rejected(
        lambda: make_case(adjudicated=make_label("carol", out_of_scope=["src/elsewhere.ts"]))
    )


def test_U_CASE_4_labelers_unique_and_never_an_email() -> None:
    assert "unique labelers" in rejected(lambda: make_case(labels=[make_label("alice"), make_label("alice")]))
    assert "pattern" in rejected(lambda: make_label("a@b.c"))


def test_U_CASE_5_pilot_repository_and_pr_number_must_match_inputs() -> None:
    assert "repositoryFullName must equal source.repository" in rejected(
        lambda: make_pilot_case(source=pilot_source("pilot-acme", 412, repository="acme/api"))
    )
    assert "pr.number must equal source.prNumber" in rejected(
        lambda: make_pilot_case(inputs=make_inputs(pr={"number": 413}))
    )


def test_U_CASE_6_committed_schemas_equal_generated_byte_for_byte() -> None:
    rendered = render_schemas()
    committed = {p.name: p.read_text(encoding="utf-8") for p in SCHEMA_DIR.glob("*.json")}
    assert "eval-case.v1.schema.json" in rendered
    assert set(committed) == set(rendered), "run `graft-eval schema --write` and commit eval/schema/"
    for name, text in rendered.items():
        assert committed[name] == text, f"eval/schema/{name} is stale: run `graft-eval schema --write`"


def test_U_CASE_6_case_schema_is_draft_2020_12_with_the_spec_id() -> None:
    schema = json.loads(CASE_SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == "https://graft.invalid/schema/eval-case.v1.json"
    assert "outOfScope paths are sorted" in schema["description"]


def test_U_CASE_7_gold_rules() -> None:
    alice = make_label("alice", risk="logic", goal="One wording.")
    bob = make_label("bob", risk="logic", goal="Another wording entirely.")
    assert gold(make_case(labels=[alice, bob])) == alice
    judge = make_label("carol", risk="sensitive")
    assert gold(make_case(labels=[alice, make_label("bob", risk="trivial")], adjudicated=judge)) == judge
    assert gold(make_case(labels=[], adjudicated=judge)) == judge
    assert gold(make_case(labels=[alice, make_label("bob", risk="trivial")])) is None
    assert gold(make_case(labels=[alice, bob.model_copy(update={"should_flag": True})])) is None
    files = [make_file("src/a.ts"), make_file("src/b.ts")]
    disagree_oos = make_case(
        inputs=make_inputs(files), labels=[alice, bob.model_copy(update={"out_of_scope": ["src/b.ts"]})]
    )
    assert gold(disagree_oos) is None
    assert gold(make_case(labels=[])) is None


def test_U_CASE_8_case_hash_covers_what_the_engine_sees() -> None:
    base = make_case()
    same = base.model_copy(update={"labels": [make_label("zed", risk="sensitive")], "tags": ["other"]})
    assert case_hash(same) == case_hash(base)
    file = base.inputs.files[0]
    edited_patch = file.model_copy(update={"patch": f"{file.patch} "})
    edited = base.model_copy(update={"inputs": base.inputs.model_copy(update={"files": [edited_patch]})})
    assert case_hash(edited) != case_hash(base)
    globbed = base.model_copy(
        update={"floor_config": base.floor_config.model_copy(update={"extra_sensitive_globs": ["src/**"]})}
    )
    assert case_hash(globbed) != case_hash(base)


def test_U_CASE_9_synthetic_cases_valid_against_committed_case_schema() -> None:
    validator = Draft202012Validator(json.loads(CASE_SCHEMA.read_text(encoding="utf-8")))
    files = synthetic_files()
    assert len(files) == 30
    for path in files:
        errors = [e.message for e in validator.iter_errors(json.loads(path.read_text(encoding="utf-8")))]
        assert errors == [], path.name
    # The validator is not vacuous: a class outside the enum and an unknown field both fail.
    broken = json.loads(files[0].read_text(encoding="utf-8"))
    broken["labels"][0]["risk"] = "medium"
    broken["inputs"]["extra"] = True
    assert len(list(validator.iter_errors(broken))) == 2


def sample_report() -> dict[str, Any]:
    """A report built by the report code over two hand-made rows of the synthetic set."""
    from graft_eval_pipeline.evalset.report.publish import build_report
    from graft_eval_pipeline.evalset.report.thresholds import with_thresholds
    from graft_eval_pipeline.evalset.scoring.metrics import compute_metrics
    from graft_eval_pipeline.evalset.scoring.report_schema import (
        GitInfo,
        ModelPair,
        PromptInfo,
        RunInfo,
        ThresholdResult,
    )
    from graft_eval_pipeline.evalset.scoring.rows import HarnessRun, set_summary
    from graft_eval_pipeline_tests.row_builders import make_row

    meta = SetMeta.model_validate_json((SYNTHETIC_DIR / "set.json").read_text(encoding="utf-8"))
    cases = [parse_case(p.read_text(encoding="utf-8"), p.name) for p in synthetic_files()[:2]]
    rows = [make_row(c.id, gold=label.risk) for c in cases if (label := gold(c)) is not None]
    harness = HarnessRun(
        set=set_summary(meta, cases, rows),
        prompt=PromptInfo(prompt_version="intent-v1", prompt_fingerprint="0" * 64),
        models=ModelPair(fast="claude-haiku-5-5", strong="claude-sonnet-5-5"),
        llm="fake",
        run=RunInfo(complete=True, skipped_budget=0, cached_results=0, duration_ms=12),
        created_at=NOW,
        git=GitInfo(commit=None, dirty=None),
        rows=rows,
    )
    report = build_report(harness, compute_metrics(rows))
    threshold = ThresholdResult(name="underClassificationFinal", value=0.0, limit="max 0", passed=True)
    return with_thresholds(report, [threshold]).to_json_dict()


def test_U_CASE_9_sample_report_valid_against_committed_report_schema() -> None:
    if not REPORT_SCHEMA.exists():
        pytest.skip("eval/schema/eval-report.v2.schema.json is not committed yet (the report lands later)")
    validator = Draft202012Validator(json.loads(REPORT_SCHEMA.read_text(encoding="utf-8")))
    report = sample_report()
    assert [e.message for e in validator.iter_errors(report)] == []
    report["cases"][0]["final"] = "medium"
    assert not validator.is_valid(report)


def test_malformed_case_is_one_line_naming_file_field_and_rule_without_the_value() -> None:
    data = json.loads(SPEC_EXAMPLE)
    data["labels"][0]["risk"] = "hush-hush-value"
    with pytest.raises(CaseFormatError) as info:
        parse_case(json.dumps(data), "syn-001-docs-typo.case.json")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("syn-001-docs-typo.case.json: labels.0.risk: ")
    assert "'trivial', 'logic' or 'sensitive'" in message
    assert "hush-hush-value" not in message


def test_malformed_case_discriminator_value_is_not_echoed() -> None:
    data = json.loads(SPEC_EXAMPLE)
    data["source"]["kind"] = "hush-hush-kind"
    with pytest.raises(CaseFormatError) as info:
        parse_case(json.dumps(data), "x.case.json")
    assert str(info.value) == "x.case.json: source: 'kind' must be one of 'synthetic', 'pilot'"


def test_malformed_case_cross_field_rule_and_json_syntax_are_one_line() -> None:
    data = json.loads(SPEC_EXAMPLE)
    data["labels"][0]["outOfScope"] = ["src/not-listed-secret-name.ts"]
    with pytest.raises(CaseFormatError) as info:
        parse_case(json.dumps(data), "x.case.json")
    message = str(info.value)
    assert message.startswith("x.case.json: (root): ") and "not in inputs.files" in message
    assert "not-listed-secret-name" not in message and "\n" not in message
    with pytest.raises(CaseFormatError, match=r"^x\.case\.json: not valid JSON \(line 1, column 2\)$"):
        parse_case("{hush", "x.case.json")


def test_dates_are_iso_text_not_numbers() -> None:
    data = json.loads(SPEC_EXAMPLE)
    data["source"]["createdAt"] = "2026-10-15T00:00:00Z"
    with pytest.raises(CaseFormatError, match=r"source\.synthetic\.createdAt: .*YYYY-MM-DD"):
        parse_case(json.dumps(data), "x.case.json")
    data = json.loads(SPEC_EXAMPLE)
    data["labels"][0]["labeledAt"] = 1_760_000_000
    with pytest.raises(CaseFormatError, match=r"labels\.0\.labeledAt: .*ISO 8601"):
        parse_case(json.dumps(data), "x.case.json")


def test_dump_case_round_trips_camel_case() -> None:
    case = parse_case(SPEC_EXAMPLE, "example.case.json")
    text = dump_case(case)
    assert text.endswith("}\n") and '"repositoryFullName"' in text and "repository_full_name" not in text
    assert EvalCase.model_validate_json(text) == case


def test_dump_case_writes_every_synthetic_case_back_byte_for_byte() -> None:
    """A label or assign-double written through the store leaves the rest of a case file as it was."""
    for path in synthetic_files():
        text = path.read_text(encoding="utf-8")
        assert dump_case(parse_case(text, path.name)) == text, path.name


def test_label_counts_count_an_adjudication_as_labeled_and_a_disagreement_as_open() -> None:
    from graft_eval_pipeline.evalset.sets.case_schema import label_counts

    agreed = make_case("syn-901-a")
    open_pair = make_case("syn-902-b", labels=[make_label("alice"), make_label("bob", risk="logic")])
    adjudicated_only = make_case("syn-903-c", labels=[], adjudicated=make_label("carol"))
    unlabeled = make_case("syn-904-d", labels=[])
    counts = label_counts([agreed, open_pair, adjudicated_only, unlabeled])
    assert counts == (4, 3, 2, 1) and counts.unlabeled == 1


# --- the fast parse path (issue 16) ---------------------------------------------------------------

# Values of every JSON type and of the shapes the schema expects, put in place of each field.
MUTATIONS: list[Any] = [
    True, False, 0, 1, -1, 1.0, 1.5, 1e300, 2**70, "", "1", "true", "x", "2026-10-15",
    "2026-10-15T00:00:00Z", "trivial", "modified", None, [], [1], ["a"], {}, {"a": 1},
]  # fmt: skip


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [at] if at else []
    children = (
        value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    )
    for key, child in children:
        found += _paths(child, (*at, key))
    return found


def _replaced(document: Any, at: tuple[Any, ...], value: Any) -> Any:
    copy = json.loads(json.dumps(document))
    parent = copy
    for key in at[:-1]:
        parent = parent[key]
    parent[at[-1]] = value
    return copy


def _parsed(text: str) -> Any:
    """The case's JSON form, or None when parse_case refuses the document."""
    try:
        return parse_case(text, "x.case.json").to_json_dict()
    except CaseFormatError:
        return None


def _reference(text: str) -> Any:
    """The verdict before orjson: pydantic's own JSON parser, then json.loads for what it refuses.

    Before orjson: pydantic's own JSON parser, and json.loads then validation for what it refuses
    (an int beyond 64 bits; the mutations hold no surrogate and nest nothing deep).
    """
    try:
        return EvalCase.model_validate_json(text).to_json_dict()
    except ValidationError:
        pass
    try:
        return EvalCase.model_validate(json.loads(text)).to_json_dict()
    except ValidationError:
        return None


@pytest.mark.slow  # many generated case files
def test_fast_parse_path_gives_the_verdict_and_values_of_pydantics_json_parser() -> None:
    """Every field of a few synthetic cases replaced by each mutation.

    orjson + validation accepts exactly what `model_validate_json` accepts, with the same values.
    """
    compared = 0
    for path in synthetic_files()[::6]:
        document = json.loads(path.read_text(encoding="utf-8"))
        for at in _paths(document):
            for value in MUTATIONS:
                text = json.dumps(_replaced(document, at, value))
                assert _parsed(text) == _reference(text), (path.name, at, value)
                compared += 1
    assert compared > 5_000


@pytest.mark.parametrize(("levels", "loads"), [(61, True), (62, False), (300, False)])
def test_a_scripted_reply_nested_past_the_limit_is_refused_on_the_fast_path_too(
    levels: int, loads: bool
) -> None:
    """root, fakeLlm, writer, then `levels` objects: 64 levels load, 65 are refused, as json.loads's."""
    document = json.loads(synthetic_files()[0].read_text(encoding="utf-8"))
    nested: dict[str, Any] = {}
    for _ in range(levels - 1):
        nested = {"a": nested}
    document["fakeLlm"] = {"writer": {"json": nested}}
    text = json.dumps(document)
    if loads:
        assert parse_case(text, "x.case.json").fake_llm is not None
    else:
        with pytest.raises(CaseFormatError, match=r"^x\.case\.json: JSON nested more than 64 levels deep"):
            parse_case(text, "x.case.json")


def test_a_scripted_reply_is_the_only_free_form_json_in_a_case() -> None:
    """What lets parse_case's fast path measure the depth of `fakeLlm` alone.

    Every other field has a schema, so a deep value there fails validation and takes the json.loads
    path.
    """
    from typing import get_args

    from pydantic import BaseModel

    free_form: set[str] = set()
    seen: set[type] = set()

    def walk(model: type[BaseModel]) -> None:
        if model in seen:
            return
        seen.add(model)
        for name, field in model.model_fields.items():
            stack: list[Any] = [field.annotation]
            while stack:
                kind = stack.pop()
                if kind is Any:
                    free_form.add(f"{model.__name__}.{name}")
                elif isinstance(kind, type) and issubclass(kind, BaseModel):
                    walk(kind)
                stack.extend(get_args(kind))

    walk(EvalCase)
    assert len(seen) > 8  # the walk reaches the nested models
    assert free_form == {"FakeJson.json_"}
