# ruff: noqa: E501
"""Writes the held-out secret corpus (kingfisher.jsonl, kingfisher_negative.jsonl) beside this file.

Run: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_kingfisher.py COPY
 or: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_kingfisher.py --clone KF_CLONE

COPY is a local copy of MongoDB Kingfisher's repository laid out as the repository is (it holds
`crates/kingfisher-rules/data/rules/<file>.yml`), each file as of the commit `COMMITS` names; with
`--clone`, the files are read out of a local git clone of mongodb/kingfisher at those commits
(`git show COMMIT:PATH`). Nothing is fetched from the network; the rule files themselves are not
kept here.

Scope. Kingfisher (Apache-2.0) is a fork of Nosey Parker and keeps its rule format. The code
index this was built from lists the first 100 files of `crates/kingfisher-rules/data/rules/`
alphabetically (`adobe.yml` to `deno.yml` of 371): that alphabetical slice is the scope, not a
choice by content. Of it, the 24 files in `NP_PROVIDER_LEFT_OUT` are left out because Nosey
Parker, whose corpus is a development corpus here, has a rule file for the same provider (the same
base name, or Azure's services against NP's `azure.yml`); the other 76 are `COMMITS`.

Every example of every rule in those files becomes one entry: the example text unchanged as
`line` (a block-scalar example keeps its final newline, as YAML defines it), and the secret the
rule captures in it, found by running the rule's own pattern with Python `re` (after the
translations `translate` makes) and taking the capture group that holds the secret
(`SECRET_GROUP`; the first group otherwise). Left out, and counted: the rules in `LEFT_OUT_RULES`
(they capture an identifier, a user name, a URL or host, or a marker, no secret), examples whose
secret is a placeholder by its shape (`placeholder_shape`), examples the pattern does not capture
in Python, and examples whose secret occurs (a plain substring search) in any existing corpus file
(`graft_eval_pipeline_tests/secrets/data/*.jsonl` and the other `*.jsonl` beside this file).
Nothing else is filtered, in particular not by whether our redactor finds them. Entries of the
rule files Kingfisher's NOTICE says are derived in part from another scanner carry `imported`
(`IMPORTED`). Negative examples (texts Kingfisher's rule must not match) are written as they are.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from graft_eval_pipeline.secrets.values import placeholder_shape

HERE = Path(__file__).parent
DATA = HERE.parent  # graft_eval_pipeline_tests/secrets/data
REPO = "mongodb/kingfisher"
RULES_PATH = "crates/kingfisher-rules/data/rules"
LICENCE = "Apache-2.0"
OUT_POSITIVE = "kingfisher.jsonl"
OUT_NEGATIVE = "kingfisher_negative.jsonl"

COMMITS: dict[str, str] = {
    # Each rule file in scope (under RULES_PATH), at the commit the code index stored it under.
    "agora.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "ai21.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "aikido.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "airbrake.yml": "2a2b7b5a7e5a9c64f3263bd6852069c80b02e080",
    "airbyte.yml": "92b517c3b52a4d4c7a045973a31add786c63c2ac",
    "airtable.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "aiven.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "algolia.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "alibaba.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "amplitude.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "ansible.yml": "3b866b3c50a1da2e98ffd9eb1dd1062261314f20",
    "anypoint.yml": "2a2b7b5a7e5a9c64f3263bd6852069c80b02e080",
    "apify.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "arcjet.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "asana.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "assemblyai.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "atlassian.yml": "7cba2c8cf8735a37ccf9bff4717e36e456d78caf",
    "auth.yml": "2a2b7b5a7e5a9c64f3263bd6852069c80b02e080",
    "bamboo.yml": "cfa8467cfb2a42f58ff307ffe83c82ad4556e998",
    "beamer.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "bip39.yml": "6f09c7c4cd1ba78e89579ec0adb3fcc61fe24643",
    "bitrise.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "bitwarden.yml": "cfa8467cfb2a42f58ff307ffe83c82ad4556e998",
    "blockprotocol.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "box.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "braintree.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "branchio.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "browserbase.yml": "5eb060e5a294c5a27f650b486d7d8f99e55bd382",
    "browserstack.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "builderio.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "buildkite.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "buttercms.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "calcom.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "calendly.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "canva.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "cartesia.yml": "5eb060e5a294c5a27f650b486d7d8f99e55bd382",
    "carto.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "censys.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "chartmogul.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "cielo.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "circleci.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "cisco.yml": "28b784f88aec91954c3c1f12df9757fe49a9ac23",
    "ciscomeraki.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "civo.yml": "4416290663a0b715e0d2cf0b8b684e33ec94eead",
    "clarifai.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "clay.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "clearbit.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "clickup.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "clockwork.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "closecrm.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "cloudant.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "cloudflare.yml": "28b784f88aec91954c3c1f12df9757fe49a9ac23",
    "cloudsight.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "cockroachlabs.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "codacy.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "cohere.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "coinbase.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "composio.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "configcat.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "confluence.yml": "2a2b7b5a7e5a9c64f3263bd6852069c80b02e080",
    "couchbase.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "courier.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "credentials.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "crossmint.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "curl.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "cursor.yml": "28b784f88aec91954c3c1f12df9757fe49a9ac23",
    "cypress.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "datadog.yml": "1879479e7abe3185b452f2c158474011339e448f",
    "datagov.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "dbconn.yml": "1879479e7abe3185b452f2c158474011339e448f",
    "deepgram.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "deepl.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "deepseek.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "definednetworking.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "delighted.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "deno.yml": "28b784f88aec91954c3c1f12df9757fe49a9ac23",
}

CHARS: dict[str, int] = {
    # The length of each file as the code index stored it (the copy was checked against it).
    "agora.yml": 1925, "ai21.yml": 1256, "aikido.yml": 2727, "airbrake.yml": 1076, "airbyte.yml": 2026,
    "airtable.yml": 2747, "aiven.yml": 1265, "algolia.yml": 1376, "alibaba.yml": 7012, "amplitude.yml": 1482,
    "ansible.yml": 1038, "anypoint.yml": 3472, "apify.yml": 1122, "arcjet.yml": 974, "asana.yml": 5034,
    "assemblyai.yml": 1106, "atlassian.yml": 3336, "auth.yml": 2481, "bamboo.yml": 2341, "beamer.yml": 880,
    "bip39.yml": 1659, "bitrise.yml": 918, "bitwarden.yml": 1574, "blockprotocol.yml": 1013, "box.yml": 1145,
    "braintree.yml": 1148, "branchio.yml": 2143, "browserbase.yml": 1545, "browserstack.yml": 2107,
    "builderio.yml": 672, "buildkite.yml": 1148, "buttercms.yml": 886, "calcom.yml": 904, "calendly.yml": 1485,
    "canva.yml": 2242, "cartesia.yml": 1776, "carto.yml": 894, "censys.yml": 1494, "chartmogul.yml": 1023,
    "cielo.yml": 2343, "circleci.yml": 2103, "cisco.yml": 2159, "ciscomeraki.yml": 963, "civo.yml": 949,
    "clarifai.yml": 1177, "clay.yml": 780, "clearbit.yml": 934, "clickup.yml": 931, "clockwork.yml": 1036,
    "closecrm.yml": 1050, "cloudant.yml": 1232, "cloudflare.yml": 5277, "cloudsight.yml": 1108,
    "cockroachlabs.yml": 1499, "codacy.yml": 917, "cohere.yml": 1080, "coinbase.yml": 2382, "composio.yml": 1731,
    "configcat.yml": 1895, "confluence.yml": 1929, "couchbase.yml": 1289, "courier.yml": 1003,
    "credentials.yml": 480, "crossmint.yml": 1734, "curl.yml": 1005, "cursor.yml": 1455, "cypress.yml": 1736,
    "datadog.yml": 4138, "datagov.yml": 1142, "dbconn.yml": 4131, "deepgram.yml": 1227, "deepl.yml": 1855,
    "deepseek.yml": 953, "definednetworking.yml": 1190, "delighted.yml": 911, "deno.yml": 2373,
}  # fmt: skip

NP_PROVIDER_LEFT_OUT: dict[str, str] = {
    # Files of the alphabetical slice left out unread: Nosey Parker (the keys of `COMMITS` in
    # make_heldout.py) has a rule file for the same provider. file -> NP's file.
    "adobe.yml": "rules/adobe.yml",
    "age.yml": "rules/age.yml",
    "anthropic.yml": "rules/anthropic.yml",
    "artifactory.yml": "rules/artifactory.yml",
    "auth0.yml": "rules/auth0.yml",
    "aws.yml": "rules/aws.yml",
    "azure.yml": "rules/azure.yml",
    "azure-notification-hub.yml": "rules/azure.yml (Microsoft Azure)",
    "azureapim.yml": "rules/azure.yml (Microsoft Azure)",
    "azurecosmosdb.yml": "rules/azure.yml (Microsoft Azure)",
    "azuredevops.yml": "rules/azure.yml (Microsoft Azure)",
    "azurefunctionkey.yml": "rules/azure.yml (Microsoft Azure)",
    "azurelogicapps.yml": "rules/azure.yml (Microsoft Azure)",
    "azureopenai.yml": "rules/azure.yml (Microsoft Azure)",
    "azuresearchquery.yml": "rules/azure.yml (Microsoft Azure)",
    "azuresignalr.yml": "rules/azure.yml (Microsoft Azure)",
    "azuresql.yml": "rules/azure.yml (Microsoft Azure)",
    "azurestorage.yml": "rules/azure.yml (Microsoft Azure)",
    "azurewebpubsub.yml": "rules/azure.yml (Microsoft Azure)",
    "bitbucket.yml": "rules/bitbucket.yml",
    "blynk.yml": "rules/blynk.yml",
    "codeclimate.yml": "rules/codeclimate.yml",
    "crates.io.yml": "rules/crates.io.yml",
    "databricks.yml": "rules/databricks.yml",
}

_TITUS = "derived in part from Titus (https://github.com/praetorian-inc/titus), Kingfisher's NOTICE"
_BETTERLEAKS = (
    "derived in part from Betterleaks (https://github.com/betterleaks/betterleaks), Kingfisher's NOTICE"
)
_GITLEAKS = "derived in part from Gitleaks (https://github.com/gitleaks/gitleaks), Kingfisher's NOTICE"
IMPORTED: dict[str, str] = {
    # Rule files in scope that Kingfisher's NOTICE (at dcb74f9027032ab377bf8227ff682ff378950578)
    # lists as derived in part from another scanner's rules.
    "ansible.yml": _TITUS,
    "branchio.yml": _TITUS,
    "browserstack.yml": _TITUS,
    "calendly.yml": _TITUS,
    "cypress.yml": _TITUS,
    "delighted.yml": _TITUS,
    "airtable.yml": _BETTERLEAKS,
    "civo.yml": _BETTERLEAKS,
    "cielo.yml": _GITLEAKS,
}

SECRET_GROUP: dict[str, int] = {
    # Rules with several capture groups: the group that holds the secret.
    "kingfisher.bip39.mnemonic": 1,  # the phrase, and the same phrase named `mnemonic`
    "kingfisher.bitwarden.1": 2,  # user uuid, client secret
    "kingfisher.cloudant.1": 2,  # user name, password
    "kingfisher.coinbase.2": 2,  # key name, private key (and two optional ` BLOCK` groups)
    "kingfisher.coinbase.3": 2,  # key id, private key
    "kingfisher.credentials.1": 2,  # user, password, host, path
}

LEFT_OUT_RULES: dict[str, str] = {
    # Rules whose name says they capture no secret (Kingfisher uses most of them, `visible:
    # false`, to feed another rule's validation).
    "kingfisher.agora.1": "Agora App ID (an identifier)",
    "kingfisher.aikido.2": "Aikido Client ID (an identifier)",
    "kingfisher.airbyte.1": "Airbyte Application Client ID (an identifier)",
    "kingfisher.algolia.2": "Algolia Application ID (an identifier)",
    "kingfisher.alibabacloud.1": "Alibaba Access Key ID (the id half of a key pair)",
    "kingfisher.alibabacloud.3": "Alibaba STS Access Key ID (the id half of a key pair)",
    "kingfisher.anypoint.2": "Anypoint OAuth Client ID (an identifier)",
    "kingfisher.asana.1": "Asana Client ID (an identifier)",
    "kingfisher.bamboo.2": "Bamboo Data Center Base URL (a URL)",
    "kingfisher.browserstack.2": "BrowserStack Username (a user name)",
    "kingfisher.canva.2": "Canva Connect API Client ID (an identifier)",
    "kingfisher.censys.1": "Censys API ID (an identifier)",
    "kingfisher.cielo.1": "Cielo Client ID (an identifier)",
    "kingfisher.cisco.4": "Network Config NVRAM Indicator (a marker text)",
    "kingfisher.confluence.2": "Confluence Data Center Domain (a host name)",
    "kingfisher.cypress.2": "Cypress Project ID (an identifier)",
    "kingfisher.datadog.1": "Datadog Site Domain (a host name)",
}


# ---------------------------------------------------------------------------------------------
# Rust regex -> Python re


_LEADING_FLAGS = re.compile(r"(?:\s*\(\?[a-z]+\))+")
_POSIX_CLASSES: dict[str, str] = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "digit": "0-9",
    "lower": "a-z",
    "space": "\\s",
    "upper": "A-Z",
    "xdigit": "0-9a-fA-F",
}


def translate(pattern: str) -> tuple[str, list[str]]:
    """The pattern for Python `re`, and the Rust-only constructs it had to translate.

    Rust's `regex` and Python's `re` agree on everything these patterns use but four things:

    - a flag group such as `(?s)` after the start of the pattern: Rust scopes it to the rest of
      its enclosing group, Python rejects it; it becomes the scoped group `(?s:...)` around that rest;
    - in verbose mode (`(?x)`) Rust ignores whitespace inside a counted repetition (`.{1, 5}`),
      Python reads `{1, 5}` as literal text; the whitespace is dropped;
    - in verbose mode Rust ignores whitespace inside a character class, Python keeps it; dropped;
    - POSIX classes inside a character class (`[[:alnum:]_-]`), which Python lacks: spelled out
      as ranges (`[a-zA-Z0-9_-]`).
    """
    lead = _LEADING_FLAGS.match(pattern)
    start = lead.end() if lead else 0
    verbose = bool(lead) and "x" in "".join(re.findall(r"\(\?([a-z]+)\)", lead.group() if lead else ""))
    out: list[str] = []
    closers = [0]  # per open group (the first: the whole pattern), the `)` to add when it closes
    notes: list[str] = []
    i, n = start, len(pattern)
    out.append(pattern[:start])
    while i < n:
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
        elif c == "[":
            j, klass = i + 1, ["["]
            if j < n and pattern[j] == "^":
                klass.append("^")
                j += 1
            if j < n and pattern[j] == "]":
                klass.append("]")
                j += 1
            while j < n and pattern[j] != "]":
                posix = re.match(r"\[:([a-z]+):\]", pattern[j:])
                if posix:
                    klass.append(_POSIX_CLASSES[posix.group(1)])
                    notes.append("POSIX class in a character class")
                    j += posix.end()
                    continue
                if pattern[j] == "\\":
                    klass.append(pattern[j : j + 2])
                    j += 2
                    continue
                if verbose and pattern[j].isspace():
                    notes.append("whitespace in a character class (verbose mode)")
                else:
                    klass.append(pattern[j])
                j += 1
            out.append("".join(klass) + "]")
            i = j + 1
        elif c == "(" and pattern.startswith("(?#", i):
            j = pattern.index(")", i)
            out.append(pattern[i : j + 1])
            i = j + 1
        elif c == "(":
            flag = re.match(r"\(\?([a-z]+)\)", pattern[i:])
            if flag:
                out.append(f"(?{flag.group(1)}:")
                closers[-1] += 1
                notes.append(f"inline flag group (?{flag.group(1)}) after the start")
                i += flag.end()
            else:
                out.append("(")
                closers.append(0)
                i += 1
        elif c == ")":
            out.append(")" * closers.pop() + ")")
            i += 1
        elif c == "{" and verbose:
            rep = re.match(r"\{\s*\d*\s*(?:,\s*\d*\s*)?\}", pattern[i:])
            if rep and re.search(r"\s", rep.group()):
                out.append(re.sub(r"\s", "", rep.group()))
                notes.append("whitespace in a counted repetition (verbose mode)")
                i += rep.end()
            else:
                out.append(c)
                i += 1
        elif c == "#" and verbose:
            j = pattern.find("\n", i)
            j = n if j < 0 else j
            out.append(pattern[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    out.append(")" * closers[0])
    return "".join(out), sorted(set(notes))


# ---------------------------------------------------------------------------------------------
# The corpus


@dataclass
class Rule:
    id: str
    file: str  # file name under RULES_PATH, e.g. "agora.yml"
    pattern: str
    examples: list[str]
    negatives: list[str]
    compiled: re.Pattern[str] | None = None
    translated: list[str] = field(default_factory=list)

    @property
    def source(self) -> str:
        return f"{REPO} {RULES_PATH}/{self.file}@{COMMITS[self.file]}"


@dataclass
class Corpus:
    positives: list[dict[str, object]] = field(default_factory=list)
    negatives: list[dict[str, object]] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)
    left_out_entries: list[str] = field(default_factory=list)
    translated: dict[str, list[str]] = field(default_factory=dict)


def natural(text: str) -> list[object]:
    """A sort key that orders `kingfisher.aikido.2` before `kingfisher.aikido.10`."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text)]


def load_rules(copy: Path) -> list[Rule]:
    """The rules of the files in scope, sorted by file, then by rule id."""
    rules: list[Rule] = []
    for name in sorted(COMMITS):
        text = (copy / RULES_PATH / name).read_text(encoding="utf-8")
        if len(text) != CHARS[name]:
            print(f"warning: {name} has {len(text)} characters, the stored copy had {CHARS[name]}")
        document: dict[str, Any] = yaml.safe_load(text)
        for raw in document.get("rules") or []:
            rules.append(
                Rule(
                    id=raw["id"],
                    file=name,
                    pattern=raw["pattern"],
                    examples=[str(e) for e in raw.get("examples") or []],
                    negatives=[str(e) for e in raw.get("negative_examples") or []],
                )
            )
    rules.sort(key=lambda rule: (rule.file, natural(rule.id)))
    duplicated = sorted(rid for rid, count in Counter(rule.id for rule in rules).items() if count > 1)
    if duplicated:
        raise SystemExit(f"rule ids defined twice: {duplicated}")
    for rule in rules:
        python, rule.translated = translate(rule.pattern)
        try:
            rule.compiled = re.compile(python)
        except re.error:
            rule.compiled = None
        if rule.compiled is not None and rule.compiled.groups > 1 and rule.id not in SECRET_GROUP:
            raise SystemExit(f"{rule.id} has {rule.compiled.groups} groups: name its secret in SECRET_GROUP")
    return rules


def captures(rule: Rule, text: str) -> list[str]:
    """The secrets `rule` captures in `text`, in order, one per match.

    White space around a capture is not part of the secret (`kingfisher.ansible.1` captures the
    vault's hexadecimal lines with the line break before them): it is stripped.
    """
    if rule.compiled is None:
        return []
    group = SECRET_GROUP.get(rule.id, 1)
    found = [(m.group(group) or "").strip() for m in rule.compiled.finditer(text)]
    return [secret for secret in found if secret]


def also_in_line(line: str, secrets: list[str], matches: list[str]) -> dict[str, int]:
    """How often each secret (or line of one) appears in `line` besides where the rule captured it."""
    extra: dict[str, int] = {}
    for secret in secrets:
        pieces = [secret] if "\n" not in secret else [p for p in secret.split("\n") if len(p) >= 8]
        for piece in pieces:
            more = line.count(piece) - matches.count(secret)
            if more > 0:
                extra[piece] = more
    return extra


def existing_corpora(out: Path) -> str:
    """The text of every existing corpus file (this corpus's own outputs excepted)."""
    files = sorted(
        {*DATA.glob("*.jsonl"), *HERE.glob("*.jsonl")} - {HERE / OUT_POSITIVE, HERE / OUT_NEGATIVE}
    )
    files = [f for f in files if f.parent != out or f.name not in (OUT_POSITIVE, OUT_NEGATIVE)]
    return "\n".join(f.read_text(encoding="utf-8") for f in files)


def seen_before(secret: str, text: str) -> bool:
    """Whether `secret` occurs in `text`, as written or as JSON writes it."""
    return secret in text or json.dumps(secret)[1:-1] in text


def build(copy: Path, out: Path) -> Corpus:
    rules = load_rules(copy)
    existing = existing_corpora(out)
    corpus = Corpus(translated={rule.id: rule.translated for rule in rules if rule.translated})
    for rule in rules:
        if rule.id in LEFT_OUT_RULES:
            corpus.left_out["rule left out (no secret)"] += len(rule.examples)
            corpus.left_out_entries += [f"{rule.id}: {LEFT_OUT_RULES[rule.id]}"] * len(rule.examples)
            continue
        for example in rule.examples:
            matches = captures(rule, example)
            secrets = list(dict.fromkeys(matches))
            real = [s for s in secrets if not placeholder_shape(s)]
            if not secrets:
                reason = "not captured in Python" if rule.compiled else "pattern not compiled by Python"
            elif not real:
                reason = "placeholder by shape"
            elif any(seen_before(s, existing) for s in real):
                reason = "secret already in an existing corpus"
            else:
                entry: dict[str, object] = {"line": example}
                entry |= {"secret": real[0]} if len(real) == 1 else {"secrets": real}
                extra = also_in_line(example, real, matches)
                entry |= {"also_in_line": extra} if extra else {}
                entry |= {"rule": rule.id, "source": rule.source, "licence": LICENCE}
                entry |= {"imported": IMPORTED[rule.file]} if rule.file in IMPORTED else {}
                corpus.positives.append(entry)
                continue
            corpus.left_out[reason] += 1
            shown = (secrets[0][:6] + "…") if secrets else repr(example[:24])
            corpus.left_out_entries.append(f"{rule.id}: {reason}: {shown}")
    for rule in rules:
        for example in rule.negatives:
            corpus.negatives.append(
                {"line": example, "rule": rule.id, "source": rule.source, "licence": LICENCE}
            )
    return corpus


def copy_from_clone(clone: Path, into: Path) -> Path:
    """Each file of `COMMITS` out of the git clone `clone`, at its commit, written under `into`."""
    for name, commit in COMMITS.items():
        shown = subprocess.run(
            ["git", "-C", str(clone), "show", f"{commit}:{RULES_PATH}/{name}"],
            check=True,
            capture_output=True,
        )
        (into / RULES_PATH).mkdir(parents=True, exist_ok=True)
        (into / RULES_PATH / name).write_bytes(shown.stdout)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("copy", nargs="?", type=Path, help=f"a copy of Kingfisher holding {RULES_PATH}/")
    source.add_argument("--clone", type=Path, help="a git clone of mongodb/kingfisher")
    parser.add_argument("--out", type=Path, default=HERE, help="where the JSONL files go (default: here)")
    args = parser.parse_args()
    if args.clone:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = build(copy_from_clone(args.clone, Path(tmp)), args.out)
    else:
        corpus = build(args.copy, args.out)
    for name, entries in ((OUT_POSITIVE, corpus.positives), (OUT_NEGATIVE, corpus.negatives)):
        (args.out / name).write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    rules = {str(e["rule"]) for e in corpus.positives}
    families = {
        rule.rsplit(".", 1)[0] if rule.count(".") == 2 else ".".join(rule.split(".")[:2]) for rule in rules
    }
    secrets = {s for e in corpus.positives for s in ([e["secret"]] if "secret" in e else e["secrets"])}  # type: ignore[attr-defined]
    imported = Counter(str(e["imported"]).split(" (")[0] for e in corpus.positives if "imported" in e)
    print(
        f"{len(corpus.positives)} examples of {len(rules)} rules ({len(families)} families), {len(secrets)} distinct secrets"
    )
    print(f"{len(corpus.negatives)} negatives; imported: {dict(sorted(imported.items()))}")
    print(f"left out {sum(corpus.left_out.values())}: {dict(sorted(corpus.left_out.items()))}")
    for line in corpus.left_out_entries:
        print(f"  {line}")
    print("translated:")
    for rule_id, notes in corpus.translated.items():
        print(f"  {rule_id}: {'; '.join(notes)}")


if __name__ == "__main__":
    main()
