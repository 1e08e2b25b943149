"""Writes the held-out secret corpus (noseyparker.jsonl, noseyparker_negative.jsonl) beside this file.

Run: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout.py BUILTIN
 or: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout.py --clone NP_CLONE

BUILTIN is a local copy of Nosey Parker's `crates/noseyparker/data/default/builtin` folder (the
folder holding `rules/` and `rulesets/`), each file as of the commit `COMMITS` names; with
`--clone`, the files are read out of a local git clone of praetorian-inc/noseyparker at those
commits (`git show COMMIT:PATH`). Nothing is fetched from the network; the rule files themselves
are not kept here.

Every example of every rule in NP's `default` ruleset becomes one entry: the example text
unchanged as `line`, and the secret the rule captures in it, found by running the rule's own
pattern with Python `re` (after the few translations `translate` makes) and taking the capture
group that holds the secret (`SECRET_GROUP`; the only group otherwise). Examples left out: those
whose secret is a placeholder by its shape (`placeholder_shape`, the rule our redactor keeps a
format-valid token by), those the pattern does not capture in Python, and the rules in
`LEFT_OUT_RULES`. Nothing else is filtered, in particular not by whether our redactor finds them.
Negative examples (texts NP's rule must not match) are written as they are, each with the other
default rules that capture a secret in it (`matched_by`) and, where NP's rule file says in a
comment that its rule should match it, that comment (`np_note`): NP's negatives mean "this rule
must not fire", not "no secret here".
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
REPO = "praetorian-inc/noseyparker"
BUILTIN_PATH = "crates/noseyparker/data/default/builtin"
RULESET = "rulesets/default.yml"
LICENCE = "Apache-2.0"

COMMITS: dict[str, str] = {
    # The commit of each file as it was copied (the newest version the code index held for it).
    "rulesets/default.yml": "11bf738d0a18b8567aa87e000b0dd383b1de722c",
    "rules/adafruitio.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/adobe.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/age.yml": "9782bd66c2ebb503167b7b31da7709c664c202e7",
    "rules/anthropic.yml": "419969c0e2fe61b878e5700c67cbcd72846b8103",
    "rules/artifactory.yml": "d006eb0d2288e71b8a4121d70f5bf3a1fc0d6195",
    "rules/auth0.yml": "e025d6f32de0011520ef0c63dad0cad6a2c390fc",
    "rules/aws.yml": "9a5b0768d7ffd0e3ff78565c6fa0864c37dcf6c5",
    "rules/azure.yml": "c5b05007e2679f8b0b18334e5904d95ce73811c5",
    "rules/bitbucket.yml": "84c21e2df4e34b7142653e614eb77751f0e85506",
    "rules/blynk.yml": "fb766d96c24044ee424665977281bb0aff8dd59d",
    "rules/codeclimate.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/crates.io.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/databricks.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/dependency_track.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/digitalocean.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/django.yml": "259838562bd552a76b592e980d8547ed00699497",
    "rules/dockerhub.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/doppler.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/dropbox.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/dynatrace.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/facebook.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/figma.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/firecrawl.yml": "bcb2c2b9abd142de36a4c10d04aa3530c879bb75",
    "rules/generic.yml": "11bf738d0a18b8567aa87e000b0dd383b1de722c",
    "rules/gitalk.yml": "6ca2c5f1831e5f603c2b4ee6ee8234cc5a0e13ef",
    "rules/github.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/gitlab.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/google.yml": "4758ed7f2364964301a9500c2b90c417702f740f",
    "rules/gradle.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/grafana.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/groq.yml": "e80b7c02963ffca8fcc3cf81c6919761fd5a43f1",
    "rules/hashicorp.yml": "e2f4d66ba6550d350702129e69a2a3a18320aa17",
    "rules/heroku.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/http.yml": "bd35a42362fde61f9017d9f1f9bc073347007d04",
    "rules/huggingface.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/jenkins.yml": "ead14b191d2875a9b4f259fe3cf0bddc01016aec",
    "rules/jina.yml": "3d82f8f64422069548cf1fe87ccead927d0f4004",
    "rules/jwt.yml": "651e93678f41dd2b47742b2fa783bb490cdec510",
    "rules/kagi.yml": "76aed7532aacff63f2c5a82310c8be340aba6b79",
    "rules/kubernetes.yml": "f0f547375966bdb36381d321c69595fa39149b71",
    "rules/linkedin.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/mailchimp.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/mailgun.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/mapbox.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/microsoft_teams.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/mongo.yml": "83750401318a09c3656a89e559751f913ef8d049",
    "rules/netrc.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/newrelic.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/npm.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/nuget.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/odbc.yml": "259838562bd552a76b592e980d8547ed00699497",
    "rules/okta.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/openai.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/particle.io.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/pem.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/phpmailer.yml": "259838562bd552a76b592e980d8547ed00699497",
    "rules/postgres.yml": "83750401318a09c3656a89e559751f913ef8d049",
    "rules/postman.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/postmark.yml": "6dd8a6b0730cf2345b92f95f15946059e10dda19",
    "rules/psexec.yml": "3d82f8f64422069548cf1fe87ccead927d0f4004",
    "rules/pypi.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/react.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/rubygems.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/salesforce.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/sauce.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/sendgrid.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/shopify.yml": "f100db7b985db7c3a59f600b21b6ee46f3a7dfa4",
    "rules/slack.yml": "8d6963a805d5e1e2501291ad53ec4dd2c2b47dab",
    "rules/sonarqube.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/sourcegraph.yml": "c914956ce7c1b32dd6c38fd241f3e524cf59c5ae",
    "rules/square.yml": "ca4ef4d2a4771f69e64daf7fbb4f8fafdd18f19d",
    "rules/stackhawk.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/stripe.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/tavily.yml": "17e2b1380cd3fc36968a86295aa4490fd1baab03",
    "rules/teamcity.yml": "63f8492bb29d619eb56f530d52f959c96f3ab564",
    "rules/telegram.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/thingsboard.yml": "9782bd66c2ebb503167b7b31da7709c664c202e7",
    "rules/truenas.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/twilio.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/twitter.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
    "rules/vmware.yml": "3d82f8f64422069548cf1fe87ccead927d0f4004",
    "rules/wireguard.yml": "93085591ed21a78575ee0d8d920d657a4524ff3e",
}

SECRET_GROUP: dict[str, int] = {
    # Rules with several capture groups: the group that holds the secret (the others hold a user
    # name, a client or key id, a host, an endpoint or a configuration key, none of them secret).
    "np.auth0.1": 3,  # domain, client id, client secret
    "np.aws.6": 2,  # access key id, secret access key
    "np.azure.1": 2,  # account or key name, key
    "np.azure.2": 3,  # endpoint, credential id, secret
    "np.blynk.8": 2,  # client id, client secret
    "np.blynk.9": 2,  # client id, client secret
    "np.generic.3": 2,  # username, password
    "np.generic.4": 2,  # username, password
    "np.generic.7": 2,  # username, password
    "np.generic.8": 3,  # LDAP path, username, password
    "np.generic.9": 2,  # configuration key, value
    "np.generic.10": 2,  # configuration key, connection string
    "np.generic.13": 2,  # username, password
    "np.generic.14": 2,  # username, password
    "np.gitalk.1": 2,  # client id, client secret
    "np.google.6": 2,  # client id, client secret
    "np.gradle.1": 2,  # username, password (in that order in every example)
    "np.kubernetes.2": 2,  # token id, token secret
    "np.mongodb.1": 2,  # username, password, host
    "np.netrc.1": 3,  # machine, login, password
    "np.odbc.1": 2,  # user, password
    "np.phpmailer.1": 3,  # host, username, password
    "np.postgres.1": 2,  # username, password, host
    "np.psexec.1": 2,  # username, password
    "np.vmware.1": 2,  # username, password
}

LEFT_OUT_RULES: dict[str, str] = {
    # Rules of the default ruleset whose examples capture no secret at all.
    "np.reactapp.1": "captures a user name (NP's categories: fuzzy, identifier; no `secret`)",
}

_SHOULD = "FIXME: extend this rule so these examples get matched"
NP_NOTES: dict[tuple[str, int], tuple[str, str]] = {
    # Negatives that NP's rule file itself marks, in a comment above them, as a secret its rule
    # misses: (rule, index among its negative_examples) -> (how the line starts, the comment).
    ("np.auth0.1", 0): (
        "# config variables",
        "this one unfortunately doesn't match because the domain follows the ID and secret",
    ),
    ("np.aws.2", 4): ("aws_secret_key: ", "FIXME: modify the pattern to detect cases like the following"),
    ("np.facebook.1", 0): ('\\"fbconnectkey', "XXX would be nice if the following matched"),
    ("np.generic.1", 0): ("    client_credential=", _SHOULD),
    ("np.generic.1", 1): ("    secret_access_key = ", _SHOULD),
    ("np.generic.1", 2): ("    Ldap password ", _SHOULD),
    ("np.generic.3", 2): ("#if DEBUG", "FIXME: extend this rule so this actually gets matched"),
    ("np.msteams.1", 0): (
        "\t\t\toffice365ConnectorSend",
        "FIXME: we probably want this example to actually match",
    ),
    ("np.npm.1", 0): (
        "-export NPM_TOKEN=",
        "There are also NPM Legacy Access Tokens, which appear to be non-prefixed v4 UUIDs.",
    ),
    ("np.twitter.2", 0): ("Twitter(auth=OAuth(", "XXX It would be nice if this actually matched"),
}


# ---------------------------------------------------------------------------------------------
# Rust regex -> Python re


_LEADING_FLAGS = re.compile(r"(?:\s*\(\?[a-z]+\))+")


def translate(pattern: str) -> tuple[str, list[str]]:
    """The pattern for Python `re`, and the Rust-only constructs it had to translate.

    Rust's `regex` and Python's `re` agree on everything these patterns use but three things:

    - a flag group such as `(?s)` after the start of the pattern: Rust scopes it to the rest of
      its enclosing group, Python rejects it; it becomes the scoped group `(?s:...)` around that rest;
    - in verbose mode (`(?x)`) Rust ignores whitespace inside a counted repetition (`.{1, 5}`),
      Python reads `{1, 5}` as literal text; the whitespace is dropped;
    - in verbose mode Rust ignores whitespace inside a character class, Python keeps it; dropped.
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
    file: str  # path under BUILTIN_PATH, e.g. "rules/aws.yml"
    pattern: str
    examples: list[str]
    negatives: list[str]
    compiled: re.Pattern[str] | None = None
    translated: list[str] = field(default_factory=list)

    @property
    def source(self) -> str:
        return f"{REPO} {BUILTIN_PATH}/{self.file}@{COMMITS[self.file]}"


@dataclass
class Corpus:
    positives: list[dict[str, object]] = field(default_factory=list)
    negatives: list[dict[str, object]] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)
    left_out_entries: list[str] = field(default_factory=list)
    translated: dict[str, list[str]] = field(default_factory=dict)


def load_rules(builtin: Path) -> list[Rule]:
    """The rules of NP's default ruleset, in the order of the files and of each file's rules."""
    ruleset: dict[str, Any] = yaml.safe_load((builtin / RULESET).read_text(encoding="utf-8"))
    wanted = set(ruleset["rulesets"][0]["include_rule_ids"])
    rules: list[Rule] = []
    for path in sorted((builtin / "rules").glob("*.yml")):
        document: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
        for raw in document.get("rules") or []:
            if raw["id"] in wanted:
                rules.append(
                    Rule(
                        id=raw["id"],
                        file=f"rules/{path.name}",
                        pattern=raw["pattern"],
                        examples=list(raw.get("examples") or []),
                        negatives=list(raw.get("negative_examples") or []),
                    )
                )
    ids = [rule.id for rule in rules]
    duplicated = sorted(rid for rid, count in Counter(ids).items() if count > 1)
    missing = sorted(wanted - set(ids))
    if duplicated or missing:
        raise SystemExit(f"ruleset and rule files disagree: duplicated {duplicated}, missing {missing}")
    unknown = sorted({rule.file for rule in rules} - set(COMMITS))
    if unknown:
        raise SystemExit(f"no commit recorded for {unknown}: add them to COMMITS")
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
    """The secrets `rule` captures in `text`, in order, one per match."""
    if rule.compiled is None:
        return []
    group = SECRET_GROUP.get(rule.id, 1)
    return [m.group(group) for m in rule.compiled.finditer(text) if m.group(group)]


def captured(rule: Rule, text: str) -> list[str]:
    """The secrets `rule` captures in `text`, in order, each once."""
    return list(dict.fromkeys(captures(rule, text)))


def also_in_line(line: str, secrets: list[str], matches: list[str]) -> dict[str, int]:
    """How often each secret (or line of one) appears in `line` besides where NP captured it.

    A password equal to its user name, or a short one inside the host name (`bria` in
    `briaserver`), stays in the line after a correct redaction; the test allows those copies.
    """
    extra: dict[str, int] = {}
    for secret in secrets:
        pieces = [secret] if "\n" not in secret else [p for p in secret.split("\n") if len(p) >= 8]
        for piece in pieces:
            more = line.count(piece) - matches.count(secret)
            if more > 0:
                extra[piece] = more
    return extra


def build(builtin: Path) -> Corpus:
    rules = load_rules(builtin)
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
            else:
                entry: dict[str, object] = {"line": example}
                entry |= {"secret": real[0]} if len(real) == 1 else {"secrets": real}
                extra = also_in_line(example, real, matches)
                entry |= {"also_in_line": extra} if extra else {}
                corpus.positives.append(entry | {"rule": rule.id, "source": rule.source, "licence": LICENCE})
                continue
            corpus.left_out[reason] += 1
            shown = (secrets[0][:12] + "…") if secrets else repr(example[:40])
            corpus.left_out_entries.append(f"{rule.id}: {reason}: {shown}")
    for rule in rules:
        for index, example in enumerate(rule.negatives):
            entry = {"line": example, "rule": rule.id, "source": rule.source, "licence": LICENCE}
            matched_by = [
                other.id
                for other in rules
                if other.id != rule.id and any(not placeholder_shape(s) for s in captured(other, example))
            ]
            if matched_by:
                entry["matched_by"] = matched_by
            if (rule.id, index) in NP_NOTES:
                start, note = NP_NOTES[rule.id, index]
                if not example.startswith(start):
                    raise SystemExit(
                        f"{rule.id} negative {index} no longer starts {start!r}: update NP_NOTES"
                    )
                entry["np_note"] = note
            corpus.negatives.append(entry)
    return corpus


def copy_from_clone(clone: Path, into: Path) -> Path:
    """Each file of `COMMITS` out of the git clone `clone`, at its commit, written under `into`."""
    for name, commit in COMMITS.items():
        shown = subprocess.run(
            ["git", "-C", str(clone), "show", f"{commit}:{BUILTIN_PATH}/{name}"],
            check=True,
            capture_output=True,
        )
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        (into / name).write_bytes(shown.stdout)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("builtin", nargs="?", type=Path, help=f"a copy of NP's {BUILTIN_PATH} folder")
    source.add_argument("--clone", type=Path, help="a git clone of praetorian-inc/noseyparker")
    parser.add_argument("--out", type=Path, default=HERE, help="where the JSONL files go (default: here)")
    args = parser.parse_args()
    if args.clone:
        with tempfile.TemporaryDirectory() as tmp:
            corpus = build(copy_from_clone(args.clone, Path(tmp)))
    else:
        corpus = build(args.builtin)
    for name, entries in (
        ("noseyparker.jsonl", corpus.positives),
        ("noseyparker_negative.jsonl", corpus.negatives),
    ):
        (args.out / name).write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    rules = {str(e["rule"]) for e in corpus.positives}
    print(f"{len(corpus.positives)} examples of {len(rules)} rules; {len(corpus.negatives)} negatives")
    print(f"left out {sum(corpus.left_out.values())}: {dict(sorted(corpus.left_out.items()))}")
    for line in corpus.left_out_entries:
        print(f"  {line}")
    print("translated:")
    for rule_id, notes in corpus.translated.items():
        print(f"  {rule_id}: {'; '.join(notes)}")


if __name__ == "__main__":
    main()
