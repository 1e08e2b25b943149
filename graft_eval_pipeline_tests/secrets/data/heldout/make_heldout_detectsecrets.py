"""Writes the fourth held-out secret corpus (detectsecrets.jsonl, detectsecrets_negative.jsonl) beside this file.

Run: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_detectsecrets.py COPY
 or: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_detectsecrets.py --clone DETECT_SECRETS_CLONE

Needs detect-secrets installed (the `bench` extra, 1.5.0 when built): its plugins name the secret
in each payload its test flags.

The source is the provider plugins' unit tests of Yelp's detect-secrets (Yelp/detect-secrets,
Apache-2.0): `tests/plugins/<plugin>_test.py` files whose `@pytest.mark.parametrize` lists pair
a payload (`payload`, `line`) with `should_flag`, the test's own label. COPY is a folder laid out
as the repository holding the files `FILES` names (each at its commit); with `--clone` they are
read out of a local git clone with `git show COMMIT:PATH`. Nothing is fetched.

The lists are read from the files' syntax trees, not imported: a value is a literal, a module
constant, implicit concatenation, or `'…'.format(NAME=CONSTANT)` of those (`_value`); a row with
anything else is not used (counted). Positives: the payloads the test flags; the secret is what
the installed plugin of the test's own detector class reports in it (`secret_value`), or the
payload itself when that plugin is not in the installed version and the payload is one token.
Negatives: the payloads the test does not flag; `matched_by` names the other provider plugins of
the installed detect-secrets that flag one (a GitHub token in GitLab's test is a secret, not a
look-alike). Left out: secrets that are placeholders by shape (`placeholder_shape`), positives
no plugin names a secret in, repeated lines. Nothing is filtered by whether our redactor finds them.
"""

# ruff: noqa: E501  (FILES: one repository path and commit a line)
from __future__ import annotations

import argparse
import ast
import importlib
import json
import re
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graft_eval_pipeline.secrets.values import placeholder_shape

HERE = Path(__file__).parent
REPO = "Yelp/detect-secrets"
LICENCE = "Apache-2.0"

FILES: dict[str, str] = {
    # Each file as copied (path in the repository -> commit it was stored under).
    "tests/plugins/aiven_token_test.py": "776d8134faad69d0fb2cc20656a65dbc9f9416c6",
    "tests/plugins/artifactory_test.py": "09e470f5e147b449e97ee92be50b9ab093debac5",
    "tests/plugins/discord_test.py": "0ac69f67eaddf816aab0f6a79a7317e4a499ee80",
    "tests/plugins/github_token_test.py": "1488150ff47bdb96b68416e449b5671caf87ff7b",
    "tests/plugins/gitlab_token_test.py": "31dc69f2cd145ea506a39ccf98b3db3578ad81cd",
    "tests/plugins/grafana_test.py": "1c99c926f23f5d0915bb27b3f2ab8d312347812e",
    "tests/plugins/hashicorp_vault_token_test.py": "d30339a3d512869067fa495375e07b0769030067",
    "tests/plugins/ibm_cloud_iam_test.py": "1564fcc4ecaee97aec1d0b25918e93ae3361eb8d",
    "tests/plugins/jwt_test.py": "26489629da1be60d13358cd3cf958ee4e97add5f",
    "tests/plugins/mailchimp_key_test.py": "30ecb2da0b08dca52a32b4028f7b21f92b8e1ff7",
    "tests/plugins/npm_test.py": "38995ef8c91300a2316dede8782809caf2643f03",
    "tests/plugins/openai_test.py": "76c629771f7f23a4aa36cdd519a2257bad424905",
    "tests/plugins/pypi_token_test.py": "8eebb5c152ec559d73b737212d72f43e88e3f623",
    "tests/plugins/sendgrid_test.py": "3f806f11e56f2ed4695c39cd6e55ba87a48c66b7",
    "tests/plugins/softlayer_test.py": "01d6b7a05aa0bb0581fea63c3d370c05bee77968",
    "tests/plugins/stripe_key_test.py": "30ecb2da0b08dca52a32b4028f7b21f92b8e1ff7",
    "tests/plugins/telegram_token_test.py": "1f2553382bf10184779ec5b38bf5dfaefed8e426",
    "tests/plugins/twilio_test.py": "30ecb2da0b08dca52a32b4028f7b21f92b8e1ff7",
}

LEFT_OUT: dict[str, str] = {
    # Plugin tests not used, and why (decided before any measurement).
    "keyword_test.py, basic_auth_test.py": "their values are in the committed corpus already (test_corpus.py's entries cite them)",
    "high_entropy_strings_test.py, private_key_test.py": "no payload/should_flag list of single lines",
    "aws_key_test.py, slack_test.py": "the stored versions are of the older test shape (file objects, no should_flag for slack)",
    "azure_storage_key, cloudant, ibm_cos_hmac, box, db2, square_oauth, okta, gcp_api, amazon_bedrock, aws_secret_access_key": "not copied, for the time copying by hand takes (not for what they hold)",
}

_PAYLOAD_ARGS = ("payload", "line")
_DETECTOR_IMPORT = re.compile(r"from detect_secrets\.plugins\.(\w+) import (\w+Detector)\b")


class _Unsupported(Exception):
    """A parametrize row holds an expression `_value` does not evaluate."""


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


def _value(node: ast.expr, names: dict[str, str]) -> Any:
    """A literal, a module constant, a tuple or list of those, or `'…'.format(…)` of them."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_value(e, names) for e in node.elts)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
    ):
        args = [_value(a, names) for a in node.args]
        kwargs = {k.arg: _value(k.value, names) for k in node.keywords if k.arg}
        return node.func.value.value.format(*args, **kwargs)
    raise _Unsupported(ast.dump(node)[:40])


def _rows(text: str) -> tuple[str, str, list[tuple[int, str, bool]]]:
    """(plugin module, detector class, [(row index, payload, should_flag)]) of one test file."""
    imported = _DETECTOR_IMPORT.search(text)
    if not imported:
        raise ValueError("no detector import")
    tree = ast.parse(text)
    names = _constants(tree)
    rows: list[tuple[int, str, bool]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != "parametrize" or len(node.args) != 2:
            continue
        argnames = [a.strip() for a in str(_value(node.args[0], names)).split(",")]
        if "should_flag" not in argnames or not any(a in _PAYLOAD_ARGS for a in argnames):
            continue
        at_payload = next(i for i, a in enumerate(argnames) if a in _PAYLOAD_ARGS)
        at_flag = argnames.index("should_flag")
        values = node.args[1]
        assert isinstance(values, (ast.List, ast.Tuple))
        for index, row in enumerate(values.elts):
            try:
                evaluated = _value(row, names)
            except _Unsupported:
                rows.append((index, "", False))  # counted as unsupported by the caller
                continue
            rows.append((index, str(evaluated[at_payload]), bool(evaluated[at_flag])))
    return imported.group(1), imported.group(2), rows


def _plugin(module: str, name: str) -> Any | None:
    """The installed detect-secrets detector class, or None when the installed version lacks it."""
    try:
        return getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
    except (ImportError, AttributeError):
        return None


def _reported(detector: Any, line: str) -> list[str]:
    """The secrets the plugin reports in `line`.

    A regex plugin whose captured group is the start of its match (GitHub's and GitLab's capture
    only the prefix, `ghp`) reports the whole match instead: the token, not its prefix.
    """
    plugin = detector()
    values = {str(s.secret_value) for s in plugin.analyze_line(filename="mock_filename", line=line)}
    whole: dict[str, str] = {}
    for pattern in getattr(plugin, "denylist", ()):
        for found in pattern.finditer(line):
            if found.lastindex and found.start(1) == found.start() and found.group(1) in values:
                whole[found.group(1)] = found.group()
    return sorted({whole.get(v, v) for v in values})


def _provider_plugins() -> list[tuple[str, Any]]:
    """Every installed provider plugin (not the keyword, entropy or public-IP ones, which name no provider)."""
    from detect_secrets.core.plugins.util import (  # type: ignore[import-not-found, unused-ignore]
        get_mapping_from_secret_type_to_class,
    )

    generic = {"KeywordDetector", "Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector"}
    classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    return sorted((c.__name__, c) for c in classes if c.__name__ not in generic)


def _source(path: str) -> str:
    return f"{REPO} {path}@{FILES[path]}"


def build(copy: Path) -> Corpus:
    corpus = Corpus()
    others = _provider_plugins()
    seen: set[str] = set()
    for path in sorted(FILES):
        module, name, rows = _rows((copy / path).read_text("utf-8"))
        detector = _plugin(module, name)
        stem = Path(path).stem.removesuffix("_test")
        for index, payload, flag in rows:
            if not payload:
                corpus.left_out["row of an expression the builder does not evaluate"] += 1
                continue
            if payload in seen:
                corpus.left_out["repeated line"] += 1
                continue
            seen.add(payload)
            entry: dict[str, object] = {"line": payload}
            if flag:
                if detector is not None:
                    secrets = _reported(detector, payload)
                elif not payload.split() or len(payload.split()) > 1:
                    secrets = []
                else:
                    secrets = [payload.strip()]
                if not secrets:
                    corpus.left_out["flagged, but no installed plugin names its secret"] += 1
                    continue
                kept = [s for s in secrets if not placeholder_shape(s)]
                if not kept:
                    corpus.left_out["placeholder by shape"] += 1
                    continue
                entry |= {"secret": kept[0]} if len(kept) == 1 else {"secrets": kept}
            else:
                matched = [n for n, c in others if c.__name__ != name and _reported(c, payload)]
                if matched:
                    entry["matched_by"] = matched
            entry |= {"rule": f"ds.{stem}.{index}", "source": _source(path), "licence": LICENCE}
            (corpus.positives if flag else corpus.negatives).append(entry)
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
    source.add_argument("--clone", type=Path, help="a git clone of Yelp/detect-secrets")
    parser.add_argument("--out", type=Path, default=HERE, help="where the JSONL files go (default: here)")
    args = parser.parse_args()
    if args.clone:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = build(copy_from_clone(args.clone, Path(tmp)))
    else:
        corpus = build(args.copy)
    for name, entries in (
        ("detectsecrets.jsonl", corpus.positives),
        ("detectsecrets_negative.jsonl", corpus.negatives),
    ):
        (args.out / name).write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    families = {str(e["rule"]).rsplit(".", 1)[0] for e in corpus.positives}
    matched = sum("matched_by" in e for e in corpus.negatives)
    print(
        f"{len(corpus.positives)} positives of {len(families)} plugins; {len(corpus.negatives)} negatives "
        f"({matched} flagged by another plugin)"
    )
    print(f"left out {sum(corpus.left_out.values())}: {dict(sorted(corpus.left_out.items()))}")


if __name__ == "__main__":
    main()
