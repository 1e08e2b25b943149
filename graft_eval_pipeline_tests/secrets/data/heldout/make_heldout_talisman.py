"""Writes the seventh held-out secret corpus (talisman.jsonl, talisman_negative.jsonl) beside this file.

Run: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_talisman.py COPY
 or: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_talisman.py --clone TALISMAN_CLONE

The source is the Go test data of Talisman (thoughtworks/talisman, MIT), ThoughtWorks' pre-commit
and pre-push hook that looks for secrets in what is about to leave a machine. COPY is a folder laid
out as the repository holding the files `FILES` names (each at its commit); with `--clone` they are
read out of a local git clone with `git show COMMIT:PATH`. Nothing is fetched from the network. The
Go is not compiled: its string literals (interpreted `"…"` with escapes, raw `` `…` ``) are read out
of each test function by regular expressions, and each reader asserts that it found as many calls as
the function makes, so that no tested text is missed.

Labels, as the source gives them:

- `detector/pattern/pattern_detector_test.go`, `TestShouldDetectPasswordPatterns`: the texts given
  to `shouldPassDetectionOfSecretPattern` (the pattern detector reports exactly one finding) are
  positives, those given to `shouldFailDetectionOfSecretPattern` (no finding) negatives. The loop
  over its seven keywords is unrolled as Go runs it (each keyword in turn, each call of the loop
  body for it), `strings.ToTitle` and `strings.ToUpper` of an ASCII keyword being its upper case.
- `detector/pattern/match_pattern_test.go`: a text `check` returns as a match of the password or
  `pw` pattern is a positive, one it returns `""` for a negative.
- `detector/filecontent/filecontent_detector_test.go`, `base64_aggressive_detector_test.go`: the
  content of the one file each test adds; `assert.True(t, results.HasFailures()` or
  `assert.Len(t, results.Results, 1)` makes it a positive, `assert.False(t, results.HasFailures()`
  a negative.
- `detector/filecontent/base64_detector_test.go`, `hex_detector_test.go`: the string `s` given to
  `CheckBase64Encoding` / `CheckHexEncoding`; `assert.Equal(t, s, res)` (detected) a positive,
  `assert.Equal(t, "", res)` a negative.
- `cmd/acceptance_test.go`, `cmd/scanner_cmd_test.go`: only the tests `ACCEPTANCE_TESTS` names,
  each of which writes one file whose name no filename rule matches, with no `.talismanrc`, scope,
  checksum or history in play: the exit status 1 it asserts makes the content a positive, 0 a
  negative.

Positives: the text unchanged (a line, or the whole content a test adds: a Java class, a key block,
two lines). Talisman says only "this holds a secret", so the secret is the value a scanner would
capture, by the first of these rules that applies (`secret_of`, written before the builder was first
run): the body of a PEM private-key block, white space around it left out (its `-----` before
`BEGIN` optional); else, in each line of the text, the first that applies of: the password of a
URL's `user:password@`; the text of an element on one line (`<tag …> text </tag>`, tag names not
compared, white space around the text left out); the value of an assignment `NAME = value` (or `:`,
`:=`; NAME optionally quoted, after a `.` or `:`, or after a type word as in Java's `String
accessKey=…`), the value's quotes left out, an unquoted value up to white space or a closing `,;)}]>`;
a symbol and its value (`:name value`); the line itself when it is one token. A text whose lines
give several values has them as `secrets`; one whose lines give none is left out, counted.
Negatives: the texts the source says must not be reported, unchanged. Left out as well: tests whose
outcome is set by configuration rather than by the text (`SKIPPED_TESTS`), a text labelled both
ways, repeated texts (the first kept), and secrets that are placeholders by our policy's shape
(`placeholder_shape`: an entry all of whose secrets are is left out; of several, the others are
kept). Nothing is filtered by whether our redactor finds them.
"""

# ruff: noqa: E501  (FILES, LEFT_OUT, SKIPPED_TESTS: one repository path or test a line)
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
REPO = "thoughtworks/talisman"
LICENCE = "MIT"

FILES: dict[str, str] = {
    # Each file as copied (path in the repository -> commit it was stored under).
    "cmd/acceptance_test.go": "00bc1421696dcc58a7261dbeca33658543c5b808",
    "cmd/scanner_cmd_test.go": "00bc1421696dcc58a7261dbeca33658543c5b808",
    "detector/filecontent/base64_aggressive_detector_test.go": "07131fc98c904c5d17b1431eb7ab78f5acd1c907",
    "detector/filecontent/base64_detector_test.go": "01d957c30db6a1db844627b447a96887b53f4032",
    "detector/filecontent/filecontent_detector_test.go": "00c2f26feaefc1e69c71072c71276db5af34d876",
    "detector/filecontent/hex_detector_test.go": "37edbc9ce44a92b7ba88e79b4d8422a647a9b5e1",
    "detector/pattern/match_pattern_test.go": "37edbc9ce44a92b7ba88e79b4d8422a647a9b5e1",
    "detector/pattern/pattern_detector_test.go": "083730bbfe2855575260b8c87eb1fb174a15b728",
}

LEFT_OUT: dict[str, str] = {
    # Test data of the repository not used, and why (decided before building).
    "detector/*_test.go, acceptance_test.go, detector_test.go, filename_detection_test.go (top level)": "earlier versions of the same tests, before they moved into cmd/ and the detector/ sub-packages; the eight read to compare (detector/pattern_, filecontent_, base64_aggressive_, filecontent_aggressive_, hex_detector_test.go, detector/match_pattern_test.go, acceptance_test.go, detector_test.go) hold the same test strings, up to the white space of the Java snippets",
    "detector/filename/filename_detector_test.go, detector/filename_detector_test.go": "rules on file names (`id_rsa`, `.pem`): the tested texts are names, not secrets",
    "detector/filecontent/filecontent_credit_card_detector_test.go, and the card-number tests of filecontent_detector_test.go": "card numbers, PII, not credentials (counted in the build)",
    "detector/filecontent/word_check_test.go": "whether a string is made of dictionary words, a helper's property, not whether the string is reported",
    "detector/filecontent/shannon_entropy_test.go": "entropy values of strings, not detection",
    "detector/filesize/, detector/helpers/, detector/severity/, detector/chain_test.go, checksumcalculator/, git_testing/, gitrepo/, talismanrc/ tests": "sizes, checksums, result records, severities, ignore files and git plumbing: no text labelled secret or not",
    "the tests SKIPPED_TESTS names": "their outcome is set by configuration (a file ignore, an allowed pattern, a threshold) or checks no text (counted in the build)",
    "cmd/acceptance_test.go and cmd/scanner_cmd_test.go, the tests ACCEPTANCE_TESTS does not name": "the exit status comes from a file's name (`private.pem`), a `.talismanrc` (ignores, scope, checksums, invalid YAML), history or several files at once, not from one text (counted in the build)",
    "README.md, docs, .talismanrc of the repository": "documentation and the project's own ignore file, no labelled examples",
}

SKIPPED_TESTS: dict[str, dict[str, str]] = {
    # Test functions of the files read that give no labelled text (decided before building).
    "detector/pattern/pattern_detector_test.go": {
        "TestShouldIgnorePasswordPatterns": "the finding is silenced by a file ignore",
        "TestShouldIgnoreAllowedPattern": "the finding is silenced by allowed patterns",
        "TestShouldOnlyWarnSecretPatternIfBelowThreshold": "a threshold turns the finding into a warning",
    },
    "detector/pattern/match_pattern_test.go": {
        "TestShouldNotAddBadPatternToMatcher": "a malformed regular expression; no text is checked",
    },
    "detector/filecontent/filecontent_detector_test.go": {
        "TestShouldIgnoreFileIfNeeded": "a file ignore",
        "TestShouldNotFlagPotentialCreditCardNumberIfAboveThreshold": "a card number under a threshold",
        "TestShouldNotFlagPotentialSecretsIfIgnored": "an allowed pattern silences the finding",
        "TestResultsShouldNotFlagCreditCardNumberIfSpecifiedInFileIgnores": "a card number under a file ignore",
        "TestResultsShouldContainCreditCardNumberIfCreditCardNumberExistInFile": "a card number (PII)",
    },
}

ACCEPTANCE_TESTS: dict[str, dict[str, int]] = {
    # The acceptance tests read, and the exit status each asserts (1: reported, 0: not).
    "cmd/acceptance_test.go": {
        "TestAddingSecretKeyAsFileContentShouldExitOne": 1,
        "TestShouldExitOneWhenSecretIsCommitted": 1,
        "TestPatternFindsSecretInNestedFile": 1,
    },
    "cmd/scanner_cmd_test.go": {
        "TestScannerCmdRunsSuccessfully": 0,
    },
}

PATTERN_DETECTOR = "detector/pattern/pattern_detector_test.go"
MATCH_PATTERN = "detector/pattern/match_pattern_test.go"
FILE_CONTENT = (
    "detector/filecontent/filecontent_detector_test.go",
    "detector/filecontent/base64_aggressive_detector_test.go",
)
ENCODING = ("detector/filecontent/base64_detector_test.go", "detector/filecontent/hex_detector_test.go")

_GO_STRING = r'"(?:[^"\\\n]|\\.)*"|`[^`]*`'
_GO_ESCAPE = re.compile(r'\\(?:u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|[abfnrtv\\"\'])')
_GO_SIMPLE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _go(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`pattern` compiled with each `STR` standing for one Go string literal."""
    return re.compile(pattern.replace("STR", f"(?:{_GO_STRING})"), flags)


_FUNC = re.compile(r"^func (\w+)\(", re.MULTILINE)
_TEST = re.compile(r"^func (Test\w+)\(", re.MULTILINE)
_VALUES = _go(r"values := \[(?P<n>\d+)\]string\{(?P<items>\s*STR(?:\s*,\s*STR)*)\s*\}")
_LOOP = re.compile(r"\tfor i := 0; i < len\(values\); i\+\+ \{\n(?P<body>.*?)\n\t\}\n", re.DOTALL)
_DETECT = _go(
    r"should(?P<kind>Pass|Fail)DetectionOfSecretPattern\(filename, \[\]byte\((?P<expr>.+?)\), t\)", re.DOTALL
)
_TERM = _go(
    r"\s*(?P<term>STR|strings\.ToTitle\(values\[i\]\)|strings\.ToUpper\(values\[i\]\)|values\[i\])\s*(?:\+|$)"
)
_CHECK = _go(
    r"assert\.Equal\(t, (?P<want>\"\"|\[\]string\{(?P<out>STR)\}), NewPatternMatcher\(\[\]\*regexp\.Regexp\{\w+\}\)"
    r"\.check\((?P<value>STR)\)(?:\[0\])?\)"
)
_DEFINITION = _go(
    r"(?:\bconst\s+(?P<const>\w+)(?:\s+string)?\s*=|\b(?P<var>\w+)\s*:=)\s*"
    r"(?P<expr>(?:STR|\[\]byte\((?:STR|\w+)\)|\w+)(?:\s*\+\s*(?:STR|\w+))*)"
)
_ADDITION = re.compile(
    r"gitrepo\.NewAddition\(filename, (?P<arg>\[\]byte\(\w+\)|\[\]byte\(\"[^\"]*\"\)|\w+)\)"
)
_REPORTED = ("assert.True(t, results.HasFailures()", "assert.Len(t, results.Results, 1)")
_S = _go(r"\bs := (?P<value>STR)\n")
_SAME = re.compile(r"assert\.Equal\(t, (?P<want>\"\"|s), res\)")
_CREATE = _go(r"git\.CreateFileWithContents\((?P<name>STR), (?P<arg>STR|\w+)\)")
_EXIT = re.compile(r"assert\.Equal\(t, (?P<status>[01]), ")

_PEM = re.compile(
    r"(?:-----)?BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[ \t]*\r?\n(?P<body>.+?)\r?\n[ \t]*-----END ",
    re.DOTALL,
)
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@")
_ELEMENT = re.compile(r"\s*<[A-Za-z][^<>]*>\s*(?P<text>[^<>]*?\S)\s*</[A-Za-z][^<>]*>\s*")
_BARE = r"[^\s\"'`,;)}\]>]+"
_ASSIGNMENT = re.compile(
    r"\s*(?:[A-Za-z_][\w<>\[\]]*\s+)?[.:]?[\"']?(?P<name>[A-Za-z_][\w.-]*)[\"']?\s*(?::=|=|:)\s*"
    rf"(?:(?P<v>[\"'])(?P<quoted>[^\"']+)(?P=v)|(?P<bare>{_BARE}))\s*[,;)}}\]]*\s*"
)
_SYMBOL = re.compile(rf"\s*:(?P<name>[A-Za-z_]\w*)\s+(?P<bare>{_BARE})\s*")
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


def _tests(text: str, path: str, corpus: Corpus) -> dict[str, str]:
    """The test functions of a file that are read: all but those `SKIPPED_TESTS` names (counted)."""
    functions = _functions(text)
    names = _TEST.findall(text)
    skipped = SKIPPED_TESTS.get(path, {})
    assert set(skipped) <= set(names), (path, set(skipped) - set(names))
    corpus.left_out["test set by configuration or checking no text"] += len(skipped)
    return {name: functions[name] for name in names if name not in skipped}


def _evaluate(expr: str, definitions: dict[str, str]) -> str:
    """A Go string expression: literals, names defined in the same scope, `+`, `[]byte(…)`."""
    value = ""
    for term in re.findall(rf"{_GO_STRING}|\[\]byte\([^()]*\)|\w+", expr):
        if term.startswith(('"', "`")):
            value += go_string(term)
        elif term.startswith("[]byte("):
            value += _evaluate(term[len("[]byte(") : -1], definitions)
        else:
            value += _evaluate(definitions[term], definitions)
    assert re.fullmatch(rf"(?:\s*(?:{_GO_STRING}|\[\]byte\([^()]*\)|\w+)\s*\+?)*", expr), expr
    return value


def _definitions(text: str) -> dict[str, str]:
    """Each `const NAME = …` and `NAME := …` of a text, by name (the last one wins)."""
    return {m["const"] or m["var"]: m["expr"] for m in _DEFINITION.finditer(text)}


def _pattern_texts(body: str) -> list[tuple[str, bool]]:
    """The texts `TestShouldDetectPasswordPatterns` checks, in the order Go checks them, and whether each is reported."""
    values_found = _VALUES.search(body)
    assert values_found, "no keyword array"
    values = [go_string(s) for s in re.findall(_GO_STRING, values_found["items"])]
    assert len(values) == int(values_found["n"]) and all(v.isascii() for v in values), values
    loop = _LOOP.search(body)
    assert loop, "no loop over the keywords"
    templates = [(m["kind"] == "Pass", m["expr"]) for m in _DETECT.finditer(loop["body"])]
    assert len(templates) == loop["body"].count("DetectionOfSecretPattern("), "a loop call not read"

    def expand(expr: str, value: str) -> str:
        out = ""
        terms = list(_TERM.finditer(expr))
        assert "".join(m.group() for m in terms) == expr, f"an expression not read: {expr}"
        for term in (m["term"] for m in terms):
            if term == "values[i]":
                out += value
            elif term.startswith("strings."):
                out += value.upper()
            else:
                out += go_string(term)
        return out

    texts = [(expand(expr, value), passes) for value in values for passes, expr in templates]
    after = body[loop.end() :]
    for call in _DETECT.finditer(after):
        assert _TERM.fullmatch(call["expr"]) and "values" not in call["expr"], call["expr"]
        texts.append((go_string(call["expr"].strip()), call["kind"] == "Pass"))
    expected = len(values) * len(templates) + after.count("DetectionOfSecretPattern(")
    assert len(texts) == expected, ("a call not read", len(texts), expected)
    return texts


def candidates(copy: Path, corpus: Corpus) -> list[Candidate]:
    """Every labelled text of the files read, in the order of `FILES` and of each file."""
    found: list[Candidate] = []
    counters: Counter[str] = Counter()

    def add(line: str, positive: bool, path: str) -> None:
        family = "tl." + Path(path).name.removesuffix(".go").removesuffix("_test")
        found.append(Candidate(line, positive, f"{family}.{counters[family]}", path))
        counters[family] += 1

    package: dict[str, str] = {}
    for path in sorted(p for p in FILES if p.startswith("cmd/")):
        top = (copy / path).read_text("utf-8").split("\nfunc ", 1)[0]
        package |= _definitions(top)
    for path in sorted(FILES):
        text = (copy / path).read_text("utf-8")
        if path == PATTERN_DETECTOR:
            tests = _tests(text, path, corpus)
            assert list(tests) == ["TestShouldDetectPasswordPatterns"], list(tests)
            for line, positive in _pattern_texts(tests["TestShouldDetectPasswordPatterns"]):
                add(line, positive, path)
        elif path == MATCH_PATTERN:
            for body in _tests(text, path, corpus).values():
                checks = list(_CHECK.finditer(body))
                assert len(checks) == body.count(".check("), (path, body[:60])
                for check in checks:
                    value = go_string(check["value"])
                    positive = check["want"] != '""'
                    assert not positive or go_string(check["out"]) == value, value
                    add(value, positive, path)
        elif path in FILE_CONTENT:
            for name, body in _tests(text, path, corpus).items():
                additions = _ADDITION.findall(body)
                assert len(additions) == 1, (path, name)
                reported = any(a in body for a in _REPORTED)
                clean = "assert.False(t, results.HasFailures()" in body
                assert reported != clean, (path, name)
                add(_evaluate(additions[0], _definitions(body)), reported, path)
        elif path in ENCODING:
            for name, body in _tests(text, path, corpus).items():
                given, same = _S.findall(body), _SAME.findall(body)
                assert len(given) == 1 and len(same) == 1, (path, name)
                add(go_string(given[0]), same[0] == "s", path)
        elif path in ACCEPTANCE_TESTS:
            functions = _functions(text)
            read = ACCEPTANCE_TESTS[path]
            corpus.left_out["acceptance test decided by names, configuration or history"] += len(
                set(_TEST.findall(text)) - set(read)
            )
            for name, status in read.items():
                body = functions[name]
                created, exits = list(_CREATE.finditer(body)), _EXIT.findall(body)
                assert len(created) == 1 and exits == [str(status)], (path, name)
                assert ".talismanrc" not in body and "options.Scan = true" not in body, (path, name)
                add(_evaluate(created[0]["arg"], package), status == 1, path)
        else:
            raise ValueError(f"{path}: no reader")
    return found


def secret_of(text: str) -> list[str]:
    """The values a scanner would capture in one labelled text, by the rules above; empty if none applies."""
    if pem := _PEM.search(text):
        return [pem["body"].strip()]
    values: list[str] = []
    for raw in text.split("\n"):
        line = raw.removesuffix("\r")
        if not line.strip():
            continue
        value: str | None = None
        if url := _URL_PASSWORD.search(line):
            value = url.group(1)
        elif element := _ELEMENT.fullmatch(line):
            value = element["text"]
        elif assignment := _ASSIGNMENT.fullmatch(line):
            value = assignment["quoted"] if assignment["quoted"] is not None else assignment["bare"]
        elif symbol := _SYMBOL.fullmatch(line):
            value = symbol["bare"]
        elif _TOKEN.fullmatch(line.strip()):
            value = line.strip()
        if value is not None and value not in values:
            values.append(value)
    return values


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
    source.add_argument("--clone", type=Path, help="a git clone of thoughtworks/talisman")
    parser.add_argument("--out", type=Path, default=HERE, help="where the JSONL files go (default: here)")
    args = parser.parse_args()
    if args.clone:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = build(copy_from_clone(args.clone, Path(tmp)))
    else:
        corpus = build(args.copy)
    for name, entries in (
        ("talisman.jsonl", corpus.positives),
        ("talisman_negative.jsonl", corpus.negatives),
    ):
        (args.out / name).write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    families = {str(e["rule"]).rsplit(".", 1)[0] for e in corpus.positives}
    print(f"{len(corpus.positives)} positives of {len(families)} families; {len(corpus.negatives)} negatives")
    print(f"left out {sum(corpus.left_out.values())}: {dict(sorted(corpus.left_out.items()))}")


if __name__ == "__main__":
    main()
