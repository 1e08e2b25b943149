"""Writes the sixth held-out secret corpus (earlybird.jsonl, earlybird_negative.jsonl) beside this file.

Run: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_earlybird.py COPY
 or: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_earlybird.py --clone EARLYBIRD_CLONE

The source is the rule examples and Go test data of EarlyBird (americanexpress/earlybird,
Apache-2.0), American Express' secret and sensitive-data scanner. COPY is a folder laid out as the
repository holding the files `FILES` names (each at its commit); with `--clone` they are read out
of a local git clone with `git show COMMIT:PATH`. Nothing is fetched from the network. The YAML is
read with PyYAML; the Go is not compiled: its string literals (interpreted `"…"` with escapes, raw
`` `…` ``) are read out of the test tables by regular expressions, and each table's rows are
counted against its `want…:` fields, so that no row is missed.

Labels, as the source gives them:

- `config/rules/*.yaml`: every rule has an `Example:` its pattern is meant to find. A positive is
  the example of a rule of category `password-secret` or `key`; examples of the other categories
  (`pii`, `infrastructure`, `comment`, `insecure-crypto`) are left out, counted.
- `pkg/scan/falsePositives_test.go`: `Hit{Code, Filename, MatchValue | LineValue}` rows with
  `wantIsFP`: `false` (the finding stands) is a positive, `true` (the false-positive filter drops
  it) a negative. Only rows whose `Code` is a rule of those two categories in the rule files read;
  the others (6008, an account-token rule in no rule file read, which the test calls an
  "encrypted CC number"; 20014, inclusive language) are left out, counted.
- `pkg/postprocess/*_test.go`: the inputs of the post-processors that decide whether a finding
  stands: `PasswordFalse`, `SkipPasswordWithUnicode`, `SkipPasswordWithHTMLEntities`
  (`wantIgnore`), `SkipSameKeyValue` (`wantIgnore`; its `lineValue`), `IsBasicAuthHeader`,
  `IsValidJWT`, `IsPrivatePem` (`isSecret`). `wantIgnore: false` / `isSecret: true` is a
  positive, else a negative; `IsPrivatePem`'s inputs that are no key file at all are left out.
- `pkg/scan/scan_test.go`: the line `TestScanFiles` scans (`wantCode: 3001`, the password rule)
  and the `Test_scanLine` rows (`wantIsHit`); `pkg/api/api_test.go`: the file `TestScan` posts,
  asserting hits.

Positives: the line (or example, or post-processor input) unchanged. The source says only "this
holds a secret", so the secret is the value a scanner would capture, by the first of these rules
that applies (`secret_of`, decided before the values were looked at): the body of a PEM private
key block; the password of a URL's `user:password@`; the text of an XML element; the credentials
after `Basic `; the value of an assignment `NAME = value` (or `:`, `:=`; NAME optionally quoted,
possibly dotted or with a type annotation), the value's quotes left out, an unquoted value up to
white space; the text of a line that is one quoted string; else the line itself when it is one
token. A positive whose line yields none of these is left out, counted. Negatives: the rows the
source says must not be reported, unchanged. Left out as well: a line labelled both ways (the
same text a secret in one file type and not in another: the test tells them apart by the file
name, a line corpus cannot), repeated lines (the first kept), and secrets that are placeholders
by our policy's shape (`placeholder_shape`). Nothing is filtered by whether our redactor finds
them.
"""

# ruff: noqa: E501  (FILES, LEFT_OUT: one repository path and commit a line)
from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from graft_eval_pipeline.secrets.values import placeholder_shape

HERE = Path(__file__).parent
REPO = "americanexpress/earlybird"
LICENCE = "Apache-2.0"

FILES: dict[str, str] = {
    # Each file as copied (path in the repository -> commit it was stored under).
    "config/rules/content.yaml": "2a8404a1e9c2ab00a72405e86b4b0a0c314e52f0",
    "config/rules/password-secret.yaml": "15b0735220a662a84cdf8f9e8be684d5975f2d03",
    "pkg/api/api_test.go": "2a8404a1e9c2ab00a72405e86b4b0a0c314e52f0",
    "pkg/postprocess/basicAuthHeader_test.go": "44124e5778be390e48eec47a3a855ceb788a09b6",
    "pkg/postprocess/jwt_test.go": "c9b653d4ce0ddd0a3c7dd0b36c7dae797e62f8d3",
    "pkg/postprocess/pem_test.go": "471d1aff8a047601e186b6664948c51655b8c39f",
    "pkg/postprocess/skipSameKeyValue_test.go": "ba42b884d7b77f911d270b9e7e3f291f239baa7b",
    "pkg/postprocess/validatePassword_test.go": "02c8307ce4c400f79ed3d25867b9e18b22cf737f",
    "pkg/scan/falsePositives_test.go": "25fc9143a3f227c963e34ea6bc9cc03cfabb983e",
    "pkg/scan/scan_test.go": "2a8404a1e9c2ab00a72405e86b4b0a0c314e52f0",
}

LEFT_OUT: dict[str, str] = {
    # Test data of the repository not used, and why (decided before building).
    "config/rules/ccnumber.yaml": "card-number examples (category cc-number), not credentials",
    "config/rules/filename.yaml": "rules on file names (`file.pem`, `.bashrc`): the examples are names, not secrets",
    "config/rules/inclusivity-rules.yaml, config/labels/, config/solutions/": "inclusive-language rules, labels and advice texts, not secrets (not read)",
    "config/falsepositives/*.yaml": "patterns and file extensions only, no example strings (false-positives.yaml and javascript-false-positives.yaml read; the other three not read)",
    "config/*.json (content.json, false-positives.json, …)": "the older JSON form of the same rules (content.json read: the same examples as the YAML rules)",
    "config/rules/content.yaml, examples of categories pii, infrastructure, comment, insecure-crypto": "not secrets (counted in the build)",
    "pkg/scan/falsePositives_test.go, Test_falsePositiveInclusivity and the code 6008 rows": "inclusive language; an account-token rule in no rule file read, which the test calls an encrypted card number (counted in the build)",
    "pkg/postprocess/pem_test.go, its three inputs that are no key file; pgp_test.go; jks_test.go": "inputs such as `Random Binary Data` or `Non-pem File`: no key syntax, not look-alikes (pgp_test's one positive row is commented out)",
    "pkg/postprocess/entropy_test.go": "the Shannon entropy of two strings, not detection",
    "pkg/postprocess/passwordStrength_test.go": "a strength score (`PasswordWeak`), not whether a finding is reported",
    "pkg/postprocess/luhn_test.go, validateSSN_test.go": "card numbers and social-security numbers, PII (not read)",
    "pkg/scan/scan_test.go Test_hitUnique, Test_labelHit, Test_determineSeverity; pkg/writers/*_test.go": "Hit records as inputs to de-duplication, labelling, severity and the report writers, not detection (jsonout_test.go read)",
    "pkg/scan/llm_scan_test.go": "the finding comes from a mocked LLM endpoint; the test checks the request and the parsing of the reply",
    "pkg/scan/scanUtil_test.go, ruleCfgReader_test.go, pkg/utils/utils_test.go, pkg/core/core_test.go, pkg/file/fileUtil_test.go, pkg/git/check_test.go, pkg/jks/*_test.go": "no strings labelled secret or not (file, URL, configuration, git-log and UTF-16 plumbing)",
    "pkg/file/test_data/ (sample.zip, .docx, .pdf, …)": "binary files, not stored as text",
    "README.md, docs/*.md": "documentation, no labelled examples (docs/FALSEPOSITIVES.md read: one false-positive rule, patterns only)",
}

RULE_FILES = ("config/rules/content.yaml", "config/rules/password-secret.yaml")
SECRET_CATEGORIES = frozenset({"password-secret", "key"})
FALSE_POSITIVES = "pkg/scan/falsePositives_test.go"

_GO_STRING = r'"(?:[^"\\\n]|\\.)*"|`[^`]*`'
_GO_ESCAPE = re.compile(r'\\(?:u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|[abfnrtv\\"\'])')
_GO_SIMPLE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _go_table(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`pattern` compiled with each `STR` standing for one Go string literal."""
    return re.compile(pattern.replace("STR", f"(?:{_GO_STRING})"), flags)


_FP_ROW = _go_table(
    r"name:\s*STR,\s*hit:\s*Hit\{\s*Code:\s*(?P<code>\d+),\s*Filename:\s*STR,\s*"
    r"(?:MatchValue|LineValue):\s*(?P<value>STR),\s*\},\s*wantIsFP:\s*(?P<want>true|false)"
)
_IGNORE_ROW = _go_table(
    r"^\s*(?:testPD|password|lineValue):\s*(?P<value>STR),\s*\n[\s\S]*?wantIgnore:\s*(?P<want>true|false)",
    re.MULTILINE,
)
_SECRET_ROW = _go_table(
    r"\{\s*STR,\s*(?P<value>STR|\[\]byte(?:\(STR\)|\{[\d,\s]+\})),\s*(?P<want>true|false),\s*\}"
)
_HIT_ROW = _go_table(r"LineValue:\s*(?P<value>STR),[\s\S]*?wantIsHit:\s*(?P<want>true|false)")
_LINE_VALUE = _go_table(r"LineValue:\s*(?P<value>STR),")
_POSTED = _go_table(r"part\.Write\(\[\]byte\((?P<value>STR)\)\)")
_FUNC = re.compile(r"^func (\w+)\(", re.MULTILINE)

_PEM = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----\n(.+?)\n-----END [A-Z ]*PRIVATE KEY-----", re.DOTALL)
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@")
_ELEMENT = re.compile(r"\s*<(\w+)>([^<>]+)</\1>\s*")
_BASIC = re.compile(r"\s*(?:Authorization:\s*)?Basic\s+([A-Za-z0-9+/]+=*)\s*")
_ASSIGNMENT = re.compile(
    r"\s*(?P<q>[\"']?)(?P<name>[^\s\"'=][^\"'=]*?)(?P=q)\s*(?::=|=|:)\s*"
    r"(?:(?P<v>[\"'])(?P<quoted>[^\"']+)(?P=v)|(?P<bare>[^\s\"'=]+=*))\s*[,;]?\s*"
)
_QUOTED = re.compile(r"\s*([\"'])([^\"']+)\1\s*")
_TOKEN = re.compile(r"[A-Za-z0-9+/=_.@#!$%^&*~-]+")


@dataclass(frozen=True)
class Candidate:
    """One labelled text of the source, before the left-out rules."""

    line: str
    positive: bool
    rule: str
    path: str


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


def _go_value(expression: str) -> str:
    """A string literal, or a `[]byte(…)` / `[]byte{…}` of one, as text."""
    if expression.startswith("[]byte{"):
        return bytes(int(n) for n in re.findall(r"\d+", expression)).decode("utf-8")
    if expression.startswith("[]byte("):
        return go_string(expression[len("[]byte(") : -1])
    return go_string(expression)


def secret_of(text: str) -> str | None:
    """The value a scanner would capture in one labelled text, by the rules above; None if none applies."""
    if pem := _PEM.search(text):
        return pem.group(1)
    if url := _URL_PASSWORD.search(text):
        return url.group(1)
    if element := _ELEMENT.fullmatch(text):
        return element.group(2)
    if basic := _BASIC.fullmatch(text):
        return basic.group(1)
    if assignment := _ASSIGNMENT.fullmatch(text):
        return assignment["quoted"] if assignment["quoted"] is not None else assignment["bare"]
    if quoted := _QUOTED.fullmatch(text):
        return quoted.group(2)
    return text if _TOKEN.fullmatch(text) else None


def _rows(pattern: re.Pattern[str], text: str, marker: str, path: str) -> list[tuple[str, str]]:
    """Each row `pattern` finds (its value, its `want…` field), checked against the number of rows `marker` counts."""
    rows = [(_go_value(m["value"]), m["want"]) for m in pattern.finditer(text)]
    expected = len(re.findall(marker, text, re.MULTILINE))
    assert len(rows) == expected, (path, len(rows), expected)
    return rows


def _functions(text: str) -> dict[str, str]:
    """The top-level Go functions of a file, by name, each up to the next `func`."""
    starts = list(_FUNC.finditer(text))
    ends = [m.start() for m in starts[1:]] + [len(text)]
    return {m.group(1): text[m.start() : end] for m, end in zip(starts, ends, strict=True)}


def rule_categories(copy: Path) -> dict[int, str]:
    """Each rule code of the rule files read, and its category."""
    categories: dict[int, str] = {}
    for path in RULE_FILES:
        for rule in yaml.safe_load((copy / path).read_text("utf-8"))["rules"]:
            categories[int(rule["Code"])] = str(rule["Category"])
    return categories


def candidates(copy: Path, corpus: Corpus) -> list[Candidate]:
    """Every labelled text of the files read, in the order of `FILES` and of each file."""
    found: list[Candidate] = []
    counters: Counter[str] = Counter()
    categories = rule_categories(copy)

    def add(line: str, positive: bool, family: str, path: str) -> None:
        found.append(Candidate(line, positive, f"{family}.{counters[family]}", path))
        counters[family] += 1

    for path in sorted(FILES):
        text = (copy / path).read_text("utf-8")
        stem = Path(path).name.removesuffix(".go").removesuffix("_test")
        if path in RULE_FILES:
            for rule in yaml.safe_load(text)["rules"]:
                example = rule["Example"]
                assert isinstance(example, str), rule["Code"]
                if rule["Category"] not in SECRET_CATEGORIES:
                    corpus.left_out["example of a rule not for secrets"] += 1
                    continue
                add(example, True, f"eb.{rule['Code']}", path)
        elif path == FALSE_POSITIVES:
            rows = list(_FP_ROW.finditer(text))
            assert len(rows) == text.count("wantIsFP:"), (path, len(rows))
            for row in rows:
                code = int(row["code"])
                if categories.get(code) not in SECRET_CATEGORIES:
                    corpus.left_out["test row of a rule not for secrets"] += 1
                    continue
                add(go_string(row["value"]), row["want"] == "false", f"eb.fp{code}", path)
        elif stem in ("validatePassword", "skipSameKeyValue"):
            for value, want in _rows(_IGNORE_ROW, text, r"\bwantIgnore:", path):
                add(value, want == "false", f"eb.{stem}", path)
        elif stem in ("basicAuthHeader", "jwt", "pem"):
            for value, want in _rows(_SECRET_ROW, text, r"^\t\t\t(?:true|false),$", path):
                if stem == "pem" and want == "false":
                    corpus.left_out["input that is no key file at all"] += 1
                    continue
                add(value, want == "true", f"eb.{stem}", path)
        elif stem == "scan":
            functions = _functions(text)
            scanned = _LINE_VALUE.findall(functions["TestScanFiles"])
            assert len(scanned) == 1 and "wantCode: 3001" in functions["TestScanFiles"], path
            add(go_string(scanned[0]), True, "eb.scan", path)
            body = functions["Test_scanLine"]
            for value, want in _rows(_HIT_ROW, body, r"\bwantIsHit:", path):
                add(value, want == "true", "eb.scan", path)
        elif stem == "api":
            posted = _POSTED.findall(text)
            assert len(posted) == 1 and "len(results.Hits) == 0" in text, path
            add(go_string(posted[0]), True, "eb.api", path)
        else:
            raise ValueError(f"{path}: no reader")
    return found


def build(copy: Path) -> Corpus:
    corpus = Corpus()
    found = candidates(copy, corpus)
    labels: dict[str, set[bool]] = {}
    for candidate in found:
        labels.setdefault(candidate.line, set()).add(candidate.positive)
    seen: set[str] = set()
    for candidate in found:
        line = candidate.line
        if len(labels[line]) > 1:
            corpus.left_out["line labelled both ways"] += 1
            continue
        if line in seen:
            corpus.left_out["repeated line"] += 1
            continue
        seen.add(line)
        tail: dict[str, object] = {
            "rule": candidate.rule,
            "source": _source(candidate.path),
            "licence": LICENCE,
        }
        if not candidate.positive:
            corpus.negatives.append({"line": line} | tail)
            continue
        secret = secret_of(line)
        if secret is None:
            corpus.left_out["no value to capture"] += 1
            continue
        assert secret in line, (candidate.rule, secret)
        if placeholder_shape(secret):
            corpus.left_out["placeholder by shape"] += 1
            continue
        entry: dict[str, object] = {"line": line, "secret": secret}
        if line.count(secret) > 1:
            entry["also_in_line"] = {secret: line.count(secret) - 1}
        corpus.positives.append(entry | tail)
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
    source.add_argument("--clone", type=Path, help="a git clone of americanexpress/earlybird")
    parser.add_argument("--out", type=Path, default=HERE, help="where the JSONL files go (default: here)")
    args = parser.parse_args()
    if args.clone:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = build(copy_from_clone(args.clone, Path(tmp)))
    else:
        corpus = build(args.copy)
    for name, entries in (
        ("earlybird.jsonl", corpus.positives),
        ("earlybird_negative.jsonl", corpus.negatives),
    ):
        (args.out / name).write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    families = {str(e["rule"]).rsplit(".", 1)[0] for e in corpus.positives}
    print(f"{len(corpus.positives)} positives of {len(families)} families; {len(corpus.negatives)} negatives")
    print(f"left out {sum(corpus.left_out.values())}: {dict(sorted(corpus.left_out.items()))}")


if __name__ == "__main__":
    main()
