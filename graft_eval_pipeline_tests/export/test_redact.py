"""Redaction (spec 6.4, E14, U-RED-1..6). Every secret here is a made-up test value."""

from __future__ import annotations

from collections import Counter

import pytest

from graft_eval_pipeline.card.models import IssueInfo
from graft_eval_pipeline.evalset.export.redact import RedactOptions, redact_inputs, redact_text
from graft_eval_pipeline.evalset.sets.errors import EvalError
from graft_eval_pipeline_tests.builders import make_file, make_inputs

# Built at run time so no scanner sees a complete fake credential in the source.
SECRETS = {
    "aws_key": "AKIA" + "Q" * 16,
    "github_token": "ghp_" + "a1B2" * 9,
    "anthropic_key": "sk-ant-" + "x9" * 12,
    "slack_token": "xoxb-" + "1234567890-ab",
    "jwt": "eyJ" + "h" * 12 + ".eyJ" + "p" * 12 + "." + "s" * 12,
}
PEM = [
    "-----BEGIN RSA PRIVATE KEY-----",
    "MIIEpAIBAAKCAQEA" + "k" * 40,
    "Zm9vYmFyYmF6" + "q" * 40,
    "-----END RSA PRIVATE KEY-----",
]


def redact(
    text: str, options: RedactOptions | None = None, *, is_patch: bool = False
) -> tuple[str, Counter[str]]:
    counts: Counter[str] = Counter()
    return redact_text(text, options or RedactOptions(), counts, is_patch=is_patch), counts


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_U_RED_1_each_secret_kind_is_replaced_counted_and_gone(kind: str) -> None:
    value = SECRETS[kind]
    inputs = make_inputs(
        files=[make_file(patch=f"@@ -1 +1 @@\n-x = 1\n+creds({value!r})")],
        pr={"title": "t", "body": f"see {value} twice: {value}"},
        issue=IssueInfo(number=3, title="i", body=f"leaked {value}"),
    )
    out, redactions = redact_inputs(inputs, RedactOptions())
    dumped = out.model_dump_json()
    assert value not in dumped
    assert f"[REDACTED:{kind}]" in dumped
    assert [r.to_json_dict() for r in redactions] == [{"kind": kind, "count": 4}]


def test_U_RED_1_private_key_and_assignment_kinds_and_word_boundaries() -> None:
    text, counts = redact("\n".join(PEM) + "\npassword: 'hunter2hunter2'")
    assert "MIIE" not in text and "hunter2" not in text
    assert counts == Counter({"private_key": 1, "assignment": 1})
    embedded, counts = redact("xAKIA" + "Q" * 16 + " and " + SECRETS["github_token"] + "_tail")
    assert counts == Counter() and "AKIA" in embedded


def test_U_RED_2_patch_keeps_line_count_and_prefixes_including_a_private_key() -> None:
    patch = "\n".join(
        [
            "@@ -1,6 +1,7 @@",
            " config = load()",
            *[f"-{line}" for line in PEM],
            *[f"+{line}" for line in PEM],
            f"+TOKEN = {SECRETS['github_token']}",
            " done()",
        ]
    )
    out, counts = redact(patch, is_patch=True)
    before, after = patch.split("\n"), out.split("\n")
    assert len(after) == len(before)
    assert [line[:1] for line in after] == [line[:1] for line in before]
    assert after[2:10] == ["-[REDACTED:private_key]"] * 4 + ["+[REDACTED:private_key]"] * 4
    assert after[0] == before[0] and after[-1] == before[-1]
    assert counts == Counter({"private_key": 2, "github_token": 1})


def test_U_RED_2_an_unterminated_key_is_redacted_to_the_end_of_the_patch() -> None:
    patch = "@@ -0,0 +1,3 @@\n+" + PEM[0] + "\n+" + PEM[1] + "\n+" + PEM[2]
    out, _ = redact(patch, is_patch=True)
    assert out.split("\n")[1:] == ["+[REDACTED:private_key]"] * 3


def test_U_RED_3_assignment_keeps_the_name_and_operator_and_only_replaces_the_value() -> None:
    out, counts = redact('API_KEY = "abcd1234efgh"\napi-key: short1\nSecret=abcdefgh\npasswd := x')
    assert out.split("\n") == [
        'API_KEY = "[REDACTED:assignment]"',
        "api-key: short1",  # a value shorter than 8 characters stays
        "Secret=[REDACTED:assignment]",
        "passwd := x",
    ]
    assert counts == Counter({"assignment": 2})


def test_U_RED_3_assignment_never_reaches_into_the_next_line() -> None:
    out, counts = redact("token =\n  abcdefghijkl")
    assert out == "token =\n  abcdefghijkl" and counts == Counter()


def test_U_RED_4_emails_off_by_default_then_replaced_with_the_noreply_exceptions() -> None:
    text = (
        "From bob.smith+x@corp.example, Co-authored-by: Claude <noreply@anthropic.com>, "
        "123+dev@users.noreply.github.com"
    )
    assert redact(text)[0] == text
    out, counts = redact(text, RedactOptions(emails=True))
    assert "bob.smith" not in out and "[REDACTED:email]" in out
    assert "noreply@anthropic.com" in out and "123+dev@users.noreply.github.com" in out
    assert counts == Counter({"email": 1})


def test_U_RED_4_an_email_on_a_patch_line_keeps_the_diff_prefix() -> None:
    out, _ = redact(
        "@@ -1 +1 @@\n-old@corp.example\n+new@corp.example", RedactOptions(emails=True), is_patch=True
    )
    assert out.split("\n")[1:] == ["-[REDACTED:email]", "+[REDACTED:email]"]


def test_U_RED_5_paths_statuses_and_counts_are_untouched_and_floor_path_reasons_identical() -> None:
    from graft_eval_pipeline.card.floor import compute_risk_floor

    secret_path = "config/secrets/" + SECRETS["aws_key"] + ".pem"
    files = [
        make_file(secret_path, status="added", additions=3, deletions=0, patch=f"+{SECRETS['aws_key']}"),
        make_file(".github/workflows/ci.yml", patch="+run: echo token=abcdefghijk"),
        make_file("docs/renamed.md", previous_path="docs/old@corp.example.md", status="renamed", patch=None),
    ]
    inputs = make_inputs(files=files)
    out, _ = redact_inputs(inputs, RedactOptions(emails=True, hosts=("corp.example",), patterns=("ci",)))
    keep = ("path", "previous_path", "status", "additions", "deletions")
    assert [f.model_dump(include=set(keep)) for f in out.files] == [
        f.model_dump(include=set(keep)) for f in inputs.files
    ]
    assert out.pr.model_dump(exclude={"title", "body"}) == inputs.pr.model_dump(exclude={"title", "body"})
    assert (out.listing_truncated, out.too_large) == (inputs.listing_truncated, inputs.too_large)
    assert compute_risk_floor(out).fired_by == compute_risk_floor(inputs).fired_by


def test_U_RED_6_redact_host_covers_subdomains_but_not_lookalikes() -> None:
    text = "GET https://api.corp.example/v1 and corp.example, CORP.example; notcorp.example corp.example.org"
    out, counts = redact(text, RedactOptions(hosts=("corp.example",)))
    assert out == (
        "GET https://[REDACTED:host]/v1 and [REDACTED:host], [REDACTED:host]; "
        "notcorp.example corp.example.org"
    )
    assert counts == Counter({"host": 3})


@pytest.mark.parametrize("prefix", ["+", "-", " "])
def test_U_RED_6_a_host_right_after_the_diff_prefix_is_redacted(prefix: str) -> None:
    patch = f"@@ -1,2 +1,2 @@\n{prefix}corp.example/api\n{prefix}api.corp.example/v1"
    out, counts = redact(patch, RedactOptions(hosts=("corp.example",)), is_patch=True)
    assert out.split("\n")[1:] == [f"{prefix}[REDACTED:host]/api", f"{prefix}[REDACTED:host]/v1"]
    assert counts == Counter({"host": 2})
    # Outside a patch a leading '-' is part of the name: `x-corp.example` is another host.
    assert redact("x-corp.example", RedactOptions(hosts=("corp.example",)))[1] == Counter()


def test_custom_patterns_run_per_line_and_a_bad_pattern_is_a_usage_error() -> None:
    out, counts = redact(
        "@@ -1 +1 @@\n+ref ACME-123456\n-ACME-654321",
        RedactOptions(patterns=(r"ACME-[0-9]{6}",)),
        is_patch=True,
    )
    assert out.split("\n")[1:] == ["+ref [REDACTED:custom]", "-[REDACTED:custom]"]
    assert counts == Counter({"custom": 2})
    anchored, _ = redact("@@ -1 +1 @@\n+ACME-1 ACME-2", RedactOptions(patterns=(r"^ACME-\d",)), is_patch=True)
    assert anchored.split("\n")[1] == "+[REDACTED:custom] ACME-2"  # ^ is the start of the line's text
    with pytest.raises(EvalError):
        redact("x", RedactOptions(patterns=("(",)))


def test_non_ascii_text_that_changes_length_when_lowered_still_finds_assignments() -> None:
    text = "İstanbul token = abcdefghij"
    out, counts = redact(text)
    assert out == "İstanbul token = [REDACTED:assignment]" and counts == Counter({"assignment": 1})
