# ruff: noqa: E501
"""Writes the third held-out Kingfisher corpus (kingfisher3.jsonl, kingfisher3_negative.jsonl) beside this file.

Run: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_kingfisher3.py COPY
 or: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_kingfisher3.py --clone KF_CLONE

COPY is a local copy of MongoDB Kingfisher's repository laid out as the repository is (it holds
`crates/kingfisher-rules/data/rules/<file>.yml`), each file as of the commit `COMMITS` names; with
`--clone`, the files are read out of a local git clone of mongodb/kingfisher at those commits
(`git show COMMIT:PATH`). Nothing is fetched from the network; the rule files themselves are not
kept here. A standalone copy of `make_heldout_kingfisher2.py` (the second slice's builder), adapted:
each builder here is kept self-contained as the provenance record of its corpus.

Scope. Kingfisher (Apache-2.0) is a fork of Nosey Parker and keeps its rule format. The first
slice (`make_heldout_kingfisher.py`) read `adobe.yml` to `deno.yml`; the second
(`make_heldout_kingfisher2.py`) the names after `deno.yml` that start with d to m. This third
slice is a content-blind subset of the rest: the rule file names from `nango` to `statsig`, in
the alphabetical order of Kingfisher's generated rules page (`docs-site/docs/rules/builtin-rules.md`
at 1879479e7abe3185b452f2c158474011339e448f, whose Provider column is the rule file's base name);
the names after `statsig` (`statuscake` to `zuplo`) were not read, for time. Each candidate name
was looked up as an exact path, except the 28 in `NP_PROVIDER_LEFT_OUT`, left out unread and not
looked up because Nosey Parker, whose corpus is a development corpus here, has a rule file for the
same provider (the same base name, or plainly the same provider under another name): 62 of the
other 133 candidates are in the index and are `COMMITS`.

Every example of every rule in those files becomes one entry: the example text unchanged as
`line` (a block-scalar example keeps its final newline, as YAML defines it), and the secret the
rule captures in it, found by running the rule's own pattern with Python `re` (after the
translations `translate` makes) and taking the capture group that holds the secret
(`SECRET_GROUP`; the first group otherwise). Left out, and counted: the rules in `LEFT_OUT_RULES`
(they capture an identifier, a user name, a URL or host, a public address, or a whole URL rather
than the secret in it), examples whose secret is a placeholder by its shape
(`placeholder_shape`), examples the pattern does not capture in Python, and examples whose secret
occurs (a plain substring search) in any existing corpus file
(`graft_eval_pipeline_tests/secrets/data/*.jsonl` and the other `*.jsonl` beside this file, both
earlier Kingfisher slices included). Nothing else is filtered, in particular not by whether our
redactor finds them. Entries of the rule files Kingfisher's NOTICE says are derived in part from
another scanner carry `imported` (`IMPORTED`). Negative examples (texts Kingfisher's rule must not
match) are written as they are.
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
OUT_POSITIVE = "kingfisher3.jsonl"
OUT_NEGATIVE = "kingfisher3_negative.jsonl"

COMMITS: dict[str, str] = {
    # Each rule file in scope (under RULES_PATH), at the commit the code index stored it under.
    "nango.yml": "1e07d5358eced5fd6dc701b625e5bc78ed23e48b",
    "nasa.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "netlify.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "ngrok.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "notion.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "novu.yml": "1e07d5358eced5fd6dc701b625e5bc78ed23e48b",
    "nvidia.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "octopusdeploy.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "ollama.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "onelogin.yml": "2a2b7b5a7e5a9c64f3263bd6852069c80b02e080",
    "onepassword.yml": "28b784f88aec91954c3c1f12df9757fe49a9ac23",
    "openrouter.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "openshift.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "openweathermap.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "opsgenie.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "ovh.yml": "1e07d5358eced5fd6dc701b625e5bc78ed23e48b",
    "pandadoc.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "pastebin.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "paystack.yml": "cfa8467cfb2a42f58ff307ffe83c82ad4556e998",
    "pepipost.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "perplexity.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "pinata.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "pinecone.yml": "1e07d5358eced5fd6dc701b625e5bc78ed23e48b",
    "pipedrive.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "pirsch.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "plaid.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "planetscale.yml": "1e07d5358eced5fd6dc701b625e5bc78ed23e48b",
    "polymarket.yml": "4416290663a0b715e0d2cf0b8b684e33ec94eead",
    "posthog.yml": "1879479e7abe3185b452f2c158474011339e448f",
    "prefect.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "privateai.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "pubnub.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "pulumi.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "rails.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "railway.yml": "2a2b7b5a7e5a9c64f3263bd6852069c80b02e080",
    "ramp.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "razorpay.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "rdp.yml": "1879479e7abe3185b452f2c158474011339e448f",
    "readme.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "redirectpizza.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "redis.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "robinhood.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "rootly.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "s3uri.yml": "1879479e7abe3185b452f2c158474011339e448f",
    "saladcloud.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "samsara.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "scalingo.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "scraperapi.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "segment.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "sendbird.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "sendinblue.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "sentry.yml": "1879479e7abe3185b452f2c158474011339e448f",
    "settlemint.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "shippo.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "shortcut.yml": "b3ce1555eae4d0cb883b093c28ea2d08c0a3637e",
    "shutterstock.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "siliconflow.yml": "5eb060e5a294c5a27f650b486d7d8f99e55bd382",
    "snyk.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "splunk.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "sqlddl.yml": "41f1f46f62ad1b600159e79b9c7283241de06675",
    "squarespace.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "stabilityai.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
}

CHARS: dict[str, int] = {
    # The length of each file as the code index stored it (the copy was checked against it).
    "nango.yml": 1851, "nasa.yml": 943, "netlify.yml": 4453, "ngrok.yml": 926, "notion.yml": 2090,
    "novu.yml": 1578, "nvidia.yml": 986, "octopusdeploy.yml": 1698, "ollama.yml": 1513,
    "onelogin.yml": 4121, "onepassword.yml": 2956, "openrouter.yml": 1111, "openshift.yml": 2546,
    "openweathermap.yml": 1079, "opsgenie.yml": 1189, "ovh.yml": 2885, "pandadoc.yml": 1053,
    "pastebin.yml": 1083, "paystack.yml": 1310, "pepipost.yml": 1037, "perplexity.yml": 1880,
    "pinata.yml": 3449, "pinecone.yml": 2257, "pipedrive.yml": 1720, "pirsch.yml": 756, "plaid.yml": 7288,
    "planetscale.yml": 3477, "polymarket.yml": 4904, "posthog.yml": 4373, "prefect.yml": 854,
    "privateai.yml": 1409, "pubnub.yml": 1553, "pulumi.yml": 794, "rails.yml": 1407, "railway.yml": 1247,
    "ramp.yml": 1700, "razorpay.yml": 2225, "rdp.yml": 481, "readme.yml": 891, "redirectpizza.yml": 1129,
    "redis.yml": 4140, "robinhood.yml": 747, "rootly.yml": 749, "s3uri.yml": 524, "saladcloud.yml": 1952,
    "samsara.yml": 2111, "scalingo.yml": 874, "scraperapi.yml": 977, "segment.yml": 1655,
    "sendbird.yml": 1547, "sendinblue.yml": 959, "sentry.yml": 5215, "settlemint.yml": 1704,
    "shippo.yml": 882, "shortcut.yml": 1374, "shutterstock.yml": 1166, "siliconflow.yml": 1802,
    "snyk.yml": 1029, "splunk.yml": 850, "sqlddl.yml": 907, "squarespace.yml": 1290,
    "stabilityai.yml": 1102,
}  # fmt: skip

NP_PROVIDER_LEFT_OUT: dict[str, str] = {
    # Names of the slice left out unread (and not looked up): Nosey Parker (the keys of `COMMITS`
    # in make_heldout.py) has a rule file for the same provider. file -> NP's file.
    "netrc.yml": "rules/netrc.yml",
    "newrelic.yml": "rules/newrelic.yml",
    "npm.yml": "rules/npm.yml",
    "nuget.yml": "rules/nuget.yml",
    "odbc.yml": "rules/odbc.yml",
    "okta.yml": "rules/okta.yml",
    "openai.yml": "rules/openai.yml",
    "particle.io.yml": "rules/particle.io.yml",
    "pem.yml": "rules/pem.yml",
    "phpmailer.yml": "rules/phpmailer.yml",
    "postgres.yml": "rules/postgres.yml",
    "postman.yml": "rules/postman.yml",
    "postmark.yml": "rules/postmark.yml",
    "psexec.yml": "rules/psexec.yml",
    "pypi.yml": "rules/pypi.yml",
    "react.yml": "rules/react.yml",
    "rubygems.yml": "rules/rubygems.yml",
    "salesforce.yml": "rules/salesforce.yml",
    "sauce.yml": "rules/sauce.yml",
    "sendgrid.yml": "rules/sendgrid.yml",
    "shopify.yml": "rules/shopify.yml",
    "slack.yml": "rules/slack.yml",
    "sonarqube.yml": "rules/sonarqube.yml",
    "sourcegraph.yml": "rules/sourcegraph.yml",
    "square.yml": "rules/square.yml",
    "stackhawk.yml": "rules/stackhawk.yml",
    "privkey.yml": "rules/pem.yml (PEM-encoded private keys)",
    "sonarcloud.yml": "rules/sonarqube.yml (SonarSource's hosted SonarQube)",
}

_TITUS = "derived in part from Titus (https://github.com/praetorian-inc/titus), Kingfisher's NOTICE"
_BETTERLEAKS = (
    "derived in part from Betterleaks (https://github.com/betterleaks/betterleaks), Kingfisher's NOTICE"
)
_GITLEAKS = "derived in part from Gitleaks (https://github.com/gitleaks/gitleaks), Kingfisher's NOTICE"
IMPORTED: dict[str, str] = {
    # Rule files in scope that Kingfisher's NOTICE (at dcb74f9027032ab377bf8227ff682ff378950578,
    # NOTICE.kingfisher beside this file) lists as derived in part from another scanner's rules.
    "razorpay.yml": _TITUS,
    "redis.yml": _TITUS,
    "octopusdeploy.yml": _BETTERLEAKS,
    "openshift.yml": _BETTERLEAKS,
    "ovh.yml": _BETTERLEAKS,
    "planetscale.yml": _BETTERLEAKS,
    "polymarket.yml": _BETTERLEAKS,
    "privateai.yml": _BETTERLEAKS,
    "settlemint.yml": _BETTERLEAKS,
    "pinecone.yml": _GITLEAKS,
}

SECRET_GROUP: dict[str, int] = {
    # Rules with several capture groups: the group that holds the secret.
    "kingfisher.readme.1": 1,  # the whole `rdme_…` key (Kingfisher's TOKEN), not its named body RDMVAL
    "kingfisher.redis.1": 3,  # TOKEN (the whole URI), username, password, host, port, db: the password
    "kingfisher.redis.2": 1,  # password, host
}

LEFT_OUT_RULES: dict[str, str] = {
    # Rules whose name says they capture no secret (Kingfisher uses most of them, `visible:
    # false`, to feed another rule's validation).
    "kingfisher.octopusdeploy.1": "Octopus Deploy Server URL (a URL)",
    "kingfisher.onelogin.1": "OneLogin Client ID (an identifier)",
    "kingfisher.onelogin.3": "OneLogin Tenant Domain (a host name)",
    "kingfisher.openshift.1": "OpenShift API Server URL (a URL)",
    "kingfisher.pinata.1": "Pinata API Key ID (an identifier)",
    "kingfisher.plaid.1": "Plaid Client ID (an identifier)",
    "kingfisher.planetscale.2": "PlanetScale Username (a user name)",
    "kingfisher.polymarket.4": "Polymarket Wallet Address (a public address)",
    "kingfisher.ramp.1": "Ramp Client ID (an identifier)",
    "kingfisher.s3uri.1": "S3 Bucket URI (a URL)",
    "kingfisher.sendbird.1": "Sendbird Application ID (an identifier)",
    "kingfisher.sentry.4": "Sentry DSN (a whole URL; the key in it is Sentry's public client key)",
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

    White space around a capture is not part of the secret (the first slice's `kingfisher.ansible.1`
    captures an Ansible vault's hexadecimal lines with the line break before them): it is stripped.
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
