"""Writes the twelfth held-out secret corpus, bandit's (bandit.jsonl, bandit_negative.jsonl), beside this file.

Run: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_bandit.py COPY
 or: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_bandit.py --clone BANDIT_CLONE

The source is the example file of bandit's hard-coded password tests (PyCQA/bandit, Apache-2.0,
the security linter for Python): `examples/hardcoded-passwords.py` at `COMMIT`, in which each
finding the tests B105, B106 and B107 are to report is labelled by its authors with a comment
`# Possible hardcoded password: '<value>'` (and `# Severity: …`) on the line or lines before the
code line. COPY is a folder laid out as the repository holding that file; with `--clone` it is
read out of a local git clone with `git show COMMIT:PATH`. Nothing is fetched. No scanner is run:
neither bandit nor ours.

The file is read as text and as Python's syntax tree (not run). The builder asserts the number of
labels (`EXPECTED_LABELS`, counted by hand), that each label is followed, past comment lines only,
by a code line, and that the labelled value is a string literal on that line exactly once.

- Positives: the labelled code line, its indentation taken off; the secret is the value the
  comment quotes. Its kind (decided before the first build, from the syntax around the literal):
  a default of a function's parameter is `b107` (`def f(password="…"):`), a keyword argument of a
  call `b106` (`f(password="…")`), anything else `b105` (an assignment, a comparison). Rule id
  `bandit.<kind>.<n>`, n the label's place among the file's labels from 1, in file order.
- Negatives: the code lines no comment labels that hold a string literal and, outside it, a name
  holding `pass`, `pwd`, `secret` or `token` (case-insensitive); rule `bandit.unlabelled.<line
  number>`. The file at `COMMIT` has none, so the negative file is empty.

Left out: a label of an empty value (`''`: no secret), secrets that are placeholders by shape
(`placeholder_shape`), repeated lines (the first kept). Nothing is filtered by whether our
redactor finds them.
"""

# ruff: noqa: E501  (constants: one repository path or commit a line)
from __future__ import annotations

import argparse
import ast
import io
import json
import re
import subprocess
import tempfile
import tokenize
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from graft_eval_pipeline.secrets.values import placeholder_shape

HERE = Path(__file__).parent
REPO = "PyCQA/bandit"
PATH = "examples/hardcoded-passwords.py"
COMMIT = "027a8cb6144fa8c6fdaa92a5f843f3d54d1f6414"
LICENCE = "Apache-2.0"

EXPECTED_LABELS = 12  # `# Possible hardcoded password: '…'` comments at COMMIT, counted by hand

_LABEL = re.compile(r"\s*# Possible hardcoded password: '(.*)'\s*")
_PASSWORDISH = re.compile(r"pass|pwd|secret|token", re.IGNORECASE)


@dataclass
class Label:
    place: int  # 1-based among the file's labels
    value: str
    lineno: int  # 1-based line of the code it labels


@dataclass
class Corpus:
    positives: list[dict[str, object]] = field(default_factory=list)
    negatives: list[dict[str, object]] = field(default_factory=list)
    left_out: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


def labels(lines: list[str]) -> list[Label]:
    """Each label comment and the code line it labels: the next line that is not a comment."""
    found: list[Label] = []
    for number, line in enumerate(lines, start=1):
        label = _LABEL.fullmatch(line)
        if not label:
            continue
        code = number  # index of the line after this one
        while lines[code].lstrip().startswith("#"):
            code += 1
        assert lines[code].strip(), (number, "a label followed by a blank line")
        found.append(Label(len(found) + 1, label.group(1), code + 1))
    return found


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def kind(tree: ast.Module, parents: dict[ast.AST, ast.AST], label: Label) -> str:
    """`b105`, `b106` or `b107` by the syntax around the labelled literal (module docstring)."""
    literals = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value == label.value and node.lineno == label.lineno
    ]
    assert len(literals) == 1, (label, len(literals))
    parent = parents[literals[0]]
    if isinstance(parent, ast.arguments):
        return "b107"
    if isinstance(parent, ast.keyword) and isinstance(parents[parent], ast.Call):
        return "b106"
    assert isinstance(parent, (ast.Assign, ast.AnnAssign, ast.Compare, ast.Dict)), ast.dump(parent)
    return "b105"


def unlabelled_lookalikes(text: str, labelled: set[int]) -> list[int]:
    """Line numbers of code no comment labels holding a string literal and a password-ish name."""
    strings: set[int] = set()
    names: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.STRING:
            strings.add(token.start[0])
        elif token.type == tokenize.NAME and _PASSWORDISH.search(token.string):
            names.add(token.start[0])
    return sorted((strings & names) - labelled)


def _source() -> str:
    return f"{REPO} {PATH}@{COMMIT}"


def build(copy: Path) -> Corpus:
    corpus = Corpus()
    text = (copy / PATH).read_text("utf-8")
    lines = text.split("\n")
    found = labels(lines)
    assert len(found) == EXPECTED_LABELS, len(found)
    tree = ast.parse(text)
    parents = _parents(tree)
    seen: set[str] = set()
    for label in found:
        rule = f"bandit.{kind(tree, parents, label)}.{label.place}"
        line = lines[label.lineno - 1].strip()
        assert f"'{label.value}'" in line or f'"{label.value}"' in line, (label, line)
        if not label.value:
            corpus.left_out["empty value ('')"].append(rule)
            continue
        if line in seen:
            corpus.left_out["repeated line"].append(rule)
            continue
        seen.add(line)
        if placeholder_shape(label.value):
            corpus.left_out["placeholder by shape"].append(rule)
            continue
        corpus.positives.append(
            {"line": line, "secret": label.value, "rule": rule, "source": _source(), "licence": LICENCE}
        )
    for number in unlabelled_lookalikes(text, {label.lineno for label in found}):
        line = lines[number - 1].strip()
        if line in seen:
            corpus.left_out["repeated line"].append(f"bandit.unlabelled.{number}")
            continue
        seen.add(line)
        corpus.negatives.append(
            {"line": line, "rule": f"bandit.unlabelled.{number}", "source": _source(), "licence": LICENCE}
        )
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
    source.add_argument("--clone", type=Path, help="a git clone of PyCQA/bandit")
    parser.add_argument("--out", type=Path, default=HERE, help="where the JSONL files go (default: here)")
    args = parser.parse_args()
    if args.clone:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = build(copy_from_clone(args.clone, Path(tmp)))
    else:
        corpus = build(args.copy)
    for name, entries in (("bandit.jsonl", corpus.positives), ("bandit_negative.jsonl", corpus.negatives)):
        (args.out / name).write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    families = {str(e["rule"]).rsplit(".", 1)[0] for e in corpus.positives}
    secrets = {str(e["secret"]) for e in corpus.positives}
    print(
        f"{len(corpus.positives)} positives of {len(families)} kinds ({len(secrets)} distinct secrets); "
        f"{len(corpus.negatives)} negatives"
    )
    print(f"left out {sum(len(v) for v in corpus.left_out.values())}:")
    for reason, rules in sorted(corpus.left_out.items()):
        print(f"  {reason}: {len(rules)} ({', '.join(rules)})")


if __name__ == "__main__":
    main()
