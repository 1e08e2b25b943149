"""Writes the ninth held-out secret corpus (trivy.jsonl, trivy_negative.jsonl) beside this file.

Run: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_trivy.py COPY
 or: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_trivy.py --clone TRIVY_CLONE

The source is the test data of the secret scanner of Trivy (aquasecurity/trivy, Apache-2.0), Aqua
Security's scanner of images, file systems and repositories, whose built-in secret rules
(`aws-access-key-id`, `github-pat`, `private-key`, …) look for keys, tokens and passwords in
files. COPY is a folder laid out as the repository holding the files `FILES` names (each at its
commit); with `--clone` they are read out of a local git clone with `git show COMMIT:PATH`.
Nothing is fetched from the network. The Go is not compiled: `pkg/fanal/secret/scanner_test.go`
is read by a small reader of Go composite literals (string literals, `+`, `strings.Repeat`,
`filepath.Join`, the identifiers the test defines), and the reader asserts that it read as many
expected findings as the test defines (`… := types.SecretFinding{`, `… := openAIFinding(`), as
many test cases as the table has `name:` fields, that every defined finding is used by a case,
and the two configurations it relies on, so that nothing labelled is missed.

Labels, as the source gives them (`TestSecretScanner`): each case scans one file of `testdata/`
with one configuration and asserts, with `assert.Equal` on the whole result, the complete list of
findings (rule, first and last line, `Match`: the reported line with the secret masked by `*`,
and `Code`: the lines around it, masked alike). Only the cases whose configuration keeps Trivy's
built-in rules as they are read: `testdata/skip-test.yaml` (it only turns off the built-in allow
rule for test paths, `disable-allow-rules: [tests]`) and `testdata/config.yaml` (the same, plus one
rule `rule1` written for the tests, whose findings are left out). Other cases disable, enable or
allow rules, change severities or keywords: left out, counted.

- Positives: each finding of a built-in rule. The secret is the span Trivy masks: the cause lines
  of `Code` (its `Match` is the first) are aligned with the lines of the copied file at their
  numbers, the `*` of a masked line standing for any character, and the masked spans are the
  secret (one span a line; the lines of a multi-line key body joined by a newline); a span that
  begins and ends with the same quote has them left out (the Grafana rule masks them with the
  value). The text is the file's line, or for a key body over several lines the body with its
  BEGIN and END lines. A finding that does not align (the file version stored differs from the
  one the test read: a line missing, a value of another length) is left out, counted.
- Negatives: the lines of a file the case asserts no finding in, and the lines of a file outside
  every finding whose findings all align with the copy (the test asserts the whole list, so no
  other line is reported); rule `tv.unreported.<file>.<line number>`. Kept only lines with a run
  of at least 12 characters without white space that are not PEM armour, a caption (`length is
  too long:`), a comment or a lone XML tag: prose such as `End of file.` and `data1:` is no
  look-alike (decided before building).

Left out as well: test files `NOT_COPIED` names (path rules, a custom rule, non-UTF-8 bytes, a
publishable key), a text labelled both ways, repeated texts (the first kept), and secrets that are
placeholders by our policy's shape (`placeholder_shape`). Nothing is filtered by whether our
redactor finds them.
"""

# ruff: noqa: E501  (FILES, LEFT_OUT, NOT_COPIED: one repository path and commit a line)
from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from graft_eval_pipeline.secrets.values import placeholder_shape

HERE = Path(__file__).parent
REPO = "aquasecurity/trivy"
LICENCE = "Apache-2.0"

BASE = "pkg/fanal/secret"
SCANNER_TEST = f"{BASE}/scanner_test.go"
TESTDATA = f"{BASE}/testdata"

FILES: dict[str, str] = {
    # Each file as copied (path in the repository -> commit it was stored under).
    SCANNER_TEST: "3dd8127328ce119164a07b40225fea1ec1d4e16a",
    f"{TESTDATA}/config.yaml": "20d8f905f4f7dfcb19630b1846177d4e3fd49bff",
    f"{TESTDATA}/skip-test.yaml": "0337b655a15f5b8e45fde6f5613acffc8e7a9881",
    f"{TESTDATA}/alibaba-access-key-id.txt": "4efef0a1e04a9075bccc65a1f84578a9d60c343c",
    f"{TESTDATA}/asymmetric-private-key.txt": "112524f9e1c6da57351685a430e11e36fefbc317",
    f"{TESTDATA}/asymmetric-private-secret.json": "8e3d190fe11202d972e84f434a78194486d3fb38",
    f"{TESTDATA}/asymmetric-private-secret.txt": "b1fcc65fe6ce852c7f778f1eadd268d7c0a64f77",
    f"{TESTDATA}/aws-secrets.txt": "c0fc6f53793bebc7f33198ba1c29cd3725942726",
    f"{TESTDATA}/azure-ai-services-key.txt": "3dd8127328ce119164a07b40225fea1ec1d4e16a",
    f"{TESTDATA}/azure-app-config-connection-string.txt": "9cea8e14a81ac1bd00654506c57ac6343718f15d",
    f"{TESTDATA}/azure-container-registry-credential.txt": "1d383b636d447615f60261b319a462beebad6617",
    f"{TESTDATA}/azure-container-registry-password.txt": "69dcd18eff5c810948738644d9a2df79a470f0e0",
    f"{TESTDATA}/azure-devops-pat.txt": "1a285f5c7409bc1fd38e0736b7c4dd8a06089e66",
    f"{TESTDATA}/azure-entra-client-secret.txt": "1d383b636d447615f60261b319a462beebad6617",
    f"{TESTDATA}/azure-sas-token.txt": "9cea8e14a81ac1bd00654506c57ac6343718f15d",
    f"{TESTDATA}/azure-storage-account-key.txt": "9cea8e14a81ac1bd00654506c57ac6343718f15d",
    f"{TESTDATA}/builtin-rule-secret.txt": "b1fcc65fe6ce852c7f778f1eadd268d7c0a64f77",
    f"{TESTDATA}/crlf-line-endings.txt": "da8cfc9538fcf43b9fbddf60e1b8618fb662cb53",
    f"{TESTDATA}/docker-secrets.txt": "9cea8e14a81ac1bd00654506c57ac6343718f15d",
    f"{TESTDATA}/github-app-token.txt": "15415ac8a2e8c42accc1be0b26068a73e03030d5",
    f"{TESTDATA}/github-token.txt": "9f67a37cebac60d3aac0c003b2ab825e830101ff",
    f"{TESTDATA}/grafana-env.txt": "1f2798dd2b27a3224805631863920f7e4a2fb9fc",
    f"{TESTDATA}/hugging-face-secret.txt": "6e814003cdf227a28784c16163ee4fccd8e17ef0",
    f"{TESTDATA}/invalid-aws-secrets.txt": "b1fcc65fe6ce852c7f778f1eadd268d7c0a64f77",
    f"{TESTDATA}/jwt-secret.txt": "9cea8e14a81ac1bd00654506c57ac6343718f15d",
    f"{TESTDATA}/long-line-secret.txt": "9cea8e14a81ac1bd00654506c57ac6343718f15d",
    f"{TESTDATA}/openai-admin-api-key.txt": "b315ab9a03add3b425cbcfcf40adbcd67c96d80e",
    f"{TESTDATA}/openai-invalid.txt": "9cea8e14a81ac1bd00654506c57ac6343718f15d",
    f"{TESTDATA}/openai-legacy-api-key.txt": "3dd8127328ce119164a07b40225fea1ec1d4e16a",
    f"{TESTDATA}/openai-project-api-key.txt": "65e51285de53aa1cfb430cde59001c244fc5f0fd",
    f"{TESTDATA}/openai-realtime-client-secret.txt": "9cea8e14a81ac1bd00654506c57ac6343718f15d",
    f"{TESTDATA}/openai-service-account-key.txt": "b315ab9a03add3b425cbcfcf40adbcd67c96d80e",
    f"{TESTDATA}/openai-service-api-key.txt": "20a7ae2c83a30c9c1dd81c892925506345b88d0d",
    f"{TESTDATA}/private-packagist.txt": "9cea8e14a81ac1bd00654506c57ac6343718f15d",
    f"{TESTDATA}/settings-encrypted.xml": "9cea8e14a81ac1bd00654506c57ac6343718f15d",
    f"{TESTDATA}/settings-security.xml": "5dbfa71f975b113caa3fb5aee9c35582b0f4d6d9",
    f"{TESTDATA}/settings.xml": "c4a6bddb3e23f32abcc313fdb0473d037d08af48",
    f"{TESTDATA}/symfony-secret.yaml": "3ae18a656f02dadee9e9412faa76b9f08b97f4b3",
    f"{TESTDATA}/wrapped-secrets-sensitive.txt": "998ec414851b7fc1f23c485aa5191c0356d4c963",
    f"{TESTDATA}/wrapped-secrets.txt": "708658946ba636871b04feed0e1f680c664d9104",
}

NOT_COPIED: dict[str, str] = {
    # Files the built-in cases of TestSecretScanner scan that are not read, and why (decided before building).
    f"{TESTDATA}/secret.txt": "its findings are those of `rule1`, the rule config.yaml writes for the tests, not of a built-in rule",
    f"{TESTDATA}/secret.md": "not scanned: Trivy's built-in allow rule skips Markdown files by path, so its content is not labelled",
    f"{TESTDATA}/example-secret.txt": "not scanned: skipped for its file name (built-in allow rule for example files), so its content is not labelled",
    f"{TESTDATA}/obfuscated.js": "one finding, a Stripe publishable key (public by design, severity LOW), a stand-in of x's in a minified line of 6,586 characters",
    f"{TESTDATA}/invalid-utf8.txt": "bytes that are not UTF-8; the stored text (a U+FFFD in their place) cannot be checked against them",
}

LEFT_OUT: dict[str, str] = {
    # Test data of the repository not used, and why (decided before building).
    "scanner_test.go, the cases with another configuration than skip-test.yaml or config.yaml": "they disable, enable or allow rules (allow paths and regexes, exclude blocks), set keywords, severities or multi-line mode: what they assert is the configuration's effect (counted in the build)",
    "scanner_test.go, TestSecretScannerWithStreaming": "chunked reading: inputs built in code (padding of one repeated letter), the Code field cleared; the AWS and GitHub values repeat the files'",
    "scanner_test.go, TestParseConfig, TestIsSkippedSlashConversion": "configuration parsing and skip patterns: no text labelled",
    "builtin_rules_test.go, builtin_rules_azure_test.go": "one rule's regular expression run alone (`rule.Regex.FindStringSubmatch`) over inputs built with strings.Repeat of one character: a case without a hit is not reported by that rule only",
    "keyword_test.go, export_test.go": "keyword extraction and test plumbing, no text labelled reported or not",
    "other versions of scanner_test.go (0273cafc…, 6df59da4…, 140162c7…)": "older versions of the same test (fewer cases); the one read is the largest of those whose commit is known",
    "other versions of the test files (aws-secrets.txt at 140162c7… and b1fcc65f…, alibaba-access-key-id.txt at 5e2526a5…, asymmetric-private-key.txt at 01fa177d…, asymmetric-private-secret.json at 3c879d9e…, hugging-face-secret.txt at 9f67a37c…, settings.xml at 5dbfa71f…)": "read to compare; each misaligns with more of the test's findings than the version copied, or lacks lines the test shows",
    "testdata/*.yaml other than skip-test.yaml and config.yaml": "configurations of the cases left out (not read)",
    "pkg/fanal/secret/builtin-rules.go, builtin-allow-rules.go": "the rules themselves, not test data (not read)",
}

BUILTIN_CONFIGS = {f"{TESTDATA}/skip-test.yaml", f"{TESTDATA}/config.yaml"}
DISABLE_TEST_ALLOW_RULE = "disable-allow-rules:\n  - tests\n"
MIN_RUN = 12  # a negative line needs a run of this many characters without white space

_OPEN = {"(": ")", "[": "]", "{": "}"}
_GO_ESCAPE = re.compile(r'\\(?:u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|[abfnrtv\\"\'])')
_GO_SIMPLE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_FUNC = re.compile(r"^func (\w+)\(", re.MULTILINE)
_DEFINED = re.compile(
    r"^\t(?P<name>\w+) := (?P<kind>types\.SecretFinding\{|openAIFinding\(|strings\.Repeat\()", re.MULTILINE
)
_REPEAT = re.compile(r'strings\.Repeat\((?P<s>"(?:[^"\\]|\\.)*"), (?P<n>\d+)\)')
_JOIN = re.compile(r'filepath\.Join\((?P<args>"[^"]*"(?:, "[^"]*")*)\)')
_OPENAI_CALL = re.compile(r'^openAIFinding\("(?P<rule>[\w-]+)", "[^"]*", "[A-Z]+", (?P<n>\d+)\)$')
_CUSTOM_RULE = re.compile(r"^  - id: (\S+)$", re.MULTILINE)
_ARMOUR = re.compile(r"\s*-----(?:BEGIN|END) [A-Z0-9 ]*-----\s*")
_LONE_TAG = re.compile(r"\s*</?[A-Za-z][\w.-]*>\s*")
_RUN = re.compile(rf"\S{{{MIN_RUN},}}")


@dataclass(frozen=True)
class Line:
    """One line of a finding's `Code`: its number, its masked text, whether it is a cause."""

    number: int
    content: str
    cause: bool


@dataclass(frozen=True)
class Finding:
    rule: str
    start: int
    end: int
    match: str
    lines: tuple[Line, ...]


@dataclass(frozen=True)
class Case:
    name: str
    config: str
    path: str
    findings: tuple[Finding, ...]


@dataclass
class Corpus:
    positives: list[dict[str, object]] = field(default_factory=list)
    negatives: list[dict[str, object]] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)


def _source(path: str) -> str:
    return f"{REPO} {path}@{FILES[path]}"


def go_string(literal: str) -> str:
    """The value of one Go string literal: a raw `` `…` `` as it stands, an interpreted `"…"` unescaped."""
    body = literal[1:-1]
    if literal.startswith("`"):
        return body
    assert "\\" not in _GO_ESCAPE.sub("", body), f"an escape not read: {literal}"

    def unescape(found: re.Match[str]) -> str:
        code = found.group()[1:]
        if code[0] in "uUx":
            return chr(int(code[1:], 16))
        return _GO_SIMPLE.get(code, code)

    return _GO_ESCAPE.sub(unescape, body)


def _skip(text: str, i: int) -> int:
    """The index after the string literal or comment at `i`, or `i` if there is none."""
    if text.startswith("//", i):
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    if text[i] == "`":
        return text.index("`", i + 1) + 1
    if text[i] == '"':
        j = i + 1
        while text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        return j + 1
    return i


def _close(text: str, i: int) -> int:
    """The index of the bracket closing the one at `i`, strings and comments skipped."""
    depth, j = 0, i
    while True:
        k = _skip(text, j)
        if k != j:
            j = k
            continue
        if text[j] in _OPEN:
            depth += 1
        elif text[j] in ")]}":
            depth -= 1
            if depth == 0:
                return j
        j += 1


def _split(text: str, sep: str) -> list[str]:
    """`text` cut at `sep` outside brackets, strings and comments, comments left out, blanks dropped."""
    parts: list[str] = []
    kept: list[str] = []
    depth, j = 0, 0
    while j < len(text):
        k = _skip(text, j)
        if k != j:
            if not text.startswith("//", j):
                kept.append(text[j:k])
            j = k
            continue
        char = text[j]
        if char in _OPEN:
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == sep and depth == 0:
            parts.append("".join(kept).strip())
            kept = []
        else:
            kept.append(char)
        j += 1
    parts.append("".join(kept).strip())
    return [p for p in parts if p]


def _inner(literal: str) -> str:
    """The text between the braces of a composite literal (`types.Secret{…}`, `{…}`)."""
    open_at = literal.index("{")
    assert _close(literal, open_at) == len(literal) - 1, literal[:60]
    return literal[open_at + 1 : -1]


def _fields(literal: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for part in _split(_inner(literal), ","):
        key, _, value = part.partition(":")
        assert key.strip().isidentifier() and key.strip() not in found, part[:60]
        found[key.strip()] = value.strip()
    return found


def _value(expr: str, names: dict[str, str]) -> str:
    """A Go string expression: literals, `strings.Repeat(literal, n)` and names, joined with `+`."""
    out = []
    for term in _split(expr, "+"):
        if repeat := _REPEAT.fullmatch(term):
            out.append(go_string(repeat["s"]) * int(repeat["n"]))
        elif term in names:
            out.append(names[term])
        else:
            assert term[0] in '"`' and _skip(term, 0) == len(term), f"not a string: {term[:60]}"
            out.append(go_string(term))
    return "".join(out)


def _path(expr: str) -> str:
    """A path of the test (relative to its package) as a path in the repository."""
    if join := _JOIN.fullmatch(expr):
        return f"{BASE}/" + "/".join(go_string(a.strip()) for a in join["args"].split(","))
    return f"{BASE}/{go_string(expr)}"


def _finding(literal: str, names: dict[str, str]) -> Finding:
    fields = _fields(literal)
    lines = []
    for item in _split(_inner(_fields(fields["Code"])["Lines"]), ","):
        line = _fields(item)
        lines.append(Line(int(line["Number"]), _value(line["Content"], names), line.get("IsCause") == "true"))
    return Finding(
        go_string(fields["RuleID"]),
        int(fields["StartLine"]),
        int(fields["EndLine"]),
        _value(fields["Match"], names),
        tuple(lines),
    )


def _openai(call: str, function: str) -> Finding:
    """A finding of the test's helper `openAIFinding(rule, title, severity, length)`: one line, all masked."""
    assert all(
        f in function
        for f in (
            'masked := strings.Repeat("*", length)',
            "StartLine: 1,",
            "EndLine:   1,",
            "Match:     masked,",
            "Content:     masked,",
            "IsCause:     true,",
        )
    ), "openAIFinding is not the helper read"
    found = _OPENAI_CALL.fullmatch(call)
    assert found, call
    masked = "*" * int(found["n"])
    return Finding(found["rule"], 1, 1, masked, (Line(1, masked, True),))


def cases(copy: Path) -> list[Case]:
    """The cases of `TestSecretScanner`, each with its findings read out of the test's definitions."""
    text = (copy / SCANNER_TEST).read_text("utf-8")
    starts = list(_FUNC.finditer(text))
    ends = [m.start() for m in starts[1:]] + [len(text)]
    body = next(text[m.start() : e] for m, e in zip(starts, ends, strict=True) if m[1] == "TestSecretScanner")
    helper_at = body.index("openAIFinding := func(")
    helper = body[helper_at : _close(body, body.index("{", helper_at)) + 1]
    names: dict[str, str] = {}
    wanted: dict[str, Finding] = {}
    for found in _DEFINED.finditer(body):
        name, kind = found["name"], found["kind"]
        expr_at = found.end() - len(kind)
        if kind.startswith("strings.Repeat"):
            names[name] = _value(body[expr_at : body.index("\n", expr_at)], names)
        elif kind.startswith("openAIFinding"):
            wanted[name] = _openai(body[expr_at : body.index("\n", expr_at)], helper)
        else:
            wanted[name] = _finding(body[expr_at : _close(body, found.end() - 1) + 1], names)
    assert len(wanted) == body.count(" := types.SecretFinding{") + body.count(" := openAIFinding(")
    assert len(names) == 1 and len(wanted) == 52, (len(names), len(wanted))
    table_at = body.index("\ttests := []struct {")
    table_open = body.index("}{", table_at) + 1
    table = body[table_open : _close(body, table_open) + 1]
    entries = _split(_inner(table), ",")
    assert len(entries) == table.count("\n\t\t\tname:") == 62, len(entries)
    found_cases, used = [], set()
    for entry in entries:
        fields = _fields(entry)
        findings: list[Finding] = []
        want = _fields(fields["want"])
        if want.get("Findings", "nil") != "nil":
            for item in _split(_inner(want["Findings"]), ","):
                if item in wanted:
                    used.add(item)
                    findings.append(wanted[item])
                else:
                    findings.append(_finding(item, names))
        found_cases.append(
            Case(
                go_string(fields["name"]),
                _path(fields["configPath"]),
                _path(fields["inputFilePath"]),
                tuple(findings),
            )
        )
    assert used == set(wanted), sorted(set(wanted) - used)
    return found_cases


def _align(masked: str, line: str) -> int | None:
    """Where `masked` (a `*` standing for any character) sits in `line`, if in one place only."""
    if not masked.strip("*"):
        return 0 if len(masked) == len(line) else None
    fits = [
        a
        for a in range(len(line) - len(masked) + 1)
        if all(m == "*" or m == c for m, c in zip(masked, line[a : a + len(masked)], strict=True))
    ]
    return fits[0] if len(fits) == 1 else None


def _spans(masked: str, line: str, at: int) -> list[str]:
    values = []
    for run in re.finditer(r"\*+", masked):
        value = line[at + run.start() : at + run.end()]
        if len(value) > 1 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values.append(value)
    return values


def _aligned(finding: Finding, lines: list[str]) -> bool:
    """Whether every line of the finding's `Code` (and its `Match`) sits in the copied file."""
    causes = [c for c in finding.lines if c.cause]
    numbers = [c.number for c in causes]
    if numbers != list(range(finding.start, finding.end + 1)) or causes[0].content != finding.match:
        return False
    for code in finding.lines:
        if code.number > len(lines):
            return False
        if code.content == "":
            if lines[code.number - 1] != "":
                return False
        elif _align(code.content, lines[code.number - 1]) is None:
            return False
    return True


def _text_and_secrets(finding: Finding, lines: list[str]) -> tuple[str, list[str], range]:
    """The labelled text (a line, or a key block), its secrets, and the lines (0-based) it covers."""
    causes = [c for c in finding.lines if c.cause]
    first, last = finding.start - 1, finding.end - 1
    if len(causes) > 1:
        pieces = [_spans(c.content, lines[c.number - 1], 0) for c in causes]
        assert all(len(p) == 1 for p in pieces), finding.rule
        if first > 0 and _ARMOUR.fullmatch(lines[first - 1]):
            first -= 1
        if last + 1 < len(lines) and _ARMOUR.fullmatch(lines[last + 1]):
            last += 1
        return "\n".join(lines[first : last + 1]), ["\n".join(p[0] for p in pieces)], range(first, last + 1)
    line = lines[first]
    at = _align(causes[0].content, line)
    assert at is not None, finding.rule
    return line, _spans(causes[0].content, line, at), range(first, last + 1)


def _look_alike(line: str) -> bool:
    stripped = line.strip()
    return not (
        _RUN.search(stripped) is None
        or stripped.endswith(":")
        or _ARMOUR.fullmatch(line)
        or _LONE_TAG.fullmatch(line)
        or stripped.startswith(("#", "//"))
    )


def _check_configs(copy: Path) -> set[str]:
    """The two configurations read are what the builder assumes; the ids of config.yaml's own rules."""
    skip = (copy / f"{TESTDATA}/skip-test.yaml").read_text("utf-8")
    config = (copy / f"{TESTDATA}/config.yaml").read_text("utf-8")
    assert skip == DISABLE_TEST_ALLOW_RULE, skip
    assert config.endswith("\n\n" + DISABLE_TEST_ALLOW_RULE) and config.startswith("rules:\n"), config
    custom = set(_CUSTOM_RULE.findall(config))
    assert custom == {"rule1"}, custom
    return custom


def build(copy: Path) -> Corpus:
    corpus = Corpus()
    custom = _check_configs(copy)
    positives: list[tuple[str, list[str], str, str]] = []  # text, secrets, trivy rule, path
    negatives: list[tuple[str, str, str]] = []  # text, rule, path
    for case in cases(copy):
        if case.config not in BUILTIN_CONFIGS:
            corpus.left_out["case with another configuration"] += 1
            continue
        if case.path in NOT_COPIED:
            corpus.left_out[f"case on {case.path.rsplit('/', 1)[1]} (NOT_COPIED)"] += 1
            continue
        assert case.path in FILES, case.path
        lines = (copy / case.path).read_text("utf-8").replace("\r", "").split("\n")
        covered: set[int] = set()
        all_aligned = True
        for finding in case.findings:
            if finding.rule in custom:
                corpus.left_out["finding of config.yaml's own rule"] += 1
                all_aligned = False
                continue
            if not _aligned(finding, lines):
                corpus.left_out["finding not in the stored version of its file"] += 1
                all_aligned = False
                continue
            text, secrets, span = _text_and_secrets(finding, lines)
            covered.update(span)
            positives.append((text, secrets, finding.rule, case.path))
        if not all_aligned:
            continue
        stem = case.path.rsplit("/", 1)[1].rsplit(".", 1)[0]
        for number, line in enumerate(lines, 1):
            if number - 1 in covered:
                continue
            if _look_alike(line):
                negatives.append((line, f"tv.unreported.{stem}.{number}", case.path))
            elif line.strip():
                corpus.left_out["unreported line that is no look-alike (prose, caption, tag, short)"] += 1
    labels: dict[str, set[bool]] = {}
    for text, *_ in positives:
        labels.setdefault(text, set()).add(True)
    for text, *_ in negatives:
        labels.setdefault(text, set()).add(False)
    seen: set[str] = set()
    counters: Counter[str] = Counter()
    for text, secrets, rule, path in positives:
        if len(labels[text]) > 1:
            corpus.left_out["text labelled both ways"] += 1
            continue
        if text in seen:
            corpus.left_out["repeated text"] += 1
            continue
        seen.add(text)
        assert secrets and all(s and s in text for s in secrets), (rule, text[:60])
        kept = [s for s in secrets if not placeholder_shape(s)]
        if not kept:
            corpus.left_out["placeholder by shape"] += 1
            continue
        corpus.left_out["placeholder by shape, one of several secrets"] += len(secrets) - len(kept)
        counters[rule] += 1
        entry: dict[str, object] = {"line": text}
        entry |= {"secret": kept[0]} if len(kept) == 1 else {"secrets": kept}
        extra = {v: text.count(v) - 1 for v in kept if text.count(v) > 1}
        if extra:
            entry["also_in_line"] = extra
        entry |= {"rule": f"tv.{rule}.{counters[rule]}", "source": _source(path), "licence": LICENCE}
        corpus.positives.append(entry)
    for text, rule, path in negatives:
        if len(labels[text]) > 1:
            corpus.left_out["text labelled both ways"] += 1
            continue
        if text in seen:
            corpus.left_out["repeated text"] += 1
            continue
        seen.add(text)
        corpus.negatives.append({"line": text, "rule": rule, "source": _source(path), "licence": LICENCE})
    corpus.left_out = +corpus.left_out
    return corpus


def copy_from_clone(clone: Path, into: Path) -> Path:
    """Each file of `FILES` out of the git clone `clone`, at its commit, written under `into`."""
    for path, commit in FILES.items():
        shown = subprocess.run(
            ["git", "-C", str(clone), "show", f"{commit}:{path}"], check=True, capture_output=True
        )
        (into / path).parent.mkdir(parents=True, exist_ok=True)
        (into / path).write_bytes(shown.stdout)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("copy", nargs="?", type=Path, help="a folder laid out as the repository")
    source.add_argument("--clone", type=Path, help="a git clone of aquasecurity/trivy")
    parser.add_argument("--out", type=Path, default=HERE, help="where the JSONL files go (default: here)")
    args = parser.parse_args()
    if args.clone:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = build(copy_from_clone(args.clone, Path(tmp)))
    else:
        corpus = build(args.copy)
    for name, entries in (
        ("trivy.jsonl", corpus.positives),
        ("trivy_negative.jsonl", corpus.negatives),
    ):
        (args.out / name).write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    families = {str(e["rule"]).rsplit(".", 1)[0] for e in corpus.positives}
    print(f"{len(corpus.positives)} positives of {len(families)} rules; {len(corpus.negatives)} negatives")
    print(f"left out {sum(corpus.left_out.values())}: {dict(sorted(corpus.left_out.items()))}")


if __name__ == "__main__":
    main()
