"""The secret scan stays linear in its input (issue 23 item 7): counted, not timed.

A minified bundle is one line of megabytes with a prefix match every few characters. The scan
looks at the text once (the RE2 prefilter) and, per hit, at the window `_window` hands the
rules; so the characters examined are counted by wrapping `_window`, for a minified line of
length L and 2L: twice the line must be twice the work. A window that ran to the end of the line
would make it hits x line length, four times the work (checked by hand: the first test fails so).
Every value here is made up.
"""

from __future__ import annotations

import base64
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graft_eval_pipeline.evalset.export.redact import RedactOptions, redact_text
from graft_eval_pipeline.secrets import scan as secret_scan
from graft_eval_pipeline.secrets.entropy import tokens_near_keyword
from graft_eval_pipeline.secrets.rules import secret_kinds, secret_kinds_in
from graft_eval_pipeline_tests.builders import made_up

# One segment of "minified JavaScript" in which several rules' anchors match and are rejected:
# a Vault-like `s.` + 24 letters (no digit: not random), a secret-named assignment of a call,
# `Bearer` + a word, `00` + 40 lower-case letters, a token prefix with a placeholder body, and a
# non-ASCII string (so the UTF-8 offset path runs too).
_SEGMENT = (
    "var e=t.s.abcdefghijklmnopqrstuvwx;n.token=r.get(a);o.password=i(u);"
    'h="Bearer "+c.value;x=00abcdefghijklmnopqrstuvwxyzabcdefghijklmn;'
    'k="ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";l="Größe ändern";'
)


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


_CLAIMS = _b64url(b'{"sub":"svc-4f2a","iat":1760000000}')
_SIGNATURE = _b64url(bytes(range(7, 39)))


def _signed(header: bytes) -> str:
    return f"{_b64url(header)}.{_CLAIMS}.{_SIGNATURE}"


def _five_parts(header: bytes, key: str) -> str:
    return ".".join([_b64url(header), key, made_up(16), made_up(50), made_up(22)])


def _minified(length: int) -> str:
    return "+" + _SEGMENT * (length // len(_SEGMENT))


def _examined(monkeypatch: pytest.MonkeyPatch, text: str) -> tuple[int, int, int]:
    """(windows handed out, characters in them, widest window) while scanning `text` as a patch."""
    windows: list[int] = []
    real = secret_scan._window

    def counting(
        text: str, pos: int, before: int = secret_scan.WINDOW_BEFORE, after: int = secret_scan.WINDOW_AFTER
    ) -> tuple[int, int]:
        lo, hi = real(text, pos, before, after)
        windows.append(hi - lo)
        return lo, hi

    monkeypatch.setattr(secret_scan, "_window", counting)
    assert secret_kinds(text, is_patch=True) == Counter()  # every hit is rejected
    return len(windows), sum(windows), max(windows, default=0)


@pytest.mark.slow  # scans lines of 200,000 and 400,000 characters
def test_characters_a_scan_examines_grow_linearly_with_a_minified_lines_length(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    length = 200_000
    hits_1, chars_1, widest_1 = _examined(monkeypatch, _minified(length))
    hits_2, chars_2, widest_2 = _examined(monkeypatch, _minified(2 * length))
    assert hits_1 >= length // len(_SEGMENT) * 4  # many prefix matches on the one line
    assert hits_2 == pytest.approx(2 * hits_1, rel=0.01)
    assert chars_2 <= 2.05 * chars_1  # linear: twice the line, twice the work (not four times)
    assert max(widest_1, widest_2) <= secret_scan.WINDOW_BEFORE + secret_scan.WINDOW_AFTER


def test_a_secret_in_the_middle_of_a_long_minified_non_ascii_line_is_redacted() -> None:
    token = "ghp_" + made_up(36)
    line = _minified(100_000)
    text = line + 'q="' + token + '";' + line
    counts: Counter[str] = Counter()
    out = redact_text(text, RedactOptions(), counts, is_patch=True)
    assert token not in out and counts == Counter({"github_token": 1})
    assert out == line + 'q="[REDACTED:github_token]";' + line  # offsets right after non-ASCII text


def test_a_token_longer_than_the_window_is_redacted_to_its_end() -> None:
    jwt = _signed(b'{"alg":"HS256","typ":"JWT"}') + made_up(secret_scan.WINDOW_AFTER * 4)
    counts: Counter[str] = Counter()
    out = redact_text("x = f(" + jwt + ") + g", RedactOptions(), counts)
    assert out == "x = f([REDACTED:jwt]) + g" and counts == Counter({"jwt": 1})


def test_a_short_prefix_in_ordinary_text_is_no_hit_but_its_format_still_is() -> None:
    vault = "s." + "aB3dE6gH9jK2mN5pQ8sT1vW4"
    minified = "this.addEventListener(s.addEventListener);a.s.querySelectorAllX" * 50
    assert secret_kinds(minified) == Counter()
    assert secret_kinds(f"VAULT={vault}\n" + minified) == Counter({"vault_token": 1})


@pytest.mark.parametrize(
    "texts",
    [
        [],
        [("octo/repo", False), ("Fix the parser", False), ("", False), ("src/app.py", False)],
        [("docs/Größe.md", False), ("Rotate keys", False), ("token: " + "aB3dE6gH9jK2mN5pQ8", False)],
        [
            ("-----BEGIN RSA PRIVATE KEY-----", False),
            ("MIIEpAIBAAKCAQEA" + "k" * 40, False),
            ("ghp_" + made_up(36), False),
        ],
        # A key block without END in one patch does not run on into the next text; a YAML block
        # scalar at a text's end takes no value from the next one; non-ASCII shifts byte offsets.
        [
            ("@@ -0,0 +1,2 @@\n+-----BEGIN RSA PRIVATE KEY-----\n+MIIEpAIBAAKCAQEA" + "k" * 40, True),
            ("@@ -0,0 +1,1 @@\n+Größe = 'ghp_" + made_up(36) + "'", True),
            ("@@ -1,1 +1,1 @@\n+api_token: |", True),
            ("aB3dE6gH9jK2mN5pQ8", False),
            ("+password = 'Xk9#mQ2$vL7pR4wZ'", True),
        ],
    ],
)
def test_texts_checked_together_count_as_each_checked_alone(texts: list[tuple[str, bool]]) -> None:
    alone: Counter[str] = Counter()
    for text, is_patch in texts:
        alone.update(secret_kinds(text, is_patch=is_patch))
    assert secret_kinds_in(texts) == alone
    if len(texts) == 5:  # the patches: the key block counts once, and every other secret too
        assert alone == Counter({"private_key": 1, "github_token": 1, "assignment": 1}), alone
    if texts and texts[0][0] == "octo/repo":
        assert alone == Counter()


def test_an_unsigned_two_part_jwt_is_redacted() -> None:
    claims = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhYmMxMjMiLCJyb2xlIjoiYWRtaW4ifQ"
    counts: Counter[str] = Counter()
    assert redact_text(f"auth({claims})", RedactOptions(), counts) == "auth([REDACTED:jwt])"
    assert counts == Counter({"jwt": 1})


@pytest.mark.parametrize(
    "token",
    [
        # a JWE's five parts: header, encrypted key, iv, ciphertext, tag (the key empty: direct)
        _five_parts(b'{"alg":"RSA-OAEP-256","enc":"A256GCM"}', made_up(40)),
        _five_parts(b'{"alg":"dir","enc":"A128GCM"}', ""),
        # headers with a space, a newline, CRLF or a tab after the brace
        _signed(b'{ "typ" : "JWT", "alg" : "HS256" }'),
        _signed(b'{\n  "alg": "ES256"\n}'),
        _signed(b'{\r\n  "alg": "ES256"\r\n}'),
        _signed(b'{\t"alg": "ES256"}'),
    ],
    ids=["jwe", "jwe-direct", "space", "newline", "crlf", "tab"],
)
def test_jose_tokens_of_any_header_spacing_are_redacted(token: str) -> None:
    counts: Counter[str] = Counter()
    assert redact_text(f"send({token})", RedactOptions(), counts) == "send([REDACTED:jwt])"
    assert counts == Counter({"jwt": 1})


@pytest.mark.parametrize(
    "text",
    [
        "cache " + _five_parts(b'{"name":"bob","age":3}', made_up(12)),
        # letters typed into a header: it decodes to no JSON object naming `alg`, `enc` or `typ`
        "x = eyJhbxyzGciOiJIUabcdzI1NiIqrsInR5cCI6IkpXVCuvwJ9." + _CLAIMS + "." + _SIGNATURE,
    ],
    ids=["five-parts", "mangled-header"],
)
def test_base64_json_with_no_jose_header_is_kept(text: str) -> None:
    assert redact_text(text, RedactOptions(), Counter()) == text


def test_maven_encrypted_passwords_are_redacted_and_names_in_braces_kept() -> None:
    encrypted = "{" + base64.b64encode(bytes(range(40, 73))).decode() + "}"
    counts: Counter[str] = Counter()
    # The brace that opens the value stays, as a token's prefix does (the anchor needs the
    # character before it: `{` alone starts too many runs in code).
    assert redact_text(f"<master>{encrypted}</master>", RedactOptions(), counts) == (
        "<master>{[REDACTED:maven_password]</master>"
    )
    assert redact_text(f"<master>{encrypted[:-1]}\\}}</master>", RedactOptions(), counts) == (
        "<master>{[REDACTED:maven_password]</master>"
    )
    assert redact_text(f"mvn_master = '{encrypted}'", RedactOptions(), Counter()) == (
        "mvn_master = '{[REDACTED:maven_password]'"
    )
    for kept in ("return html`<${TranscriptVirtualListComponent}>`", "`{capitalizedDimension2Value}`"):
        assert redact_text(kept, RedactOptions(), Counter()) == kept


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("Authorization: Bearer releasebot-staging", "releasebot-staging"),
        ("Authorization: bearer notarealvalue==", "notarealvalue=="),
        ("GET /hook?h=authorization:%20bearer%20ciservicecredential16", "ciservicecredential16"),
    ],
)
def test_any_value_after_a_named_authorization_scheme_is_redacted(line: str, value: str) -> None:
    counts: Counter[str] = Counter()
    assert redact_text(line, RedactOptions(), counts) == line.replace(value, "[REDACTED:auth_header]")
    assert counts == Counter({"auth_header": 1})


@pytest.mark.parametrize(
    "line",
    [
        "Authorization: Bearer accessToken",
        "Authorization: Bearer ACCESS_TOKEN",
        "Authorization: Bearer ${TOKEN}",
    ],
)
def test_a_variable_after_an_authorization_scheme_is_kept(line: str) -> None:
    assert redact_text(line, RedactOptions(), Counter()) == line


def test_a_url_password_may_hold_sub_delimiters() -> None:
    password = "rT9';!*(),$" + made_up(6)
    line = f"postgres://app:{password}@db.internal.test/app"
    counts: Counter[str] = Counter()
    assert (
        redact_text(line, RedactOptions(), counts)
        == "postgres://app:[REDACTED:url_password]@db.internal.test/app"
    )
    assert counts == Counter({"url_password": 1})


def test_a_key_block_with_its_end_line_is_redacted_whatever_its_body() -> None:
    """BEGIN and END markers alone on their lines: the lines between are the key, base64 or not."""
    text = (
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nnot base64 "
        + made_up(8)
        + "\n-----END ENCRYPTED PRIVATE KEY-----"
    )
    counts: Counter[str] = Counter()
    out = redact_text(text, RedactOptions(), counts)
    assert out == "\n".join(["[REDACTED:private_key]"] * 3) and counts == Counter({"private_key": 1})
    # Code that names the markers is no block: the END marker is not alone on its line.
    code = (
        'if line == "-----BEGIN RSA PRIVATE KEY-----":\n    start = i\n'
        'end = "-----END RSA PRIVATE KEY-----" in text'
    )
    assert redact_text(code, RedactOptions(), Counter()) == code


@pytest.mark.parametrize(
    "line",
    [
        "var txtFieldPassword: UITextField! = nil",  # Swift: a type annotation, then `nil`
        "Server=db;User Id=app;Password=@password;",  # a SQL parameter, not a value
        '"Password": "Lösenord"',  # a locale file: the word in Swedish
        '"secret": "&#12497;&#12473;&#12527;&#12540;&#12489;"',  # Japanese, in HTML entities
    ],
)
def test_references_types_and_translations_under_secret_names_are_kept(line: str) -> None:
    assert redact_text(line, RedactOptions(), Counter()) == line


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ('let password: String! = "' + "Tr0ub4dor&3" + made_up(4) + '"', "Tr0ub4dor&3"),
        ('"password": "VeryStrong$$你好"', "VeryStrong$$你好"),  # a symbol: a password again
    ],
)
def test_values_after_a_type_or_with_non_ascii_letters_still_count(line: str, value: str) -> None:
    out = redact_text(line, RedactOptions(), Counter())
    assert value not in out and "[REDACTED:assignment]" in out


def test_a_key_block_without_end_ends_with_its_hunk() -> None:
    body = "MIIEpAIBAAKCAQEA" + "k" * 40
    patch = (
        f"@@ -0,0 +1,2 @@\n+-----BEGIN RSA PRIVATE KEY-----\n+{body}\n@@ -9,1 +9,1 @@\n+value = compute(x)"
    )
    counts: Counter[str] = Counter()
    out = redact_text(patch, RedactOptions(), counts, is_patch=True)
    assert body not in out and out.endswith("@@ -9,1 +9,1 @@\n+value = compute(x)")
    assert counts == Counter({"private_key": 1})


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ('password = "value with quotes and spaces"', "assignment"),
        ("password = 'open sesame'", "assignment"),  # a passphrase whose first word is short
        ('DB_PASSWORD="tell no one"', "assignment"),
        ("PASSWORD1=hunter2", "assignment"),
        ("Server=db;User ID=sa;Password=myPassword;", "connection_string"),
        ('var c = new NetworkCredential("user", "AP7JaG9kLm2Qx");', "basic_auth"),
        ("machine api.example.com login bob password s3cr3tPa55", "basic_auth"),
        ('ADMIN_KEY = "Zq8mRt2vLp9xW3nB7cK4hJ6s"', "assignment"),  # no `min_key` inside `admin_key`
        # command-line credentials (values made up)
        ("psexec \\\\host01 -u ops -p Vq3#mTz9 cmd.exe", "assignment"),
        ("mysql -h db -u root -pKx7mQ2vZ app", "assignment"),
        ("Connect-VIServer -Server vc01 -User admin -Password Vq3mTz9Lk", "assignment"),
        ("backup --password=Vq3mTz9Lk --host db", "assignment"),
        ("sqlpackage /a:Publish /u:deploy /p:Vq3mTz9Lk", "assignment"),
        ("cmdkey /generic:host01 /user:bob /pass:Vq3mTz9Lk", "assignment"),
        # .netrc over several lines, and prose
        ("machine api.example.test\n  login bob\n  password Vq3mTz9Lk", "basic_auth"),
        ("machine api.example.test\nlogin bob\npassword Vq3mTz9Lk\n", "basic_auth"),
        ("The password is 'Vq3mTz9Lk'", "assignment"),
        ("The default password is 'marmalade'", "assignment"),  # one word, named by the sentence
        ("psexec \\\\host01 -u ops -p marmalade cmd.exe", "assignment"),
        ('the passphrase was "open sesame" until rotation', "assignment"),
        # letters in random case are no words, so no name (`SlXmQpRvKtWbNy` made up)
        ("ENV DEPLOY_TOKEN=SlXmQpRvKtWbNy_live", "assignment"),
        ("  apiKey: SlXmQpRvKtWbNy_live", "assignment"),
        ("<apiToken>SlXmQpRvKtWbNy_live</apiToken>", "assignment"),
        ('export SERVICE_API_TOKEN="SlXmQpRvKtWbNy_live"', "assignment"),
        # a value element after a secret-named key or name element, as `name:`/`value:` pairs are
        ("<entry>\n  <key>db_password</key>\n  <value>Vq3mTz9Lk</value>\n</entry>", "assignment"),
        ("<env><name>API_TOKEN</name><value>Vq3mTz9Lk</value></env>", "assignment"),
        # a default passed to an environment look-up, a definition through a call
        ('os.getenv("DB_PASSWORD", "Vq3mTz9Lk")', "assignment"),
        ('x = os.environ.get("api_token", "Vq3mTz9Lkw2")', "assignment"),
        ("define('DB_PASSWORD', 'Vq3mTz9Lk');", "assignment"),
        ("'password' => env('DB_PASSWORD', 'Vq3mTz9Lk'),", "assignment"),
        ('ENV.fetch("SECRET_TOKEN", "Vq3mTz9Lkw2")', "assignment"),
        # a random value with `fake` or `dummy` inside is still random (values made up)
        ("aws_secret: Zq8mRt2vLp9xFAKEW3nB7cK4hJ6sQpT2/Xr", "assignment"),
        ('secret_key = "Zq8mRt2vLp9xDUMMYW3nB7cK4hJ6s"', "assignment"),
        # curl's proxy credentials, as its `-u user:password`
        ("curl --proxy-user ops:Vq3mTz9Lk https://x.test", "basic_auth"),
        ("curl -U ops:Vq3mTz9Lk -x proxy:3128 https://x.test", "basic_auth"),
    ],
)
def test_generic_secrets_without_a_known_format_are_found(line: str, kind: str) -> None:
    assert secret_kinds(line) == Counter({kind: 1})


@pytest.mark.parametrize(
    "line",
    [
        'password = "Enter your password"',
        'password: "must be 8 chars"',
        'password = "******"',
        'password = "not set"',  # notes about the value, not a passphrase
        "password = 'see below'",
        'secret = "is required"',
        'password = "your password"',
        'this.addPassword = "#add-password"',  # selectors and element ids
        "var secretField = '.secret-field-input'",
        "password: '#userPassword'",
        "Endpoint=sb://x.test/;SharedAccessKeyName=Root;SharedAccessKey=[Shared Access key goes here]",
        "x.password=a.b;y=2",
        'login("bob", "password")',
        "machine x login bob password $PW",
        "token = peek()",
        # command-line flags that are no password
        "mkdir -p build/output",
        "ssh -u deploy -p 2222 host",
        "docker run -u 1000 -p 8080:80 image",
        "Set-Thing -Password $securePassword",
        "Get-Cred -Password (Read-Host -AsSecureString)",
        "msbuild /u:ci /p:Configuration=Release",
        "the password is 'not set'",
        "the password is 'required'",
        "password policy:\n  password requirements are strict",
        "login bob\npassword $NETRC_PASSWORD",
        "# reset it\npassword changes take effect at once",
        'sb.append("UserPassword: " + getUserPassword() + ",");',  # code between two literals
        "--set global.licenseKey=a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6",  # documentation's counting
        "the password is 'unknown'",
        # names of words, camel case included, are still names
        "password: getUserPasswordFromVault",
        "token = refresh_token_prefix",
        "secret: SOME_SECRET_NAME_HERE",
        "token = getUserNameFromVault",
        "<key>password</key>\n<value></value>",
        "<key>password</key>\n<value>${DB_PASSWORD}</value>",
        "<name>tokenizer</name>\n<value>whitespace</value>",
        'os.getenv("DB_PASSWORD", "")',
        "define('DB_PASSWORD', 'password_here');",
        'os.getenv("DB_PASSWORD", DEFAULT_PASSWORD)',
        'field("password", "Vq3mTz9Lk")',  # any other call: its second argument must look random
        'password = "fake-password-for-tests"',  # the marks still make words a stand-in
        'api_token = "dummy_token_value_here"',
        "token: fake_Zq8mRt2vLp9x",
        "curl --proxy-user ops:$PROXY_PW https://x.test",
        "sort -U a:b",
        "pip install -U https://example.test/pkg/archive/main.tar.gz",  # `-U` upgrades: a URL, no user
    ],
)
def test_their_look_alikes_are_kept(line: str) -> None:
    assert secret_kinds(line) == Counter()


# --- the high-entropy rule (tokens of no known format next to a secret-ish word) ---------------
_RANDOM = "Qm9vdF4xZk3pL8sT2vW7yB5nR0cX"  # made up: mixed case and digits, 28 characters


@pytest.mark.parametrize(
    "text",
    [
        f"Unseal Key 1: {_RANDOM}",
        f"vault operator unseal {_RANDOM}Zp9=",
        f"# Größe des API token (non-ASCII: the rule's `re` path)\n{_RANDOM}",
        f"# staging API token (rotate monthly)\n{_RANDOM}",
        f'client.connect(host, 443, "{_RANDOM}")  # the token',
        f"curl -X POST https://hooks.example.test/services/{_RANDOM}xYz9 # webhook token",
        "totp secret for the bot: JRLM52B7TVY6GHDNOAFPGZ3JYZIIFXYK",
    ],
)
def test_a_high_entropy_token_on_a_keywords_line_or_the_next_is_redacted(text: str) -> None:
    assert secret_kinds(text) == Counter({"high_entropy": 1})


@pytest.mark.parametrize(
    "text",
    [
        f"# staging API token (rotate monthly)\n\n{_RANDOM}",  # two lines below: too far
        f"config = load()\n{_RANDOM}",  # no secret-ish word
        "token rotation landed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        'api_key_id = "3f2b8c1e-9d4a-4e7b-8a6f-1c2d3e4f5a6b"',
        '"integrity": "sha512-Zf3D0LXCM3EIMbgJpUNnkRtOfOueHznBq4bI5sKqzLq0iWq0hGk1xYv3Pz8u9T1cZ2wDnA==",',
        "golang.org/x/oauth2 v0.21.0 h1:tsimM75w1tF/uws5rbeHzIWxEqElMehnc+iW793zsZs=",
        'src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42" alt="auth"',
        "secret = workInProgress2.memoizedState || fallbackState2",
        'token_path = "src/auth/providers/oauth2_token_store_v2.py"',
        'url = "https://files.example.test/94/a5/38c21d0e731bb716cffcf987bd9a3555cb95877ab4b6/google_auth.tgz"',
    ],
)
def test_look_alikes_next_to_a_keyword_are_kept(text: str) -> None:
    assert secret_kinds(text) == Counter()


def test_a_rule_that_names_the_format_wins_over_the_high_entropy_rule() -> None:
    token = "ghp_" + made_up(36)
    assert secret_kinds(f"# the CI token\n{token}") == Counter({"github_token": 1})


def _regions(monkeypatch: pytest.MonkeyPatch, line: str) -> list[int]:
    """The length of each region the high-entropy rule examines while scanning `line`."""
    examined: list[int] = []
    real = tokens_near_keyword

    def counting(
        text: str, lo: int, hi: int, is_patch: bool, add: secret_scan.AddSpan, data: bytes | None = None
    ) -> None:
        examined.append(hi - lo)
        real(text, lo, hi, is_patch, add, data)

    monkeypatch.setattr(secret_scan, "tokens_near_keyword", counting)
    assert secret_kinds(line) == Counter()
    return examined


def test_the_high_entropy_rule_examines_each_character_once_however_many_keywords(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Keywords every few characters on one long line, each region with a candidate run.

    (`abcdefghij1`: a digit after ten run characters, too short to report.) The regions stay
    within the line and, summed, are at most its length: each starts where the last one ended.
    """
    for length in (50_000, 100_000):
        line = "n.token=f(abcdefghij1);o.secret=g(b);p.auth=h(c);" * (length // 49)
        examined = _regions(monkeypatch, line)
        # a region at every segment past the first window (which the first region covers whole)
        assert len(examined) >= (length - secret_scan.WINDOW_AFTER) // 49
        assert sum(examined) <= len(line) + secret_scan.WINDOW_AFTER


def test_a_keyword_region_without_a_candidate_run_is_not_examined(monkeypatch: pytest.MonkeyPatch) -> None:
    """No run of ten characters beside a digit near the keywords: the rule examines nothing."""
    line = "n.token=f(a);o.secret=g(b);p.auth=h(c);" * 2_000
    assert _regions(monkeypatch, line) == []
    text = "x = 1\n# the auth token\nabcdefghij1"  # a candidate on the next line: one region
    assert _regions(monkeypatch, text) == [len(text) - len("x = 1\n")]


def test_a_text_without_a_candidate_run_is_searched_by_the_other_rules_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No run the high-entropy rule could report: its keywords are no hits, the other rules' still are.

    Counted by the keyword regions asked for (`_region_end`), which the scan skips there.
    """
    regions: list[int] = []
    real = secret_scan._region_end

    def counting(text: str, hi: int) -> int:
        regions.append(hi)
        return real(text, hi)

    monkeypatch.setattr(secret_scan, "_region_end", counting)
    plain = "n.token=f(a);o.secret=g(b);\npassword = 'Vq3mTz9L'\nl = 'Größe ändern'"
    assert secret_kinds(plain) == Counter({"assignment": 1})
    assert regions == []
    # a candidate anywhere (here in a non-ASCII text, far from the keyword): every keyword is a hit
    with_run = "l = 'Größe ändern'\n# the auth token\nXq7Lm2Rt9Vb4Nz8Kd3Hs6Wp1"
    assert secret_kinds(with_run) == Counter({"high_entropy": 1})
    assert regions


# --- prefixed tokens: a short prefix, a separator and a random body, whatever the provider ------
_BODY = "Xq7Lm2Rt9Vb4Nz8Kd3Hs6Wp1"  # made up: digits, upper and lower case, no words


@pytest.mark.parametrize(
    "text",
    [
        f"<value>zqx_{_BODY}</value>",
        f'client = Client("acme-{_BODY}")',
        f"# rotated 2026-03-01: ab1.{_BODY}",
        f"+    headers = {{'X-Api': 'qpv9_{_BODY}'}}",
    ],
)
def test_a_prefixed_random_token_is_redacted_without_a_keyword_or_a_known_format(text: str) -> None:
    assert secret_kinds(text) == Counter({"prefixed_token": 1})


@pytest.mark.parametrize(
    "text",
    [
        "def test_user_2_permissions_view_Admin(self):",  # words
        "import src.auth.TokenStore2.providers",  # a dotted name
        f"https://cdn.example.test/assets/app-{_BODY}.js",  # a path segment
        f"url = https-{_BODY}",  # a URL scheme as the prefix
        f'"integrity": "sha512-{_BODY}"',  # a digest name as the prefix
        "version = v1.2.3-beta.4+build.5678",
        "ab_xxxxxxxxxxxxxxxxxxxxxxxx",  # a placeholder body
        "ab_0123456789abcdef0123456789abcdef",  # hex, one case: a digest's look
        # stand-ins typed in order (issue 25, third round; values made up)
        "qpv_aAbBcCdDeEfFgGhHiIjJkKlLmMnN7390",
        "zqx_aBcDeFgHiJkLmNoPqRsT1234567890abcdefghij",
        "zqx_0123456789abcdefghijklmnopqrstuvwxyzABCD",
        # a catalogue prefix glued to a word: the catalogue's own boundary excludes it on purpose
        f"tokenhvs.{_BODY}Zq",
        f"mygsk_{_BODY}",
    ],
)
def test_prefixed_look_alikes_are_kept(text: str) -> None:
    assert secret_kinds(text).get("prefixed_token", 0) == 0


@pytest.mark.parametrize("token", [f"hvs.{_BODY}Zq", f"gsk_{_BODY}"])
def test_an_unglued_catalogue_prefix_is_still_its_own_formats_or_a_prefixed_token(token: str) -> None:
    """The glued case above aside, a catalogue prefix at a token boundary is redacted as before."""
    assert sum(secret_kinds(f"x = {token}").values()) == 1


@pytest.mark.parametrize(
    "value, is_stand_in",
    [
        ("aAbBcCdDeEfFgGhHiIjJ", True),
        ("aBcDeFgHiJkLmNoPqRsT1234567890abcdefghij", True),
        ("7890123456abcdefghij", True),
        (_BODY, False),
        ("Qm9vdF4xZk3pL8sT2vW7yB5nR0cX", False),
    ],
)
def test_a_run_typed_in_order_is_no_random_token(value: str, is_stand_in: bool) -> None:
    from graft_eval_pipeline.secrets.values import counted

    assert counted(value) is is_stand_in


@pytest.mark.parametrize(
    "line",
    [
        "STRIPE_KEY=sk_live_" + "A" * 24,  # one character typed over and over: a stand-in
        'stripe.api_key = "rk_test_' + "0" * 24 + '"',
        "DATABASE_URL=postgres://app:REPLACE_WITH_DB_PASSWORD@db.example.test/app",
        'MONGO = "mongodb://YOUR_USERNAME:YOUR_PASSWORD@cluster.example.test/app"',
        "password = 'replace-me'",
    ],
)
def test_stand_ins_by_shape_are_kept_even_in_a_known_format(line: str) -> None:
    assert secret_kinds(line) == Counter()


def test_a_twitter_bearer_tokens_run_of_as_is_no_stand_in() -> None:
    """A run of one character in the middle (Twitter's `AAAA…` prefix) is no stand-in: only at the end."""
    from graft_eval_pipeline.secrets.values import placeholder_shape

    assert not placeholder_shape("A" * 21 + "Mlhe8Kq2" + "A" * 8 + "0x9Qw" + _BODY)
    assert placeholder_shape("sk_live_" + "A" * 24)


@pytest.mark.parametrize(
    "line",
    [
        "CLOUDFLARE_API_TOKEN=cfut_Xq7Lm2Rt9Vb4Nz8Kd3Hs6Wp1Jc5Fg0Ty2Ue4Io6P0c4e1a9b",
        'cf = Cloudflare(api_token="cfat_Xq7Lm2Rt9Vb4Nz8Kd3Hs6Wp1Jc5Fg0Ty2Ue4Io6P0c4e1a9b")',
        "cfk_Xq7Lm2Rt9Vb4Nz8Kd3Hs6Wp1Jc5Fg0Ty2Ue4Io6P0c4e1a9b",
    ],
)
def test_cloudflares_scannable_credentials_are_their_own_format(line: str) -> None:
    assert secret_kinds(line) == Counter({"cloudflare_key": 1})


@pytest.mark.parametrize("prefix", ["+", "-", " "])
def test_a_prefixed_token_right_after_a_diff_lines_prefix_is_redacted(prefix: str) -> None:
    """The diff line's `+`/`-`/space is no part of the token: the left boundary lets it stand there."""
    patch = f"@@ -1,1 +1,1 @@\n{prefix}zqx_{_BODY}"
    assert secret_kinds(patch, is_patch=True) == Counter({"prefixed_token": 1})
    assert secret_kinds(f"x = 1\n{prefix}zqx_{_BODY}") == Counter({"prefixed_token": 1})


def test_a_prefixed_token_glued_to_a_plus_inside_a_line_is_still_no_token() -> None:
    """Inside a line a `+` before the prefix is part of a longer run (base64, a version)."""
    assert secret_kinds(f"x = a+zqx_{_BODY}").get("prefixed_token", 0) == 0


def test_a_rule_that_names_the_format_wins_over_the_prefixed_token_rule() -> None:
    token = "ghp_" + made_up(36)
    assert secret_kinds(f"<value>{token}</value>") == Counter({"github_token": 1})


def test_the_prefixed_token_rule_looks_at_most_one_line_window_per_anchor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A minified line of near misses: each anchor costs at most its window, and the pass moves on.

    Anchors every 40 characters (a prefix, `_` and a body with a digit and both cases, cut short
    by `/`): twice the line, twice the anchors, and no window wider than the limit.
    """
    from graft_eval_pipeline.secrets import entropy

    looked: list[int] = []
    real = entropy.prefixed_token_end

    def counting(text: str, start: int, hi: int) -> int | None:
        looked.append(hi - start)
        return real(text, start, hi)

    monkeypatch.setattr(entropy, "prefixed_token_end", counting)
    counts = []
    for length in (40_000, 80_000):
        looked.clear()
        line = "x=ab_Cd3efGh/" + "k;ab_Cd3efGhIjKl/mnoPq;" * (length // 23)
        assert secret_kinds(line) == Counter()
        counts.append(len(looked))
        assert max(looked) <= 4096
    assert counts[1] == pytest.approx(2 * counts[0], rel=0.01) and counts[0] >= 40_000 // 23


# --- issue 25's fifth round: stand-ins of a repeated unit, names, public keys, new formats ------
@pytest.mark.parametrize(
    "line",
    [
        'api_key = "abcd1234abcd1234abcd1234ABCD1234"',
        'iam_key: "abcd1234abcd1234abcd1234ABCD1234--__extra"',  # most of it one unit
        "TOKEN=ghp_" + "Ab1x" * 9,  # a known format whose body repeats a unit
        'secret = "deadbeefdeadbeefdeadbeef"',
    ],
)
def test_a_value_that_repeats_a_short_unit_is_a_stand_in(line: str) -> None:
    assert secret_kinds(line) == Counter()


def test_random_values_are_no_repeated_unit() -> None:
    from graft_eval_pipeline.secrets.values import repeated_unit

    values = [made_up(n, seed=seed) for seed in range(300) for n in (16, 24, 40, 64)]
    values += [made_up(n, "0123456789abcdef", seed) for seed in range(300) for n in (16, 32, 40)]
    assert not [v for v in values if repeated_unit(v)]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("label = MyWidget.atMost32CharactersLabel", Counter()),  # camel-case words: a name
        (f'Stripe("pk_live_{made_up(24)}")', Counter()),  # a publishable key is public
        (f"STRIPE_KEY=pk_test_{made_up(24, seed=1)}", Counter()),  # under a provider's key name too
        (f"STRIPE_SECRET=sk_live_{made_up(24)}", Counter({"stripe_key": 1})),
        (f"export PGPASSWORD=AVNS_{made_up(19)}", Counter({"aiven_token": 1})),
        (f'iam_key = "{made_up(44)}"', Counter({"assignment": 1})),
        (f"CLOUD_KEY: {made_up(44, seed=2)}", Counter({"assignment": 1})),
        (f'"slackKey": "{made_up(32, seed=3)}",', Counter({"assignment": 1})),  # a provider's name
        (f"GITLAB_KEY={made_up(40, seed=4)}", Counter({"assignment": 1})),
        (f'cache_key = "{made_up(40, seed=5)}"', Counter()),  # a bare `key` is still no secret name
    ],
)
def test_fifth_round_names_public_keys_and_formats(line: str, expected: Counter[str]) -> None:
    assert secret_kinds(line) == expected


def _repeated_unit_by_definition(value: str) -> bool:
    """`repeated_unit` without its shortcut: every unit's pairs counted."""
    core = "".join(c for c in value if c.isascii() and c.isalnum()).lower()
    if len(core) < 16:
        return False
    for unit in range(1, 9):
        run = longest = 0
        for a, b in zip(core, core[unit:], strict=False):
            run = run + 1 if a == b else 0
            longest = max(longest, run)
        if longest + unit >= 3 * unit and 5 * (longest + unit) >= 4 * len(core):
            return True
    return False


@given(
    unit=st.text(alphabet="ab1C-", min_size=1, max_size=9),
    copies=st.integers(0, 12),
    before=st.text(alphabet="xyz9_", max_size=8),
    after=st.text(alphabet="xyz9_", max_size=8),
)
def test_repeated_unit_shortcut_agrees_with_its_definition(
    unit: str, copies: int, before: str, after: str
) -> None:
    from graft_eval_pipeline.secrets.values import repeated_unit

    value = before + unit * copies + after
    assert repeated_unit(value) == _repeated_unit_by_definition(value)


# --- issue 25's eighth round: a name after a path, a type after a quote, a word, a call ----------
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("cat: /etc/passwd: permission denied", Counter()),  # a file's name in a path
        (f"passwd: {made_up(16)}", Counter({"assignment": 1})),
        ('name="acme_amazon_s3_files_access_key" id="acme-amazon-s3-files-access-key"', Counter()),
        (f'String access_key = "{made_up(24)}";', Counter({"assignment": 1})),  # a type before the name
        ("    api_key = fallback", Counter()),  # a lower-case word is no key
        ("    api_key = fallback42x", Counter({"assignment": 1})),
        ('api_key = "fallbackvalue"', Counter({"assignment": 1})),  # quoted: a value
        ("    password = fallback", Counter({"assignment": 1})),  # a password may be a word
        ("req.headers['Authorization'] = self.sign_request(req.method, req.url)", Counter()),
        (f"req.headers['Authorization'] = '{made_up(32)}'", Counter({"auth_header": 1})),
    ],
)
def test_eighth_round_paths_types_words_and_calls(line: str, expected: Counter[str]) -> None:
    assert secret_kinds(line) == expected


# --- issue 25's ninth round: a JSON Web Key's private members, its public ones kept -------------
_D, _X, _Y = made_up(43, seed=11), "mz4-" + made_up(39, seed=12), made_up(43, seed=13)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (f'{{"kty":"EC","crv":"P-256","d":"{_D}","x":"{_X}","y":"{_Y}"}}', Counter({"private_key": 1})),
        (f'{{"kty":"RSA","n":"{_X}","e":"AQAB","p":"{_D}","q":"{_Y}"}}', Counter({"private_key": 2})),
        (f'{{\\"kty\\":\\"OKP\\",\\"d\\":\\"{_D}\\"}}', Counter({"private_key": 1})),  # escaped in a string
        (f'{{"kty":"EC","crv":"P-256","x":"{_X}","y":"{_Y}"}}', Counter()),  # the public key alone
        (f'{{"d": "{_D}"}}', Counter()),  # no `kty` near: `d` names anything
        ('{"kty":"oct","k":"AAAAAAAAAAAAAAAAAAAAAA"}', Counter()),  # a stand-in
    ],
)
def test_a_json_web_keys_private_members_are_private_keys(line: str, expected: Counter[str]) -> None:
    assert secret_kinds(line) == expected


def test_a_json_web_keys_type_is_looked_for_on_nearby_lines_only() -> None:
    pretty = f'{{\n  "kty": "EC",\n  "crv": "P-256",\n  "d": "{_D}"\n}}'
    assert secret_kinds(pretty) == Counter({"private_key": 1})
    far = '{\n  "kty": "EC",\n' + '  "pad": "x",\n' * 100 + f'  "d": "{_D}"\n}}'
    assert secret_kinds(far) == Counter()  # `kty` more than 1,024 characters away


# --- issue 25's tenth round: annotated Azure keys, a named OpenAI key, a Kubernetes Docker config --
_ANNOTATED = made_up(52, seed=21) + "JQQJ99" + "CE" + made_up(16, seed=22) + "A" + made_up(7, seed=23)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (f"key = {_ANNOTATED}", Counter({"azure_key": 1})),
        (f"{_ANNOTATED}", Counter({"azure_key": 1})),  # bare: the signature names it
        (f"x{_ANNOTATED}", Counter()),  # glued to a longer run: no such key
        (
            f"OPENAI={'sk-ci-bot-' + made_up(20, seed=24) + 'T3BlbkFJ' + made_up(20, seed=25)}",
            Counter({"openai_key": 1}),
        ),
        (
            f"k = sk-or-{made_up(20, seed=26)}T3BlbkFJ{made_up(20, seed=27)}",
            Counter({"prefixed_token": 1}),
        ),  # not OpenAI's: OpenRouter's prefix
        (
            "  .dockerconfigjson: " + base64.b64encode(b'{"auths":{"r.example":{"auth":"dTpw"}}}').decode(),
            Counter({"basic_auth": 1}),
        ),
        ("  .dockerconfigjson: {{ .Values.pullSecret | b64enc }}", Counter()),
    ],
)
def test_tenth_round_annotated_keys_named_openai_keys_and_docker_configs(
    line: str, expected: Counter[str]
) -> None:
    assert secret_kinds(line) == expected


# --- issue 25's eleventh round: CloudFormation's dynamic references are no values ---------------
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("  MasterUserPassword: '{{resolve:secretsmanager:app/db:SecretString:password}}'", Counter()),
        ("  DbPassword: '{{resolve:secretsmanager:db:SecretString:password:AWSCURRENT}}'", Counter()),
        ("  API_TOKEN: '{{resolve:ssm-secure:/prod/api/token:3}}'", Counter()),
        (f"  ref: '{{{{resolve:ssm:/a}}}}' password: {made_up(16, seed=31)}", Counter({"assignment": 1})),
    ],
)
def test_cloudformation_dynamic_references_are_no_values(line: str, expected: Counter[str]) -> None:
    assert secret_kinds(line) == expected


# --- issue 25's twelfth round: a token as a URL's whole user part -------------------------------
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            f"git+https://{made_up(40, '0123456789abcdef', 41)}@github.example/o/r",
            Counter({"url_password": 1}),
        ),
        (f"https://{made_up(24, seed=42)}@gitlab.example/g/p.git", Counter({"url_password": 1})),
        ("https://release-automation-bot@github.example/o/r", Counter()),  # a user name
        ("git+https://abcdef0123456789abcdef0123456789abcdef01@github.example", Counter()),  # typed in order
    ],
)
def test_a_token_as_a_urls_user_is_a_url_password(line: str, expected: Counter[str]) -> None:
    assert secret_kinds(line) == expected


# --- issue 25's thirteenth round: literals compared with a secret's name, `pw`/`cred`, one-word passwords
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (f'if "{made_up(18, seed=51)}" == password {{', Counter({"assignment": 1})),
        (f"if ('{made_up(20, seed=52)}' !== user.apiToken) {{", Counter({"assignment": 1})),
        (f'assert "{made_up(24, seed=53)}" != client_secret', Counter({"assignment": 1})),
        ('assert "quokka" == user.password', Counter({"assignment": 1})),  # a password may be a word
        (f'if "{made_up(18, seed=54)}" == next_token {{', Counter()),  # a cursor, not a secret
        (f'if "{made_up(18, seed=55)}" == p {{', Counter()),  # no secret's name
        ('if "" == password {', Counter()),
        ('if "abc" == token {', Counter()),  # a token is no short word
    ],
)
def test_a_literal_compared_with_a_secrets_name_is_its_value(line: str, expected: Counter[str]) -> None:
    assert secret_kinds(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (f'pw = "{made_up(22, seed=56)}"', Counter({"assignment": 1})),
        (f'db_pw: "{made_up(22, seed=57)}"', Counter({"assignment": 1})),
        (f'adminPw := "{made_up(22, seed=58)}"', Counter({"assignment": 1})),
        (f'cred = "{made_up(40, B64, 59)}"', Counter({"assignment": 1})),
        (f'jpw = "{made_up(22, seed=60)}"', Counter()),  # `pw` inside a word
        ('pw = "quokka"', Counter()),  # `pw` is weak: only a random value
        # base64 holds `pw` about every thousand characters: no keyword of the high-entropy rule
        (f"{made_up(30, B64, 61)}pw/{made_up(60, B64, 62)}", Counter()),
    ],
)
def test_pw_and_cred_name_a_password(line: str, expected: Counter[str]) -> None:
    assert secret_kinds(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('db_password = "quokka"', Counter({"assignment": 1})),
        ('doLogin(password="wombat")', Counter({"assignment": 1})),
        ('d["password"] = "numbat"', Counter({"assignment": 1})),
        ("passphrase='4711'", Counter({"assignment": 1})),
        ('password = "password"', Counter()),  # stand-ins by word
        ('password = "changeme"', Counter()),
        ('f.Secret = "REDACT"', Counter()),
        ('password = "abc"', Counter()),  # three characters: too short to tell
        ('api_token = "wombat"', Counter()),  # a token is no word
        ("password = wombat", Counter()),  # unquoted: a name as likely as a value
    ],
)
def test_a_quoted_word_under_a_password_name_is_a_password(line: str, expected: Counter[str]) -> None:
    assert secret_kinds(line) == expected


# --- issue 25's fourteenth round: `pat`, `<provider>_key`, device configs, encoded stand-ins ----
HEX = "0123456789abcdef"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (f'BAMBOO_PAT="{made_up(44, B64, 71)}"', Counter({"assignment": 1})),
        (f"ado_pat = '{made_up(52, 'abcdefghijklmnopqrstuvwxyz234567', 72)}'", Counter({"assignment": 1})),
        (f'compat = "{made_up(30, seed=73)}"', Counter()),  # `pat` inside a word
        (f"clarifai_key = {made_up(32, HEX, 74)}", Counter({"assignment": 1})),
        (f"GIT-KEY: {made_up(40, HEX, 75)}", Counter({"assignment": 1})),  # 40 digits under a key's name
        (f'builder_key: "bpk-{made_up(32, HEX, 76)}"', Counter({"assignment": 1})),  # a provider's prefix
        (f"cielo_merchant_key = {made_up(40, seed=77)}", Counter({"assignment": 1})),
        (f'sort_key = "{made_up(40, seed=78)}"', Counter()),  # a table's key, whatever its value
        (f'gpg_key: "{made_up(40, HEX, 79).upper()}"', Counter()),  # a public key's fingerprint
        ('idempotency_key = "order-2026-11-30-000123"', Counter()),
        (f'cellKey = "{made_up(32, seed=80)}"', Counter()),  # camel case: `key` is no word of its own
        (f"key = {made_up(32, HEX, 81)}", Counter()),  # a bare `key` names nothing
    ],
)
def test_pat_and_a_providers_key_name_a_random_value(line: str, expected: Counter[str]) -> None:
    assert secret_kinds(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("enable password Qx7#pLm2v", Counter({"device_config": 1})),
        ("enable secret 5 $1$mERr$hx5rVt7rPNoS4wqbXKX7m0", Counter({"device_config": 1})),  # MD5-crypt
        (" username ops privilege 15 secret 0 Vb4n8Kq2z", Counter({"device_config": 1})),
        ("snmp-server community Nq8vT3w RW", Counter({"device_config": 1})),
        ("tacacs-server key 7 0822455D0A16", Counter({"device_config": 1})),
        ("snmp-server community public RO", Counter()),  # SNMP's default: a word
        ("enable password <password>", Counter()),
        ("# run `enable password Qx7#pLm2v` on the switch", Counter()),  # prose, not a config line
    ],
)
def test_a_network_devices_config_secrets(line: str, expected: Counter[str]) -> None:
    assert secret_kinds(line) == expected


def test_base64_of_a_stand_in_phrase_is_a_stand_in() -> None:
    stand_in = base64.b64encode(b"dummy value for the docs").decode()
    real = base64.b64encode(bytes(range(7, 37))).decode()
    assert secret_kinds(f"SERVICE_KEY = {stand_in}") == Counter()
    assert secret_kinds(f"password: {base64.b64encode(b'correct horse battery').decode()}") == Counter(
        {"assignment": 1}
    )  # a phrase without a stand-in word: a password's base64 (a Kubernetes Secret's value)
    assert secret_kinds(f"SERVICE_KEY = {real}") == Counter({"assignment": 1})


# --- issue 25's fifteenth round: password hashes, pre-filled password fields, a provider's scheme,
# an id and a secret under a key's name
DOT64 = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


@pytest.mark.parametrize(
    ("line", "digest"),
    [
        (f"$1${made_up(8, DOT64, 91)}${made_up(22, DOT64, 92)}", made_up(22, DOT64, 92)),
        (f"admin:$2b$12${made_up(53, DOT64, 93)}", made_up(53, DOT64, 93)),
        (
            f"root:$6$rounds=656000${made_up(16, DOT64, 94)}${made_up(86, DOT64, 95)}:19000:0:99999:7:::",
            made_up(86, DOT64, 95),
        ),
        (f"$5${made_up(16, DOT64, 96)}${made_up(43, DOT64, 97)}", made_up(43, DOT64, 97)),
        (f"$8${made_up(14, DOT64, 98)}${made_up(43, DOT64, 99)}", made_up(43, DOT64, 99)),
        (
            f"$krb5asrep$23$svc@corp.internal:{made_up(32, HEX, 100)}${made_up(96, HEX, 101)}",
            made_up(96, HEX, 101),
        ),
    ],
)
def test_a_password_hash_is_redacted(line: str, digest: str) -> None:
    """crypt(3)'s formats and Kerberos' AS-REP: cracked offline, so redacted like the password."""
    assert secret_kinds(line) == Counter({"password_hash": 1})
    assert digest not in redact_text(line, RedactOptions(), Counter(), is_patch=False)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('<input type="password" value="Qx7#pLm2v9" name="db_password" />', Counter({"assignment": 1})),
        ("<INPUT VALUE='Vb4n8Kq2z!' TYPE='PASSWORD'>", Counter({"assignment": 1})),  # any order, any case
        ('<input type="password" value="{{ form.password }}">', Counter()),  # a template's reference
        ('<input type="password" value="">', Counter()),
        ('<input type="text" value="Qx7#pLm2v9">', Counter()),  # not a password field
    ],
)
def test_a_pre_filled_password_field(line: str, expected: Counter[str]) -> None:
    assert secret_kinds(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            f"Authorization: sso-key {made_up(36, seed=102)}:{made_up(22, seed=103)}",
            Counter({"auth_header": 1}),
        ),
        (f"Authorization: DeepL-Auth-Key {made_up(24, seed=104)}", Counter({"auth_header": 1})),
        ("Authorization: Please see the docs", Counter()),  # prose after the header's name
        (
            f"FAL_KEY={made_up(8, HEX, 105)}-{made_up(4, HEX, 106)}:{made_up(32, HEX, 107)}",
            Counter({"assignment": 1}),
        ),
        (f'cache_key = "user:{made_up(32, HEX, 108)}"', Counter()),  # a cache's key, id or not
    ],
)
def test_a_providers_scheme_and_an_id_with_its_secret(line: str, expected: Counter[str]) -> None:
    assert secret_kinds(line) == expected
