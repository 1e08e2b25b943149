"""Writes the eleventh held-out secret corpus (ibm_detectsecrets.jsonl, ibm_detectsecrets_negative.jsonl) beside this file.

Run: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_ibm_detectsecrets.py COPY
 or: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_ibm_detectsecrets.py --clone IBM_DETECT_SECRETS_CLONE

The source is the unit tests of three plugins that IBM's fork of detect-secrets (IBM/detect-secrets,
Apache-2.0) adds and Yelp's detect-secrets does not ship (1.5.0, the bench's, has no `box`,
`db2` or `github_enterprise` plugin): `tests/plugins/box_test.py`, `db2_test.py` and
`gh_enterprise_test.py`, whose `@pytest.mark.parametrize` lists pair a `payload` with
`should_flag`, the test's own label (`assert len(output) == int(should_flag)`). COPY is a folder
laid out as the repository holding the files `FILES` names (each at its commit; `STORED_AS`
names the repository the code index holds each under: the DB2 test is stored only in the index's
history of `Yelp/detect-secrets`, which holds IBM's fork's commits); with `--clone` they are read
out of a local git clone of the fork with `git show COMMIT:PATH`. Nothing is fetched. No scanner
is run: neither the plugins nor ours.

The lists are read from the files' syntax trees, not imported: a value is a literal (implicit
concatenation included) or a module constant; a row with anything else is not used (counted).
The reader asserts the number of labelled rows of each file, each way (`EXPECTED`), so that
nothing labelled is missed.

- Positives: the payloads the test flags. The secret (`_secret`, written before the first run,
  from the tests' own wording, not from what a plugin reports): DB2's test names it, its
  `token` column (`assert list(output.keys())[0].secret == token`); in GitHub Enterprise's, the
  run of 40 hexadecimal digits not touching another letter or digit (its negatives' comments:
  `has non-hex`, `only 39`, `41`), or, in the one `Authorization: Basic` line, the base64 value
  after `Basic`; in Box's, the run of 32 or more letters and digits (the client secret; its
  negative is `12345678abcdnotenough`). Each rule must find exactly one secret in its payload.
- Negatives: the payloads the test does not flag, all of them; no `matched_by` (no scanner run).

Left out: the secrets that are placeholders by shape (`placeholder_shape`), repeated payloads (the
first kept), rows of expressions the reader does not evaluate; the tests that are not of
payload/should_flag (verification with mocked services, `find_other_factor`); the other plugin
tests of the fork (`LEFT_OUT`). Nothing is filtered by whether our redactor finds them.
"""

# ruff: noqa: E501  (FILES, STORED_AS, LEFT_OUT: one repository path and commit a line)
from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from graft_eval_pipeline.secrets.values import placeholder_shape

HERE = Path(__file__).parent
REPO = "IBM/detect-secrets"
LICENCE = "Apache-2.0"

FILES: dict[str, str] = {
    # Each file as copied (path in the repository -> commit it was stored under).
    "tests/plugins/box_test.py": "4d1fe270a6e7f291aad32486dbe65b1b6fe9ec9c",
    "tests/plugins/db2_test.py": "31ffb6316c9d289de093009f0c20a7b312a002be",
    "tests/plugins/gh_enterprise_test.py": "b3620282fb6b91286b660a7f5f5d8ffbdc85c493",
}

STORED_AS: dict[str, str] = {
    # The repository the code index holds each file under (the entries' `source`).
    "tests/plugins/box_test.py": "IBM/detect-secrets",
    "tests/plugins/db2_test.py": "Yelp/detect-secrets",
    "tests/plugins/gh_enterprise_test.py": "IBM/detect-secrets",
}

EXPECTED: dict[str, tuple[int, int]] = {
    # Labelled rows of each file: (should_flag True, should_flag False), counted by hand.
    "tests/plugins/box_test.py": (5, 1),
    "tests/plugins/db2_test.py": (8, 2),
    "tests/plugins/gh_enterprise_test.py": (30, 10),
}

LEFT_OUT: dict[str, str] = {
    # Plugin tests of the fork not used, and why (decided before any build).
    "artifactory, ip_public, keyword, telegram_token": "plugins Yelp's detect-secrets has too (its corpus, detectsecrets.jsonl, took their tests)",
    "content_checker_test.py": "tests a filter of the fork, not a detector's labelled payloads",
    "gh_test.py": "the GitHub Enterprise plugin's predecessor: the same values, bare, fewer rows",
}

_PAYLOAD_ARGS = ("payload", "line")
_HEX40 = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{40}(?![0-9A-Za-z])")
_BASIC = re.compile(r"\bBasic ([A-Za-z0-9+/]+=*)")
_LONG_RUN = re.compile(r"[A-Za-z0-9]{32,}")


class _Unsupported(Exception):
    """A parametrize row holds an expression `_value` does not evaluate."""


@dataclass
class Row:
    payload: str
    flag: bool
    token: str | None  # the test's own `token` column, when it has one


@dataclass
class Corpus:
    positives: list[dict[str, object]] = field(default_factory=list)
    negatives: list[dict[str, object]] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)


def _constants(tree: ast.Module) -> dict[str, str]:
    """The module's `NAME = 'literal'` assignments."""
    found: dict[str, str] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found[node.targets[0].id] = node.value.value
    return found


def _value(node: ast.expr, names: dict[str, str]) -> object:
    """A literal, a module constant, or a tuple or list of those."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_value(e, names) for e in node.elts)
    raise _Unsupported(ast.dump(node)[:40])


def _rows(text: str) -> tuple[list[Row], int]:
    """The labelled rows of one test file in file order, and the number not evaluated."""
    tree = ast.parse(text)
    names = _constants(tree)
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "parametrize"
        and len(node.args) == 2
    ]
    rows: list[Row] = []
    unsupported = 0
    for node in sorted(calls, key=lambda n: n.lineno):
        argnames = [a.strip() for a in str(_value(node.args[0], names)).split(",")]
        if "should_flag" not in argnames or not any(a in _PAYLOAD_ARGS for a in argnames):
            continue
        at_payload = next(i for i, a in enumerate(argnames) if a in _PAYLOAD_ARGS)
        at_flag = argnames.index("should_flag")
        at_token = argnames.index("token") if "token" in argnames else None
        values = node.args[1]
        assert isinstance(values, (ast.List, ast.Tuple))
        for row in values.elts:
            try:
                evaluated = _value(row, names)
            except _Unsupported:
                unsupported += 1
                continue
            assert isinstance(evaluated, tuple) and len(evaluated) == len(argnames)
            token = None if at_token is None else str(evaluated[at_token])
            rows.append(Row(str(evaluated[at_payload]), bool(evaluated[at_flag]), token))
    return rows, unsupported


def _ghe(payload: str) -> list[str]:
    found = _HEX40.findall(payload)
    return found if found else [m for m in _BASIC.findall(payload)]


def _box(payload: str) -> list[str]:
    return _LONG_RUN.findall(payload)


_SECRET_OF: dict[str, Callable[[str], list[str]]] = {
    "tests/plugins/box_test.py": _box,
    "tests/plugins/gh_enterprise_test.py": _ghe,
}


def _secret(path: str, row: Row) -> str:
    """The secret of a flagged row (module docstring); exactly one, and in its payload."""
    found = [row.token] if row.token is not None else _SECRET_OF[path](row.payload)
    assert len(found) == 1 and found[0] and found[0] in row.payload, (path, row.payload)
    return found[0]


def _source(path: str) -> str:
    return f"{STORED_AS[path]} {path}@{FILES[path]}"


def build(copy: Path) -> Corpus:
    corpus = Corpus()
    seen: set[str] = set()
    for path in sorted(FILES):
        rows, unsupported = _rows((copy / path).read_text("utf-8"))
        counted = (sum(r.flag for r in rows), sum(not r.flag for r in rows))
        assert counted == EXPECTED[path], (path, counted)
        if unsupported:
            corpus.left_out["row of an expression the builder does not evaluate"] += unsupported
        stem = Path(path).stem.removesuffix("_test")
        for index, row in enumerate(rows, start=1):
            if row.payload in seen:
                corpus.left_out["repeated line"] += 1
                continue
            seen.add(row.payload)
            entry: dict[str, object] = {"line": row.payload}
            if row.flag:
                secret = _secret(path, row)
                if placeholder_shape(secret):
                    corpus.left_out["placeholder by shape"] += 1
                    continue
                entry["secret"] = secret
            entry |= {"rule": f"ibm.{stem}.{index}", "source": _source(path), "licence": LICENCE}
            (corpus.positives if row.flag else corpus.negatives).append(entry)
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
    source.add_argument("--clone", type=Path, help="a git clone of IBM/detect-secrets")
    parser.add_argument("--out", type=Path, default=HERE, help="where the JSONL files go (default: here)")
    args = parser.parse_args()
    if args.clone:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = build(copy_from_clone(args.clone, Path(tmp)))
    else:
        corpus = build(args.copy)
    for name, entries in (
        ("ibm_detectsecrets.jsonl", corpus.positives),
        ("ibm_detectsecrets_negative.jsonl", corpus.negatives),
    ):
        (args.out / name).write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    families = {str(e["rule"]).rsplit(".", 1)[0] for e in corpus.positives}
    secrets = {str(e["secret"]) for e in corpus.positives}
    print(
        f"{len(corpus.positives)} positives of {len(families)} plugins ({len(secrets)} distinct secrets); "
        f"{len(corpus.negatives)} negatives"
    )
    print(f"left out {sum(corpus.left_out.values())}: {dict(sorted(corpus.left_out.items()))}")


if __name__ == "__main__":
    main()
