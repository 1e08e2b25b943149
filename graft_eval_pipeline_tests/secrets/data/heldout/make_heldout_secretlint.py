"""Writes the second held-out secret corpus (secretlint.jsonl, secretlint_negative.jsonl) beside this file.

Run: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_secretlint.py COPY
 or: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_secretlint.py --clone SECRETLINT_CLONE

The source is the snapshot tests of secretlint's rule packages (secretlint/secretlint, MIT): each
`packages/@secretlint/secretlint-rule-<name>/test/snapshots/<case>/` holds an input file and the
`output.json` secretlint's own test expects, whose `messages` name every secret its rule reports
(the value in `data`) and whose `sourceContent` repeats the input. COPY is a folder laid out as the
repository holding the files `FILES` names (each at its commit); with `--clone` they are read out of
a local git clone with `git show COMMIT:PATH`. Nothing is fetched from the network.

Positives: for every message of a snapshot, the line (or lines) of the input holding the reported
value; the secret is that value (for `basicauth` and `database-connection-string`, which report the
whole URL, the password part of it). Several secrets on one line make one entry with `secrets`.
Negatives (look-alikes): every non-blank line that is not a `#` comment of an `ok.*` snapshot other
than `ok.allows` (whose values are secrets the test's config allows, not look-alikes). Left out:
secrets that are placeholders by our policy's shape (`placeholder_shape`), reported values that are
not in the stored input (input and output of different versions), snapshots with no stored input,
and the lines of `ng.*` snapshots that no message names (their label cannot be told). Nothing is
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
REPO = "secretlint/secretlint"
ROOT = "packages/@secretlint"
LICENCE = "MIT"
DATA_KEYS = ("KEY", "TOKEN", "ID", "SECRET", "CREDENTIAL", "URI")
"""The `data` fields of a message that hold the reported value, in the order looked for."""
URL_RULES = frozenset({"basicauth", "database-connection-string"})
"""Rules that report a whole `scheme://user:password@host` URL: the secret is the password."""
_PASSWORD = re.compile(r"://[^:/@\s]+:(.+)@[^@/\s]+")

FILES: dict[str, str] = {
    # Each file as copied (path under packages/@secretlint/ -> commit it was stored under).
    "secretlint-rule-1password/test/snapshots/ng.secret/output.json": "87e2056fe8100b3362df0636525463de5f8de70c",
    "secretlint-rule-anthropic/test/snapshots/ng.secret/output.json": "5284f5bd1d49f98bc5eb382e44235cf760ea674f",
    "secretlint-rule-aws/test/snapshots/ng.AWS Secret Access Key/output.json": "019c7d61f34b41f85435f3fe652b2904a648f4d0",
    "secretlint-rule-aws/test/snapshots/ok.AWS Secret Access Key/output.json": "019c7d61f34b41f85435f3fe652b2904a648f4d0",
    "secretlint-rule-azure/test/snapshots/ng.azure_client_secret/output.json": "09d0908cbb23a96f9c649e343032a76489ae80e2",
    "secretlint-rule-basicauth/test/snapshots/ng.basic-auth-http-url/output.json": "019c7d61f34b41f85435f3fe652b2904a648f4d0",
    "secretlint-rule-basicauth/test/snapshots/ng.real-credentials/output.json": "59d068243663f4b0f6bb8a3fbb5452a0cbe72fdd",
    "secretlint-rule-basicauth/test/snapshots/ok.valid-url/output.json": "7e4e40a3ecefb0f1c2ded1b6aca4217dd14edcbd",
    "secretlint-rule-cloudflare/test/snapshots/ng.secret/output.json": "2ca2bb282198981739760da4333dfb02b8fe9738",
    "secretlint-rule-cloudflare/test/snapshots/ok.valid/output.json": "2ca2bb282198981739760da4333dfb02b8fe9738",
    "secretlint-rule-database-connection-string/test/snapshots/ng.secret/output.json": "571e930a962e35af43eb2d006d26eb59d813104f",
    "secretlint-rule-database-connection-string/test/snapshots/ok.valid/output.json": "571e930a962e35af43eb2d006d26eb59d813104f",
    "secretlint-rule-databricks/test/snapshots/ng.secret/output.json": "c368290368965d5f329211a1220bad42978e7241",
    "secretlint-rule-databricks/test/snapshots/ok.valid/output.json": "08666a299a4946b3df825bcfd5cb1e27bff44edf",
    "secretlint-rule-docker/test/snapshots/ng.docker-pat/output.json": "ab0869f85addf0ea47aed99c040fdda1a431210d",
    "secretlint-rule-docker/test/snapshots/ok.valid/output.json": "be1b49e2d6326fee26d57414c217ded18a90d60f",
    "secretlint-rule-figma/test/snapshots/ng.secret/output.json": "c368290368965d5f329211a1220bad42978e7241",
    "secretlint-rule-github/test/snapshots/ng.apikey/output.json": "019c7d61f34b41f85435f3fe652b2904a648f4d0",
    "secretlint-rule-github/test/snapshots/ok.valid/output.json": "eb49c314ba45048a6b2d40e90fa4d0f5f82ca1d0",
    "secretlint-rule-github/test/snapshots/ng.fine_grained_pat/output.json": "62de26a58c9387589a58dbe62271d3052a31ca5a",
    "secretlint-rule-gitlab/test/snapshots/ng.personal_access_token/output.json": "020c9038b61fb67345132e0e1772897ee1d39626",
    "secretlint-rule-grafana/test/snapshots/ng.service_account_token/output.json": "cef9c56ac2d22dea3a7421aeb21436b7f194a9d7",
    "secretlint-rule-grafana/test/snapshots/ng.cloud_api_token/output.json": "cef9c56ac2d22dea3a7421aeb21436b7f194a9d7",
    "secretlint-rule-github/test/snapshots/ng.fine_grained_pat/input.txt": "62de26a58c9387589a58dbe62271d3052a31ca5a",
    "secretlint-rule-groq/test/snapshots/ng.secret/output.json": "cef9c56ac2d22dea3a7421aeb21436b7f194a9d7",
    "secretlint-rule-groq/test/snapshots/ok.valid/input.txt": "28aa0259e0d04e17568a7a34c909beb6128602ed",
    "secretlint-rule-hashicorp-vault/test/snapshots/ng.secret/output.json": "2fc5b28b536552b9dca12cb0e86e647f938d619c",
    "secretlint-rule-hashicorp-vault/test/snapshots/ok.valid/input.txt": "2fc5b28b536552b9dca12cb0e86e647f938d619c",
    "secretlint-rule-huggingface/test/snapshots/ng.secret/output.json": "28aa0259e0d04e17568a7a34c909beb6128602ed",
    "secretlint-rule-linear/test/snapshots/ng.secret/output.json": "a3f86d661bbbeb3fd894735c92baf03a197bf1a7",
    "secretlint-rule-linear/test/snapshots/ok.valid/output.json": "a3f86d661bbbeb3fd894735c92baf03a197bf1a7",
    "secretlint-rule-slack/test/snapshots/ng.found-slack-token/output.json": "13e31c44b1a811209bb218be891fb244b699ff7b",
    "secretlint-rule-slack/test/snapshots/ok.valid/input.txt": "13e31c44b1a811209bb218be891fb244b699ff7b",
    "secretlint-rule-stripe/test/snapshots/ng.secret/output.json": "eedb444bb332144ea4bafcac91611100881ba9a2",
    "secretlint-rule-stripe/test/snapshots/ok.valid/output.json": "cfe0ff8b58349b30a738e7870c43f8acdc6439c9",
    "secretlint-rule-sendgrid/test/snapshots/ng.apikey/output.json": "019c7d61f34b41f85435f3fe652b2904a648f4d0",
    "secretlint-rule-openai/test/snapshots/ng.secret/output.json": "666d3c58cb9192ea89864d614220602bfc1fff2e",
    "secretlint-rule-tailscale/test/snapshots/ok.valid/output.json": "c3ccf9b329a9fc3698174c65cf1366c16619ce1d",
}


@dataclass
class Corpus:
    positives: list[dict[str, object]] = field(default_factory=list)
    negatives: list[dict[str, object]] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)


def _source(path: str) -> str:
    return f"{REPO} {ROOT}/{path}@{FILES[path]}"


def _secret(rule: str, data: dict[str, str]) -> str:
    """The reported value of one message; the password alone where the rule reports a URL."""
    value = next(str(data[k]) for k in DATA_KEYS if k in data)
    if rule in URL_RULES:
        found = _PASSWORD.search(value)
        return found.group(1) if found else value
    return value


def _lines_holding(text: str, secret: str) -> str:
    """The whole line(s) of `text` over the first occurrence of `secret`."""
    at = text.index(secret)
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at + len(secret))
    return text[start : end if end >= 0 else len(text)]


def _snapshots(copy: Path) -> dict[str, dict[str, str]]:
    """Snapshot folder -> {file name: path under ROOT}, for the files FILES names."""
    folders: dict[str, dict[str, str]] = {}
    for path in FILES:
        folder, name = path.rsplit("/", 1)
        if (copy / ROOT / path).exists():
            folders.setdefault(folder, {})[name] = path
    return folders


def build(copy: Path) -> Corpus:
    corpus = Corpus()
    for folder, names in sorted(_snapshots(copy).items()):
        rule = folder.split("/", 1)[0].removeprefix("secretlint-rule-")
        case = folder.rsplit("/", 1)[1]
        output = (
            json.loads((copy / ROOT / names["output.json"]).read_text("utf-8"))
            if "output.json" in names
            else {}
        )
        inputs = [p for n, p in names.items() if n != "output.json"]
        if "sourceContent" in output:
            text, text_path = str(output["sourceContent"]), names["output.json"]
        elif inputs:
            text, text_path = (copy / ROOT / inputs[0]).read_text("utf-8"), inputs[0]
        else:
            corpus.left_out["no input stored"] += max(1, len(output.get("messages", [])))
            continue
        messages = list(output.get("messages", []))
        if case.startswith("ok."):
            if case.startswith("ok.allows") or messages:
                corpus.left_out["ok.allows (allowed secrets) or ok with messages"] += 1
                continue
            for line in text.split("\n"):
                if line.strip() and not line.lstrip().startswith("#"):
                    corpus.negatives.append(
                        {
                            "line": line,
                            "rule": f"secretlint.{rule}.{case.replace('.', '-')}",
                            "source": _source(text_path),
                            "licence": LICENCE,
                        }
                    )
            continue
        by_line: dict[str, list[str]] = {}
        for message in messages:
            secret = _secret(rule, message.get("data", {}))
            if secret not in text:
                corpus.left_out["reported value not in the stored input"] += 1
            elif placeholder_shape(secret):
                corpus.left_out["placeholder by shape"] += 1
            else:
                secrets = by_line.setdefault(_lines_holding(text, secret), [])
                if secret not in secrets:
                    secrets.append(secret)
        for line, secrets in by_line.items():
            entry: dict[str, object] = {"line": line}
            entry |= {"secret": secrets[0]} if len(secrets) == 1 else {"secrets": secrets}
            corpus.positives.append(
                entry
                | {
                    "rule": f"secretlint.{rule}.{case.replace('.', '-')}",
                    "source": _source(names.get("output.json", text_path)),
                    "licence": LICENCE,
                }
            )
    return corpus


def copy_from_clone(clone: Path, into: Path) -> Path:
    """Each file of `FILES` out of the git clone `clone`, at its commit, written under `into`."""
    for name, commit in FILES.items():
        shown = subprocess.run(
            ["git", "-C", str(clone), "show", f"{commit}:{ROOT}/{name}"], check=True, capture_output=True
        )
        (into / ROOT / name).parent.mkdir(parents=True, exist_ok=True)
        (into / ROOT / name).write_bytes(shown.stdout)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("copy", nargs="?", type=Path, help="a folder laid out as the repository")
    source.add_argument("--clone", type=Path, help="a git clone of secretlint/secretlint")
    parser.add_argument("--out", type=Path, default=HERE, help="where the JSONL files go (default: here)")
    args = parser.parse_args()
    if args.clone:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = build(copy_from_clone(args.clone, Path(tmp)))
    else:
        corpus = build(args.copy)
    for name, entries in (
        ("secretlint.jsonl", corpus.positives),
        ("secretlint_negative.jsonl", corpus.negatives),
    ):
        (args.out / name).write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    rules = {str(e["rule"]) for e in corpus.positives}
    print(
        f"{len(corpus.positives)} positive lines of {len(rules)} rules; {len(corpus.negatives)} look-alike lines"
    )
    print(f"left out {sum(corpus.left_out.values())}: {dict(sorted(corpus.left_out.items()))}")


if __name__ == "__main__":
    main()
