"""Redaction (spec 6.4, E14, U-RED-1..6). Every secret here is a made-up test value."""

from __future__ import annotations

import string
from collections import Counter

import pytest

from graft_eval_pipeline.card.models import IssueInfo
from graft_eval_pipeline.evalset.export.redact import RedactOptions, redact_inputs, redact_text
from graft_eval_pipeline.evalset.sets.errors import EvalError
from graft_eval_pipeline.secrets.rules import secret_kinds
from graft_eval_pipeline_tests.builders import made_up, make_file, make_inputs

# Built at run time so no scanner sees a complete fake credential in the source. No value ends in
# one character repeated (`AKIAQQQQ…`) or repeats a unit (`a1B2a1B2…`): those are stand-ins by
# shape, which redaction keeps; `made_up` gives each a random-looking body.
SECRETS = {
    "aws_key": "AKIA" + made_up(16, string.ascii_uppercase + string.digits),
    "github_token": "ghp_" + made_up(36),
    "anthropic_key": "sk-ant-" + made_up(24),
    "slack_token": "xoxb-" + "1234567890-ab",
    "jwt": "eyJhbGciOiJIUzI1NiJ9" + ".eyJ" + made_up(12) + "." + made_up(12),  # header {"alg":"HS256"}
}
_ACCOUNT_KEY = made_up(86, string.ascii_letters + string.digits + "+/") + "=="
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
    embedded, counts = redact("x" + SECRETS["aws_key"] + " and " + SECRETS["github_token"] + "_tail")
    # Our formats keep their word boundaries; gitleaks' GitHub rule has none on the right and
    # still finds the token glued to `_tail` (a kept secret is a leak).
    assert counts == Counter({"gl_github_pat": 1}) and "AKIA" in embedded


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
    text = "İstanbul token = abcdefgh42"  # a lower-case word alone is no token (issue 25)
    out, counts = redact(text)
    assert out == "İstanbul token = [REDACTED:assignment]" and counts == Counter({"assignment": 1})


# --- issue 12: catalogue, structured secrets, assignments, look-alikes, RE2 user patterns -------


def _fake(alphabet: str, n: int, seed: int = 7) -> str:
    import random

    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


_B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_HEX = "0123456789abcdef"


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("ABIA" + _fake("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16), "aws_key"),
        ("glpat-" + _fake(_B62, 20), "gitlab_token"),
        ("xoxe-1-" + _fake("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 146), "slack_token"),
        ("sk-proj-" + _fake(_B62, 58) + "T3BlbkFJ" + _fake(_B62, 58), "openai_key"),
        ("hf_" + _fake("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 34), "huggingface_token"),
        ("npm_" + _fake(_B62, 36), "npm_token"),
        ("pypi-AgEIcHlwaS5vcmc" + _fake(_B62, 80), "pypi_token"),
        ("dckr_pat_" + _fake(_B62, 27), "docker_token"),
        ("sk_live_" + _fake(_B62, 24), "stripe_key"),
        ("SG." + _fake(_B62, 22) + "." + _fake(_B62, 43), "sendgrid_key"),
        ("AC" + _fake(_HEX, 32), "twilio_key"),
        (_fake(_HEX, 32) + "-us14", "mailchimp_key"),
        ("eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3In0.", "jwt"),
    ],
)
def test_catalogue_formats_are_redacted_with_their_kind(value: str, kind: str) -> None:
    out, counts = redact(f'client = Client("{value}")')
    assert value not in out and counts == Counter({kind: 1})


def test_a_checksum_valid_github_token_counts_even_when_glued_to_word_characters() -> None:
    import zlib

    body = _fake(_B62, 30, seed=3)
    crc, digits = zlib.crc32(body.encode()), ""
    while crc:
        crc, rem = divmod(crc, 62)
        digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"[rem] + digits
    token = "ghp_" + body + digits.rjust(6, "0")
    out, counts = redact(token + "_tail")
    assert token not in out and counts == Counter({"github_token": 1})


def test_pgp_putty_and_one_line_json_keys_are_redacted_and_a_marker_in_code_is_not() -> None:
    body = ["QmFzZTY0IGJvZHkgbGluZSBvbmUgZmljdGlvbmFs", "c2Vjb25kIGxpbmUgb2YgYSBmaWN0aW9uYWwga2V5"]
    pgp = ["-----BEGIN PGP PRIVATE KEY BLOCK-----", "", *body, "-----END PGP PRIVATE KEY BLOCK-----"]
    putty = ["PuTTY-User-Key-File-3: ssh-ed25519", "Encryption: none", body[0], "Private-MAC: " + "ab" * 32]
    patch = "@@ -0,0 +1,9 @@\n" + "\n".join("+" + line for line in [*pgp, *putty])
    out, counts = redact(patch, is_patch=True)
    assert body[0] not in out and body[1] not in out
    assert out.count("\n") == patch.count("\n")
    assert counts == Counter({"private_key": 2})
    gcp = '  "private_key": "-----BEGIN PRIVATE KEY-----\\n' + body[0] + '\\n-----END PRIVATE KEY-----\\n",'
    out, counts = redact(gcp)
    assert out == '  "private_key": "[REDACTED:private_key]\\n",' and counts == Counter({"private_key": 1})
    code = 'if line.startswith("-----BEGIN RSA PRIVATE KEY-----"):\n    kind = "rsa"'
    assert redact(code) == (code, Counter())


@pytest.mark.parametrize(
    ("line", "secret", "kind"),
    [
        ("postgres://app:Zq8mN3vK7pLw2x@db.example.test/app", "Zq8mN3vK7pLw2x", "url_password"),
        ("Server=sql;User ID=app;Password=Hk29fLq0Zr7w;Encrypt=True", "Hk29fLq0Zr7w", "connection_string"),
        ("AccountKey=" + _ACCOUNT_KEY + ";", _ACCOUNT_KEY, "connection_string"),
        (
            "Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
            "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
            "auth_header",
        ),
        ("Authorization: Basic c3ZjOmZpY3Rpb25hbC1wdzE=", "c3ZjOmZpY3Rpb25hbC1wdzE=", "auth_header"),
    ],
)
def test_structured_secrets_keep_their_label_and_lose_the_value(line: str, secret: str, kind: str) -> None:
    out, counts = redact(line)
    assert secret not in out and counts == Counter({kind: 1})


@pytest.mark.parametrize(
    "line",
    [
        'client_secret = "q8Zr2mX9vB4nL7kT"',
        "JIRA_API_TOKEN=q8Zr2mX9vB4nL7kT",
        'dbPassword := "q8Zr2mX9vB4nL7kT"',
        "  'api_key' => 'q8Zr2mX9vB4nL7kT',",
        'password <- "q8Zr2mX9vB4nL7kT"',
        "secret_key: q8Zr2mX9vB4nL7kT",
        'auth_token = "q8Zr2mX9vB4nL7kT"',
        "<apiKey>q8Zr2mX9vB4nL7kT</apiKey>",
        '<add key="Password" value="q8Zr2mX9vB4nL7kT" />',
        "ENV ADMIN_PASSWORD q8Zr2mX9vB4nL7kT",
        "export SLACK_BOT_TOKEN='q8Zr2mX9vB4nL7kT'",
        "- name: DB_PASSWORD\n  value: q8Zr2mX9vB4nL7kT",
        "token: |\n  q8Zr2mX9vB4nL7kT",
    ],
)
def test_secret_named_assignments_in_every_syntax(line: str) -> None:
    out, counts = redact(line)
    assert "q8Zr2mX9vB4nL7kT" not in out and out.count("\n") == line.count("\n")
    assert counts == Counter({"assignment": 1})


@pytest.mark.parametrize(
    "line",
    [
        "token = peek_token(parser)",
        'password = os.environ["DB_PASSWORD"]',
        'api_key: "YOUR_API_KEY"',
        "x-api-key: {{apiKey}}",
        '--from-literal=password="$APP_PASSWORD"',
        "password: ${DB_PASSWORD}",
        "secret = None",
        'password = "changeme"',
        'secret_name = "prod-db-credentials"',
        "token_count = 1234567890123",
        "commit 3f2a9c1e5b7d4f6a8c0e2b4d6f8a1c3e5b7d9f0a",
        "request_id = '4f1c2b3a-9d8e-4c7b-a6f5-e4d3c2b1a0f9'",
        '"integrity": "sha512-' + "Zm9v" * 21 + '=="',
        "color: #a1b2c3;",
        "AKIAIOSFODNN7EXAMPLE",
        "postgres://user:${DB_PASSWORD}@localhost/db",
    ],
)
def test_lookalikes_and_references_stay(line: str) -> None:
    assert redact(line) == (line, Counter())


def test_user_patterns_run_on_a_linear_time_engine_and_unsupported_syntax_is_refused() -> None:
    # (a+)+$ backtracks exponentially in Python's re on this input; RE2 answers at once.
    out, counts = redact("a" * 28 + "!", RedactOptions(patterns=(r"(a+)+$",)))
    assert counts == Counter() and out == "a" * 28 + "!"
    out, counts = redact("id ACME-123456 end", RedactOptions(patterns=(r"ACME-\d{6}\Z", r"\bACME-\d+")))
    assert out == "id [REDACTED:custom] end" and counts == Counter({"custom": 1})
    with pytest.raises(EvalError, match="RE2"):
        RedactOptions(patterns=(r"(?<=x)y",))
    with pytest.raises(EvalError, match="RE2"):
        RedactOptions(patterns=(r"(a)\1",))


def test_secret_kinds_reports_kinds_only_and_ignores_the_optional_rules() -> None:
    text = "contact dev@corp.example, token " + SECRETS["github_token"] + "\npassword: 'hunter2hunter2'"
    assert secret_kinds(text) == Counter({"github_token": 1, "assignment": 1})
    assert secret_kinds("token = peek_token(parser)") == Counter()
