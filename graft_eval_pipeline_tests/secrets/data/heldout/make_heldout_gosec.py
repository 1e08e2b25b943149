"""Writes the twelfth held-out secret corpus, gosec's (gosec.jsonl, gosec_negative.jsonl), beside this file.

Run: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_gosec.py COPY
 or: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_gosec.py --clone GOSEC_CLONE

The source is the sample programs of gosec's rule G101, "Look for hard coded credentials"
(securego/gosec, Apache-2.0, the Go security checker): `testutils/g101_samples.go` at `COMMIT`,
whose two lists `SampleCodeG101` and `SampleCodeG101Values` hold entries `{[]string{`<a Go
program>`}, <count>, gosec.NewConfig()}`: count is the number of G101 issues gosec's test expects
in the program, its authors' label (1 or 0 here). COPY is a folder laid out as the repository
holding that file; with `--clone` it is read out of a local git clone with `git show
COMMIT:PATH`. Nothing is fetched. No scanner is run: neither gosec nor ours.

The Go is not compiled: a small reader takes each entry's string (raw backtick literals and the
interpreted `"`"` one sample splices in with `+`), its count, and asserts the number of entries of
each count in each list (`EXPECTED`, counted by hand), so that nothing labelled is missed.

Lines (decided before the first build): a program's line is read with its leading tabs and spaces
and its trailing `//` comment (outside a string literal) taken off; lines of an `import` and print
calls (`fmt.Print…(`, `println(`) are not used. A literal is a double-quoted Go string on the line.

- Positives: each program counted 1. Its line is the one holding the program's longest literal
  (the credential: the other literals of these programs are user names `admin`, `user` and one
  `"test"`); the builder asserts that literal is strictly the longest and on exactly one line.
  The secret is the literal's content, except: a literal `Bearer: <token>` gives the token (the
  word `Bearer:` is the scheme, not the credential); a URL `scheme://user:password@host` gives its
  password part (the test's variable is `url`; the user name is `username`).
- Negatives: each program counted 0 and not suppressed: every line holding a literal, or a
  constant given a number (`ATNStateTokenStart = 42`, the look-alike of that sample). A program
  counted 0 that carries a suppression comment (`#nosec`, `gosec:disable`) is 0 only because of
  the comment, not because its value is no credential: it is left out, unless its literal is
  itself no secret (`SUPPRESSED`, decided by hand; the builder asserts it decides every
  suppressed program).

Left out: secrets that are placeholders by shape (`placeholder_shape`: AWS's `…EXAMPLE` keys),
repeated lines (the first kept; no line is labelled both ways, asserted), suppressed programs.
Rule ids `gosec.g101.<n>` and `gosec.g101values.<n>`, n the program's place in its list from 1.
Nothing is filtered by whether our redactor finds them.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from graft_eval_pipeline.secrets.values import placeholder_shape

HERE = Path(__file__).parent
REPO = "securego/gosec"
PATH = "testutils/g101_samples.go"
COMMIT = "29a042eca11db9ff0b3985146c5dd3ac46bbd24e"
LICENCE = "Apache-2.0"

LISTS: dict[str, str] = {
    # The lists of the file, in file order -> the rule family of their entries.
    "SampleCodeG101": "gosec.g101",
    "SampleCodeG101Values": "gosec.g101values",
}

EXPECTED: dict[str, tuple[int, int]] = {
    # Entries of each list: (count 1, count 0), counted by hand.
    "SampleCodeG101": (24, 15),
    "SampleCodeG101Values": (9, 3),
}

SUPPRESSED: dict[tuple[str, int], bool] = {
    # Programs counted 0 that carry `#nosec` or `gosec:disable` -> kept as a negative (True) or left out (False).
    ("SampleCodeG101", 23): True,  # "learner_auth_token_config": a configuration key's name, no secret
    ("SampleCodeG101", 24): True,  # the same line (a repeat)
    ("SampleCodeG101", 25): True,  # the same line (a repeat)
    ("SampleCodeG101", 26): True,  # the same line (a repeat)
    ("SampleCodeG101", 27): True,  # the same line (a repeat)
    ("SampleCodeG101", 28): True,  # the same line (a repeat)
    ("SampleCodeG101", 35): False,  # `DBConfig{ // #nosec G101` holding the 40-hex password the positives hold
    ("SampleCodeG101Values", 12): False,  # `postgres://user:pass@host…` in help text under `// #nosec G101 -- example …`
}

_ENTRY = re.compile(r"\s*\{\[\]string\{")
_TAIL = re.compile(r"\},\s*(\d+),\s*gosec\.NewConfig\(\)\},")
_COMMENT_LINE = re.compile(r"\s*//[^\n]*\n")
_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_NUMBER_CONST = re.compile(r"[A-Za-z_]\w* = \d+")
_PRINT = re.compile(r"(fmt\.\w*Print\w*|println)\(")
_SUPPRESSION = re.compile(r"#nosec|gosec:disable")
_BEARER = "Bearer: "
_URL_PASSWORD = re.compile(r"[a-z]+://[^:/@]+:([^@/]+)@")
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t"}


@dataclass
class Sample:
    list_name: str
    index: int  # 1-based place in its list
    program: str
    count: int


@dataclass
class Corpus:
    positives: list[dict[str, object]] = field(default_factory=list)
    negatives: list[dict[str, object]] = field(default_factory=list)
    left_out: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


def _interpreted(text: str, at: int) -> tuple[str, int]:
    """The Go interpreted string literal starting at `text[at]` (a `"`), and the place after it."""
    out: list[str] = []
    i = at + 1
    while text[i] != '"':
        if text[i] == "\\":
            out.append(_ESCAPES[text[i + 1]])
            i += 2
        else:
            assert text[i] != "\n"
            out.append(text[i])
            i += 1
    return "".join(out), i + 1


def _string_expression(text: str, at: int) -> tuple[str, int]:
    """A Go string expression at `text[at]`: literals joined by `+`; its value and the place after."""
    parts: list[str] = []
    i = at
    while True:
        if text[i] == "`":
            end = text.index("`", i + 1)
            parts.append(text[i + 1 : end])
            i = end + 1
        else:
            assert text[i] == '"', text[i : i + 20]
            value, i = _interpreted(text, i)
            parts.append(value)
        plus = re.compile(r"\s*\+\s*").match(text, i)
        if not plus:
            return "".join(parts), i
        i = plus.end()


def samples(text: str) -> list[Sample]:
    """The entries of the lists `LISTS` names, in file order."""
    found: list[Sample] = []
    for name in LISTS:
        opening = f"\t{name} = []CodeSample{{\n"
        assert text.count(opening) == 1, name
        i = text.index(opening) + len(opening)
        index = 0
        while True:
            while comment := _COMMENT_LINE.match(text, i):  # `// Negatives` between entries
                i = comment.end()
            entry = _ENTRY.match(text, i)
            if not entry:
                assert re.compile(r"\s*\}\n").match(text, i), text[i : i + 40]
                break
            program, i = _string_expression(text, entry.end())
            tail = _TAIL.match(text, i)
            assert tail, text[i : i + 40]  # one program a sample, then its count
            index += 1
            found.append(Sample(name, index, program, int(tail.group(1))))
            i = tail.end()
    return found


def _code(line: str) -> str:
    """The line without its indentation and its trailing `//` comment (outside a double-quoted literal)."""
    in_string = False
    i = 0
    while i < len(line):
        char = line[i]
        if in_string and char == "\\":
            i += 2
            continue
        if char == '"':
            in_string = not in_string
        elif not in_string and line.startswith("//", i):
            line = line[:i]
            break
        i += 1
    return line.strip(" \t")


def _lines(program: str) -> list[str]:
    """The program's lines that may hold a labelled value: not of an `import`, not a print call, not blank."""
    kept: list[str] = []
    in_import = False
    for raw in program.split("\n"):
        code = _code(raw)
        if code == "import (":
            in_import = True
        elif in_import:
            in_import = code != ")"
        elif code and not code.startswith("import ") and not _PRINT.match(code):
            kept.append(code)
    return kept


def _literals(line: str) -> list[str]:
    return _LITERAL.findall(line)


def _credential_line(sample: Sample) -> tuple[str, str]:
    """The line of a program counted 1 and its longest literal (module docstring): exactly one."""
    pairs = [(line, literal) for line in _lines(sample.program) for literal in _literals(line)]
    longest = max(len(literal) for _, literal in pairs)
    at_longest = [(line, literal) for line, literal in pairs if len(literal) == longest]
    assert len(at_longest) == 1, (sample.list_name, sample.index, at_longest)
    return at_longest[0]


def _secret(line: str, literal: str) -> str:
    """The secret of a credential literal (module docstring), asserted to be in its line."""
    secret = literal
    url = _URL_PASSWORD.match(literal)
    if literal.startswith(_BEARER):
        secret = literal.removeprefix(_BEARER)
    elif url:
        secret = url.group(1)
    assert secret and "\\" not in secret and secret in line, line
    return secret


def _lookalike_lines(sample: Sample) -> list[str]:
    """The lines of a program counted 0 that hold a literal or give a constant a number."""
    return [line for line in _lines(sample.program) if _literals(line) or _NUMBER_CONST.fullmatch(line)]


def _source() -> str:
    return f"{REPO} {PATH}@{COMMIT}"


def build(copy: Path) -> Corpus:
    corpus = Corpus()
    found = samples((copy / PATH).read_text("utf-8"))
    for name in LISTS:
        counts = [s.count for s in found if s.list_name == name]
        assert (counts.count(1), counts.count(0)) == EXPECTED[name] and len(counts) == sum(EXPECTED[name]), (
            name
        )
    suppressed = {(s.list_name, s.index) for s in found if _SUPPRESSION.search(s.program)}
    assert suppressed == set(SUPPRESSED), sorted(suppressed ^ set(SUPPRESSED))
    assert all(s.count == 0 for s in found if (s.list_name, s.index) in suppressed)
    labelled: dict[str, bool] = {}
    for sample in found:
        rule = f"{LISTS[sample.list_name]}.{sample.index}"
        if not SUPPRESSED.get((sample.list_name, sample.index), True):
            corpus.left_out["suppressed: 0 only by a #nosec comment"].append(rule)
            continue
        if sample.count == 1:
            line, literal = _credential_line(sample)
            candidates: list[tuple[str, str | None]] = [(line, _secret(line, literal))]
        else:
            candidates = [(line, None) for line in _lookalike_lines(sample)]
            assert candidates, rule
        for line, secret in candidates:
            is_positive = secret is not None
            if line in labelled:
                assert labelled[line] == is_positive, line  # no line labelled both ways
                corpus.left_out["repeated line"].append(rule)
                continue
            labelled[line] = is_positive
            entry: dict[str, object] = {"line": line}
            if secret is not None:
                if placeholder_shape(secret):
                    corpus.left_out["placeholder by shape"].append(rule)
                    continue
                entry["secret"] = secret
            entry |= {"rule": rule, "source": _source(), "licence": LICENCE}
            (corpus.positives if is_positive else corpus.negatives).append(entry)
    return corpus


def copy_from_clone(clone: Path, into: Path) -> Path:
    """`PATH` out of the git clone `clone`, at `COMMIT`, written under `into`."""
    shown = subprocess.run(
        ["git", "-C", str(clone), "show", f"{COMMIT}:{PATH}"], check=True, capture_output=True
    )
    (into / PATH).parent.mkdir(parents=True, exist_ok=True)
    (into / PATH).write_bytes(shown.stdout)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("copy", nargs="?", type=Path, help="a folder laid out as the repository")
    source.add_argument("--clone", type=Path, help="a git clone of securego/gosec")
    parser.add_argument("--out", type=Path, default=HERE, help="where the JSONL files go (default: here)")
    args = parser.parse_args()
    if args.clone:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = build(copy_from_clone(args.clone, Path(tmp)))
    else:
        corpus = build(args.copy)
    for name, entries in (("gosec.jsonl", corpus.positives), ("gosec_negative.jsonl", corpus.negatives)):
        (args.out / name).write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    families = {str(e["rule"]).rsplit(".", 1)[0] for e in corpus.positives}
    secrets = {str(e["secret"]) for e in corpus.positives}
    print(
        f"{len(corpus.positives)} positives of {len(families)} lists ({len(secrets)} distinct secrets); "
        f"{len(corpus.negatives)} negatives"
    )
    print(f"left out {sum(len(v) for v in corpus.left_out.values())}:")
    for reason, rules in sorted(corpus.left_out.items()):
        print(f"  {reason}: {len(rules)} ({', '.join(rules)})")


if __name__ == "__main__":
    main()
