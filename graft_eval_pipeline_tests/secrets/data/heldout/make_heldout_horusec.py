"""Writes the eighth held-out secret corpus (horusec.jsonl, horusec_negative.jsonl) beside this file.

Run: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_horusec.py COPY
 or: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_horusec.py --clone HORUSEC_CLONE

The source is the test data of the leaks engine of Horusec (ZupIT/horusec, Apache-2.0), Zup's
security-analysis CLI, whose leaks rules (`HS-LEAKS-1` … `HS-LEAKS-28`) look for keys, tokens and
passwords written in files. COPY is a folder laid out as the repository holding the files `FILES`
names (each at its commit); with `--clone` they are read out of a local git clone with
`git show COMMIT:PATH`. Nothing is fetched from the network. The Go is not compiled: the sample
constants of `samples.go` (raw `` `…` `` strings) and the test tables of `rules_test.go` are read
by regular expressions, and the reader asserts that it found as many test cases as each table has
`Name:` fields, as many findings as each case has `CodeSample:` fields, and that every sample
constant is used by exactly one case, so that nothing labelled is missed.

Labels, as the source gives them (`internal/utils/testutil/rules_test_generic.go`, read at
`0a9f3ec9…`, says what the two tables assert):

- `TestRulesVulnerableCode`: each case runs one rule (`Rule: NewAWSManagerID()`, …) over one
  sample (`Src: SampleVulnerableHSLEAKSn`) and lists its findings; `TestVulnerableCode` asserts
  exactly that many findings, each with the `CodeSample` (the reported line, white space around it
  left out) and the `SourceLocation` (line and column) given. Each finding is a positive: its
  `CodeSample`, asserted here to be line `Line` of the sample with white space around it left out.
- `TestRulesSafeCode`: each case runs the same rule over `SampleSafeHSLEAKSn`, and `TestSafeCode`
  asserts no finding (`assert.Empty`). Each safe sample, whole and unchanged, is a negative. The
  test runs only the case's own rule over it, so a negative is "not reported by the leaks rule it
  was written for", the label the source gives.

Positives: the reported line as the test gives it. Horusec says only "this line holds a leak", so
the secret is the value a scanner would capture, by the first of these rules that applies
(`secret_of`, written before the builder was first run): the body of a PEM private-key block
between its BEGIN and END lines (on one line or several), white space around it left out; the
password of a URL's `user:password@`; the value of a PHP `define('NAME', 'value')`; the value of
an assignment `NAME = value` (or `:`, `:=`; NAME optionally quoted), its quotes left out, an
unquoted value up to white space or a closing `,;)`; the line itself when it is one token. A
positive whose line gives none is left out, counted. Negatives: the safe samples, unchanged. Left
out as well: a text labelled both ways, repeated texts (the first kept), and secrets that are
placeholders by our policy's shape (`placeholder_shape`). Nothing is filtered by whether our
redactor finds them.
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

from graft_eval_pipeline.secrets.values import placeholder_shape

HERE = Path(__file__).parent
REPO = "ZupIT/horusec"
LICENCE = "Apache-2.0"

SAMPLES = "internal/services/engines/leaks/samples.go"
RULES_TEST = "internal/services/engines/leaks/rules_test.go"

FILES: dict[str, str] = {
    # Each file as copied (path in the repository -> commit it was stored under).
    RULES_TEST: "0a9f3ec9dd776f03cdccf3931c8000fc3d04990a",
    SAMPLES: "ae78215606717059277254586b8eccbb31f6438a",
}

LEFT_OUT: dict[str, str] = {
    # Test data of the repository not used, and why (decided before building).
    "internal/services/engines/leaks/samples_test.go, leaks/regular/regular_test.go": "earlier versions of the same tests (constants `SampleVulnerableLeaksRegular…`, one test function per rule): the same sample strings, read to compare",
    "a version of leaks/samples.go with SampleVulnerableHSPRIVACY1/2 (at 8c1c3871…)": "the same leaks samples plus two privacy samples (a document number logged, a CPF in a dict): PII, not credentials, and no leaks test names them",
    "the other lines of each vulnerable sample": "the YAML, Go or PHP around the reported line; the test asserts that its rule reports no other line, but they hold no password, key or token and are not look-alikes (`version: '3'`, `image: …`, imports)",
    "internal/services/engines/{csharp,dart,java,javascript,jvm,kotlin,kubernetes,nginx,nodejs,swift}/": "the language engines, not the leaks engine (only the rule lists of csharp, java and nodejs read): rules for injection, cryptography, TLS and configuration; two of the names read concern credentials (nodejs' MysqlHardCodedCredentialsSecuritySensitive, Java's DatabasesPasswordNotProtected), not read, the corpus being the leaks engine's",
    "internal/services/engines/rules_test.go, leaks/rule_manager.go": "rule counts and registration, no labelled text (not read)",
    "e2e/, internal/services/formatters/**/*_test.go": "end-to-end runs of the CLI and servers, and the parsing of third-party tools' outputs (gitleaks, …): no text labelled by a leaks rule (not read)",
    "README.md, docs": "documentation, no labelled examples",
}

_GO_STRING = r'"(?:[^"\\\n]|\\.)*"|`[^`]*`'
_GO_ESCAPE = re.compile(r'\\(?:u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|[abfnrtv\\"\'])')
_GO_SIMPLE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}

_CONSTANT = re.compile(r"^\t(?P<name>Sample(?:Vulnerable|Safe)HSLEAKS\d+) = `(?P<text>[^`]*)`", re.MULTILINE)
_FUNC = re.compile(r"^func (\w+)\(", re.MULTILINE)
_CASE = re.compile(
    r'\{\n\t\t\tName: "(?P<name>HS-LEAKS-(?P<n>\d+))",\n\t\t\tRule: (?P<rule>New\w+)\(\),\n'
    r"\t\t\tSrc:  (?P<src>Sample(?P<kind>Vulnerable|Safe)HSLEAKS(?P<m>\d+)),\n"
)
_FINDING = re.compile(
    rf"CodeSample: (?P<sample>{_GO_STRING}),\s*SourceLocation: engine\.Location\{{\s*"
    r"Line:\s*(?P<line>\d+),\s*Column:\s*(?P<column>\d+),\s*\}"
)

_PEM = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?P<body>.+?)-----END [A-Z0-9 ]*PRIVATE KEY", re.DOTALL
)
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@")
_DEFINE = re.compile(
    r"\s*define\(\s*(?P<q>[\"'])\w+(?P=q)\s*,\s*(?P<v>[\"'])(?P<value>[^\"']+)(?P=v)\s*\)\s*;?\s*"
)
_BARE = r"[^\s\"'`,;)]+"
_ASSIGNMENT = re.compile(
    r"\s*[\"']?(?P<name>[A-Za-z_][\w.-]*)[\"']?\s*(?::=|=|:)\s*"
    rf"(?:(?P<v>[\"'])(?P<quoted>[^\"']+)(?P=v)|(?P<bare>{_BARE}))\s*[,;)]*\s*"
)
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


def _functions(text: str) -> dict[str, str]:
    """The top-level Go functions of a file, by name, each up to the next `func`."""
    starts = list(_FUNC.finditer(text))
    ends = [m.start() for m in starts[1:]] + [len(text)]
    return {m.group(1): text[m.start() : end] for m, end in zip(starts, ends, strict=True)}


def _constants(text: str) -> dict[str, str]:
    """The sample constants of `samples.go`, by name, each checked to be read once."""
    found = {m["name"]: m["text"] for m in _CONSTANT.finditer(text)}
    assert (
        len(found) == len(_CONSTANT.findall(text)) == len(re.findall(r"^\tSample\w+ = ", text, re.MULTILINE))
    )
    return found


def _cases(body: str, kind: str) -> list[tuple[re.Match[str], str]]:
    """The test cases of one table, each with its text up to the next case."""
    cases = list(_CASE.finditer(body))
    assert len(cases) == body.count("Name:"), ("a case not read", kind)
    ends = [m.start() for m in cases[1:]] + [len(body)]
    for case in cases:
        assert case["kind"] == kind and case["n"] == case["m"], case.group()
    return [(m, body[m.end() : end]) for m, end in zip(cases, ends, strict=True)]


def candidates(copy: Path) -> list[Candidate]:
    """Every labelled text of the tables, by rule number: the rule's findings, then its safe sample."""
    constants = _constants((copy / SAMPLES).read_text("utf-8"))
    functions = _functions((copy / RULES_TEST).read_text("utf-8"))
    used: Counter[str] = Counter()
    by_rule: dict[int, list[Candidate]] = {}
    rules: dict[int, str] = {}
    for function, kind in (("TestRulesVulnerableCode", "Vulnerable"), ("TestRulesSafeCode", "Safe")):
        for case, rest in _cases(functions[function], kind):
            number = int(case["n"])
            assert rules.setdefault(number, case["rule"]) == case["rule"], case.group()
            src = constants[case["src"]]
            used[case["src"]] += 1
            texts = by_rule.setdefault(number, [])
            rule = f"hs.{case['name']}"
            if kind == "Safe":
                assert "CodeSample:" not in rest and "Findings:" not in rest, case["name"]
                texts.append(Candidate(src, False, rule, SAMPLES))
                continue
            findings = list(_FINDING.finditer(rest))
            assert findings and len(findings) == rest.count("CodeSample:"), (
                "a finding not read",
                case["name"],
            )
            lines = src.split("\n")
            for finding in findings:
                sample = go_string(finding["sample"])
                assert lines[int(finding["line"]) - 1].strip() == sample, (case["name"], sample)
                texts.append(Candidate(sample, True, rule, RULES_TEST))
    assert set(used) == set(constants) and set(used.values()) == {1}, "a sample not used once"
    assert set(by_rule) == set(range(1, len(by_rule) + 1)), sorted(by_rule)
    found: list[Candidate] = []
    for number in sorted(by_rule):
        texts = sorted(by_rule[number], key=lambda c: not c.positive)
        assert {c.positive for c in texts} == {True, False}, number
        found += [Candidate(c.line, c.positive, f"{c.rule}.{i}", c.path) for i, c in enumerate(texts)]
    return found


def secret_of(text: str) -> list[str]:
    """The values a scanner would capture in one labelled line, by the rules above; empty if none applies."""
    if pem := _PEM.search(text):
        return [pem["body"].strip()]
    value: str | None = None
    if url := _URL_PASSWORD.search(text):
        value = url.group(1)
    elif define := _DEFINE.fullmatch(text):
        value = define["value"]
    elif assignment := _ASSIGNMENT.fullmatch(text):
        value = assignment["quoted"] if assignment["quoted"] is not None else assignment["bare"]
    elif _TOKEN.fullmatch(text.strip()):
        value = text.strip()
    return [] if value is None else [value]


def build(copy: Path) -> Corpus:
    corpus = Corpus()
    found = candidates(copy)
    labels: dict[str, set[bool]] = {}
    for candidate in found:
        labels.setdefault(candidate.line, set()).add(candidate.positive)
    seen: set[str] = set()
    for candidate in found:
        line = candidate.line
        if len(labels[line]) > 1:
            corpus.left_out["text labelled both ways"] += 1
            continue
        if line in seen:
            corpus.left_out["repeated text"] += 1
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
        values = secret_of(line)
        if not values:
            corpus.left_out["no value to capture"] += 1
            continue
        assert all(v in line for v in values), (candidate.rule, values)
        kept = [v for v in values if not placeholder_shape(v)]
        if not kept:
            corpus.left_out["placeholder by shape"] += 1
            continue
        corpus.left_out["placeholder by shape, one of several secrets"] += len(values) - len(kept)
        entry: dict[str, object] = {"line": line}
        entry |= {"secret": kept[0]} if len(kept) == 1 else {"secrets": kept}
        extra = {v: line.count(v) - 1 for v in kept if line.count(v) > 1}
        if extra:
            entry["also_in_line"] = extra
        corpus.positives.append(entry | tail)
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
    source.add_argument("--clone", type=Path, help="a git clone of ZupIT/horusec")
    parser.add_argument("--out", type=Path, default=HERE, help="where the JSONL files go (default: here)")
    args = parser.parse_args()
    if args.clone:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = build(copy_from_clone(args.clone, Path(tmp)))
    else:
        corpus = build(args.copy)
    for name, entries in (
        ("horusec.jsonl", corpus.positives),
        ("horusec_negative.jsonl", corpus.negatives),
    ):
        (args.out / name).write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    families = {str(e["rule"]).rsplit(".", 1)[0] for e in corpus.positives}
    print(f"{len(corpus.positives)} positives of {len(families)} rules; {len(corpus.negatives)} negatives")
    print(f"left out {sum(corpus.left_out.values())}: {dict(sorted(corpus.left_out.items()))}")


if __name__ == "__main__":
    main()
