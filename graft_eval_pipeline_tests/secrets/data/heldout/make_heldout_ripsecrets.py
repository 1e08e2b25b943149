"""Writes the fifth held-out secret corpus (ripsecrets.jsonl, ripsecrets_negative.jsonl) beside this file.

Run: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_ripsecrets.py COPY
 or: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_ripsecrets.py --clone RIPSECRETS_CLONE

The source is the test data of ripsecrets (sirwart/ripsecrets, MIT), a secret scanner written in
Rust. Its tests in `src/lib.rs` label the files under `test/`: `no_false_negatives` says every line
of each `test/one_per_line/<kind>` file holds one secret (the matches of a file must number its
lines) and every file of `test/one_per_file/` one secret (older versions read `test/one/`);
`no_false_positives` says nothing in `test/none` may be reported. COPY is a folder laid out as the
repository holding the files `FILES` names (each at its commit); with `--clone` they are read out of
a local git clone with `git show COMMIT:PATH`. Nothing is fetched from the network.

Positives: each line of a one-per-line file, and each one-per-file file whole, unchanged. The
tests say only "this is a secret", so the secret is the token in it that a scanner would capture,
by the first of these rules that applies (`secret_of`): the body of a PEM private key block; the
password of a URL's `user:password@`; the text of an XML element; the value of an assignment
whose name holds one of ripsecrets' four keywords (`key`, `token`, `secret`, `password`), with
`=`, `:=` or `: ` and the value's quotes left out (in a whole file, the one such line); else the
line itself, when it is one token. Negatives: every line of `test/none`; `matched_by` names
ripsecrets' own patterns (`src/lib.rs`, by its comments) that match one by their regular
expression alone (ripsecrets skips that line for its `pragma: allowlist secret` comment). Left
out: secrets that are placeholders by our policy's shape (`placeholder_shape`). Nothing is
filtered by whether our redactor finds them.
"""

# ruff: noqa: E501  (FILES: one repository path and commit a line)
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
REPO = "sirwart/ripsecrets"
LICENCE = "MIT"

FILES: dict[str, str] = {
    # Each file as copied (path in the repository -> commit it was stored under).
    "src/lib.rs": "1ac0db1c50019b8f054c2ef6fec58e6794b6c6bb",
    "test/none": "d867b0600c5e5654a54eac508d16f0c807bda062",
    "test/one/private_key": "638ceab0ade0b687ba9e8d46172a1cf57b4aae27",
    "test/one_per_file/aws_json": "552bd04b501cbf1465fc5647a0f720744e385780",
    "test/one_per_file/pem_key.crlf": "c3900b6beaeeb808364500c5004803b9c33198ea",
    "test/one_per_line/age": "4cc18ed9cbfdd89dedad0bf88da62a524284507e",
    "test/one_per_line/aws": "638ceab0ade0b687ba9e8d46172a1cf57b4aae27",
    "test/one_per_line/azure": "638ceab0ade0b687ba9e8d46172a1cf57b4aae27",
    "test/one_per_line/gcp": "638ceab0ade0b687ba9e8d46172a1cf57b4aae27",
    "test/one_per_line/github": "f910532928704eae540f892cb83611edab5edfda",
    "test/one_per_line/gitlab": "cba144e474490358e8b2e3134d16e00abd10e0e4",
    "test/one_per_line/intra42": "967a71b23596102c0589bbedb97c82123e9dc826",
    "test/one_per_line/jwt": "f910532928704eae540f892cb83611edab5edfda",
    "test/one_per_line/mailchimp": "638ceab0ade0b687ba9e8d46172a1cf57b4aae27",
    "test/one_per_line/maven": "92417dd115db267fd4962af9e25fa6650506c6fb",
    "test/one_per_line/npm": "623d42e8ba5a6ca6409e0fe929b4cf57d83dc23b",
    "test/one_per_line/random": "febd6edd02a948137ce5a49f67693abde4da0f1f",
    "test/one_per_line/sendgrid": "638ceab0ade0b687ba9e8d46172a1cf57b4aae27",
    "test/one_per_line/slack": "638ceab0ade0b687ba9e8d46172a1cf57b4aae27",
    "test/one_per_line/square": "f910532928704eae540f892cb83611edab5edfda",
    "test/one_per_line/stripe": "638ceab0ade0b687ba9e8d46172a1cf57b4aae27",
    "test/one_per_line/twilio": "638ceab0ade0b687ba9e8d46172a1cf57b4aae27",
    "test/one_per_line/url": "f910532928704eae540f892cb83611edab5edfda",
}

LEFT_OUT: dict[str, str] = {
    # Test data of the repository not used, and why (decided before building).
    "src/matcher/p_random.rs, src/p_random.rs": 'unit tests of the randomness score (`p_random(b"hello_world") < 1e-6`), not of detection',
    "src/matcher/mod.rs, src/pre_commit.rs, src/ignore_info.rs": "no test strings",
}

ONE_PER_LINE = "test/one_per_line/"
ONE_PER_FILE = ("test/one_per_file/", "test/one/")
NONE = "test/none"
LIB = "src/lib.rs"

_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----\n(.+?)\n-----END ", re.DOTALL)
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:([^\s@]+)@")
_ELEMENT = re.compile(r"\s*<(\w+)>([^<>]+)</\1>\s*")
_ASSIGNMENT = re.compile(
    r"\s*(?:export\s+)?(?P<q>[\"']?)(?P<name>[^\s\"'=]+?)(?P=q)\s*(?::=|=|:(?=\s))\s*"
    r"(?P<v>[\"']?)(?P<value>[^\s\"']+)(?P=v)\s*,?\s*"
)
_KEYWORD = re.compile(r"key|token|secret|password", re.IGNORECASE)
"""ripsecrets' four keywords, next to which it reports a random value (`src/matcher/mod.rs`)."""
_LIB_PATTERN = re.compile(r'^\s*(?:r"(?P<raw>[^"]*)"|"(?P<plain>[^"\\]*)"),\s*(?://\s*(?P<name>.+?))?\s*$')
_LIB_SECTION = re.compile(r"^\s*//\s*(?P<name>.+?)\s*$")


@dataclass
class Corpus:
    positives: list[dict[str, object]] = field(default_factory=list)
    negatives: list[dict[str, object]] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)


def _source(path: str) -> str:
    return f"{REPO} {path}@{FILES[path]}"


def _assigned(line: str) -> str | None:
    """The value of `NAME = value` (or `:=`, `: `) when NAME holds one of ripsecrets' keywords."""
    found = _ASSIGNMENT.fullmatch(line)
    if found and _KEYWORD.search(found["name"]):
        return found["value"]
    return None


def secret_of(text: str, *, whole_file: bool) -> str | None:
    """The token a scanner would capture in one test line (or one test file), by the rules above."""
    pem = _PEM.search(text)
    if pem:
        return pem.group(1)
    if whole_file:
        values = [v for v in map(_assigned, text.split("\n")) if v is not None]
        return values[0] if len(values) == 1 else None
    url = _URL_PASSWORD.search(text)
    if url:
        return url.group(1)
    element = _ELEMENT.fullmatch(text)
    if element:
        return element.group(2)
    value = _assigned(text)
    if value is not None:
        return value
    token = text.strip()
    return token if token and len(token.split()) == 1 else None


def lib_patterns(text: str) -> list[tuple[str, re.Pattern[str]]]:
    """The predefined patterns of ripsecrets (`predefined_secret_regexes` in `src/lib.rs`).

    Each is named by its trailing comment, else the comment line above it, else its own text, and
    compiled as a Python regular expression (these use no construct the two engines read
    differently).
    """
    body = text.split("fn predefined_secret_regexes()", 1)[1].split("];", 1)[0]
    patterns: list[tuple[str, re.Pattern[str]]] = []
    section = ""
    for line in body.split("\n"):
        if found := _LIB_PATTERN.match(line):
            regex = found["raw"] if found["raw"] is not None else found["plain"]
            patterns.append((found["name"] or section or regex, re.compile(regex)))
        elif comment := _LIB_SECTION.match(line):
            section = comment["name"]
    return patterns


def _positive(corpus: Corpus, text: str, rule: str, path: str, *, whole_file: bool) -> None:
    secret = secret_of(text, whole_file=whole_file)
    if secret is None:
        raise ValueError(f"{rule}: no secret found in {text[:60]!r}")
    assert secret in text, (rule, secret)
    if placeholder_shape(secret):
        corpus.left_out["placeholder by shape"] += 1
        return
    entry: dict[str, object] = {"line": text, "secret": secret}
    if text.count(secret) > 1:
        entry["also_in_line"] = {secret: text.count(secret) - 1}
    corpus.positives.append(entry | {"rule": rule, "source": _source(path), "licence": LICENCE})


def build(copy: Path) -> Corpus:
    corpus = Corpus()
    patterns = lib_patterns((copy / LIB).read_text("utf-8"))
    for path in sorted(FILES):
        text = (copy / path).read_text("utf-8")
        name = Path(path).name.replace(".", "_")
        if path.startswith(ONE_PER_LINE):
            lines = text.split("\n")
            assert lines[-1] == "", f"{path}: the test counts newlines, so each line ends with one"
            for index, line in enumerate(lines[:-1]):
                _positive(corpus, line, f"rs.{name}.{index}", path, whole_file=False)
        elif path.startswith(ONE_PER_FILE):
            _positive(corpus, text, f"rs.{name}.0", path, whole_file=True)
        elif path == NONE:
            for index, line in enumerate(text.split("\n")):
                if not line.strip():
                    continue
                entry: dict[str, object] = {"line": line}
                matched = list(dict.fromkeys(n for n, p in patterns if p.search(line)))
                if matched:
                    entry["matched_by"] = matched
                corpus.negatives.append(
                    entry | {"rule": f"rs.none.{index}", "source": _source(path), "licence": LICENCE}
                )
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
    source.add_argument("--clone", type=Path, help="a git clone of sirwart/ripsecrets")
    parser.add_argument("--out", type=Path, default=HERE, help="where the JSONL files go (default: here)")
    args = parser.parse_args()
    if args.clone:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = build(copy_from_clone(args.clone, Path(tmp)))
    else:
        corpus = build(args.copy)
    for name, entries in (
        ("ripsecrets.jsonl", corpus.positives),
        ("ripsecrets_negative.jsonl", corpus.negatives),
    ):
        (args.out / name).write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    families = {str(e["rule"]).rsplit(".", 1)[0] for e in corpus.positives}
    matched = sum("matched_by" in e for e in corpus.negatives)
    print(
        f"{len(corpus.positives)} positives of {len(families)} test files; {len(corpus.negatives)} negatives "
        f"({matched} matched by a ripsecrets pattern)"
    )
    print(f"left out {sum(corpus.left_out.values())}: {dict(sorted(corpus.left_out.items()))}")


if __name__ == "__main__":
    main()
