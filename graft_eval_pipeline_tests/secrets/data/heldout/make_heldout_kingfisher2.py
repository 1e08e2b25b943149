# ruff: noqa: E501
"""Writes the second held-out Kingfisher corpus (kingfisher2.jsonl, kingfisher2_negative.jsonl) beside this file.

Run: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_kingfisher2.py COPY
 or: .venv/bin/python graft_eval_pipeline_tests/secrets/data/heldout/make_heldout_kingfisher2.py --clone KF_CLONE

COPY is a local copy of MongoDB Kingfisher's repository laid out as the repository is (it holds
`crates/kingfisher-rules/data/rules/<file>.yml`), each file as of the commit `COMMITS` names; with
`--clone`, the files are read out of a local git clone of mongodb/kingfisher at those commits
(`git show COMMIT:PATH`). Nothing is fetched from the network; the rule files themselves are not
kept here. A standalone copy of `make_heldout_kingfisher.py` (the first slice's builder), adapted:
each builder here is kept self-contained as the provenance record of its corpus.

Scope. Kingfisher (Apache-2.0) is a fork of Nosey Parker and keeps its rule format. The first
slice (`make_heldout_kingfisher.py`) read `adobe.yml` to `deno.yml`, the first 100 files the code
index lists under `crates/kingfisher-rules/data/rules/` (of 371). This second slice is a
content-blind subset of the rest: every file after `deno.yml` whose name starts with d to m. The
index lists no more than 100 files of a folder, so the names were taken from Kingfisher's
generated rules page (`docs-site/docs/rules/builtin-rules.md` at
1879479e7abe3185b452f2c158474011339e448f, whose Provider column is the rule file's base name) and
each candidate name was looked up as an exact path: 125 of the 205 candidates from `deno` to `mz`
are in the index. Of them, the 30 files in `NP_PROVIDER_LEFT_OUT` are left out unread because Nosey
Parker, whose corpus is a development corpus here, has a rule file for the same provider (the same
base name, or plainly the same provider under another name); the other 95 are `COMMITS`.

Every example of every rule in those files becomes one entry: the example text unchanged as
`line` (a block-scalar example keeps its final newline, as YAML defines it), and the secret the
rule captures in it, found by running the rule's own pattern with Python `re` (after the
translations `translate` makes) and taking the capture group that holds the secret
(`SECRET_GROUP`; the first group otherwise). Left out, and counted: the rules in `LEFT_OUT_RULES`
(they capture an identifier, a user name, a URL or host, a public key, or a whole connection string
rather than the secret in it), examples whose secret is a placeholder by its shape
(`placeholder_shape`), examples the pattern does not capture in Python, and examples whose secret
occurs (a plain substring search) in any existing corpus file
(`graft_eval_pipeline_tests/secrets/data/*.jsonl` and the other `*.jsonl` beside this file, the
first Kingfisher slice's included). Nothing else is filtered, in particular not by whether our
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
OUT_POSITIVE = "kingfisher2.jsonl"
OUT_NEGATIVE = "kingfisher2_negative.jsonl"

COMMITS: dict[str, str] = {
    # Each rule file in scope (under RULES_PATH), at the commit the code index stored it under.
    "detectify.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "deviantart.yml": "1879479e7abe3185b452f2c158474011339e448f",
    "diffbot.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "discord.yml": "28b784f88aec91954c3c1f12df9757fe49a9ac23",
    "disqus.yml": "91c93be5fad54601d78999c83553a198727d0ee1",
    "dotnet-connstring.yml": "28b784f88aec91954c3c1f12df9757fe49a9ac23",
    "droneci.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "dryrunsecurity.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "duffel.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "e2b.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "easypost.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "ebay.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "elastic.yml": "28b784f88aec91954c3c1f12df9757fe49a9ac23",
    "elevenlabs.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "eraserio.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "etsy.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "exaai.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "exoscale.yml": "4416290663a0b715e0d2cf0b8b684e33ec94eead",
    "falai.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "fastly.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "finicity.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "firebase.yml": "9f9346aa05ae5499191fea32ebd0423c67b6376b",
    "fixer.yml": "2a2b7b5a7e5a9c64f3263bd6852069c80b02e080",
    "flagsmith.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "fleetbase.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "flickr.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "flutterwave.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "foursquare.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "frameio.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "freemius.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "freshbooks.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "freshdesk.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "friendli.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "fullcontact.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "ghost.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "gitea.yml": "2a2b7b5a7e5a9c64f3263bd6852069c80b02e080",
    "gitter.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "gocardless.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "godaddy.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "gpp.yml": "41f1f46f62ad1b600159e79b9c7283241de06675",
    "greptile.yml": "3b866b3c50a1da2e98ffd9eb1dd1062261314f20",
    "hackclub.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "hashes.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "heartland.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "helpscout.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "hetzner.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "hexpm.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "html.yml": "1e07d5358eced5fd6dc701b625e5bc78ed23e48b",
    "huawei.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "ibm.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "infisical.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "infomaniak.yml": "1e07d5358eced5fd6dc701b625e5bc78ed23e48b",
    "infracost.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "infura.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "inngest.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "intra42.yml": "1879479e7abe3185b452f2c158474011339e448f",
    "ipstack.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "jamf.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "jdbc.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "jira.yml": "2a2b7b5a7e5a9c64f3263bd6852069c80b02e080",
    "keenio.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "kimi.yml": "4416290663a0b715e0d2cf0b8b684e33ec94eead",
    "klingai.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "kraken.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "kucoin.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "lacework.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "langchain.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "lark.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "launchdarkly.yml": "1879479e7abe3185b452f2c158474011339e448f",
    "lemonsqueezy.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "lichess.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "lighton.yml": "4416290663a0b715e0d2cf0b8b684e33ec94eead",
    "line.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "linear.yml": "1e07d5358eced5fd6dc701b625e5bc78ed23e48b",
    "liveblocks.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "livekit.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "localstack.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "loops.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "mailersend.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "mandrill.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "mappedin.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "mattermost.yml": "b3ce1555eae4d0cb883b093c28ea2d08c0a3637e",
    "maven.yml": "28b784f88aec91954c3c1f12df9757fe49a9ac23",
    "maxmind.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "mem0.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "messagebird.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "midtrans.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "minimax.yml": "2a2b7b5a7e5a9c64f3263bd6852069c80b02e080",
    "mintlify.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "miro.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "mistral.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "mixpanel.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "modal.yml": "701508d529c638e6e9374d47f08e7e53004ddcf6",
    "monday.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
    "moralis.yml": "f2a45c9e1c709008558765c88acfd3f8c0cb3245",
}

CHARS: dict[str, int] = {
    # The length of each file as the code index stored it (the copy was checked against it).
    "detectify.yml": 937, "deviantart.yml": 3347, "diffbot.yml": 903, "discord.yml": 3906,
    "disqus.yml": 2354, "dotnet-connstring.yml": 1600, "droneci.yml": 1405, "dryrunsecurity.yml": 1452,
    "duffel.yml": 901, "e2b.yml": 892, "easypost.yml": 902, "ebay.yml": 1514, "elastic.yml": 3838,
    "elevenlabs.yml": 1066, "eraserio.yml": 931, "etsy.yml": 1204, "exaai.yml": 1281, "exoscale.yml": 2043,
    "falai.yml": 1846, "fastly.yml": 841, "finicity.yml": 1865, "firebase.yml": 2467, "fixer.yml": 1027,
    "flagsmith.yml": 2291, "fleetbase.yml": 884, "flickr.yml": 2054, "flutterwave.yml": 1931,
    "foursquare.yml": 1769, "frameio.yml": 914, "freemius.yml": 634, "freshbooks.yml": 865,
    "freshdesk.yml": 1779, "friendli.yml": 1011, "fullcontact.yml": 1231, "ghost.yml": 1326,
    "gitea.yml": 1556, "gitter.yml": 873, "gocardless.yml": 1252, "godaddy.yml": 1172, "gpp.yml": 664,
    "greptile.yml": 1495, "hackclub.yml": 485, "hashes.yml": 6666, "heartland.yml": 990,
    "helpscout.yml": 2175, "hetzner.yml": 1225, "hexpm.yml": 825, "html.yml": 2745, "huawei.yml": 1559,
    "ibm.yml": 1118, "infisical.yml": 428, "infomaniak.yml": 990, "infracost.yml": 931, "infura.yml": 1363,
    "inngest.yml": 2760, "intra42.yml": 3999, "ipstack.yml": 849, "jamf.yml": 2915, "jdbc.yml": 970,
    "jira.yml": 4381, "keenio.yml": 1458, "kimi.yml": 1074, "klingai.yml": 2327, "kraken.yml": 1711,
    "kucoin.yml": 3176, "lacework.yml": 1334, "langchain.yml": 1584, "lark.yml": 5058,
    "launchdarkly.yml": 3212, "lemonsqueezy.yml": 1646, "lichess.yml": 880, "lighton.yml": 1037,
    "line.yml": 1353, "linear.yml": 2452, "liveblocks.yml": 981, "livekit.yml": 3624, "localstack.yml": 493,
    "loops.yml": 1102, "mailersend.yml": 826, "mandrill.yml": 1106, "mappedin.yml": 1060,
    "mattermost.yml": 2055, "maven.yml": 916, "maxmind.yml": 1550, "mem0.yml": 1043,
    "messagebird.yml": 2076, "midtrans.yml": 2086, "minimax.yml": 857, "mintlify.yml": 452,
    "miro.yml": 2886, "mistral.yml": 1420, "mixpanel.yml": 3865, "modal.yml": 2026, "monday.yml": 1257,
    "moralis.yml": 914,
}  # fmt: skip

NP_PROVIDER_LEFT_OUT: dict[str, str] = {
    # Files of the slice left out unread: Nosey Parker (the keys of `COMMITS` in make_heldout.py)
    # has a rule file for the same provider. file -> NP's file.
    "dependency_track.yml": "rules/dependency_track.yml",
    "dropbox.yml": "rules/dropbox.yml",
    "facebook.yml": "rules/facebook.yml",
    "figma.yml": "rules/figma.yml",
    "firecrawl.yml": "rules/firecrawl.yml",
    "generic.yml": "rules/generic.yml",
    "github.yml": "rules/github.yml",
    "gitlab.yml": "rules/gitlab.yml",
    "google.yml": "rules/google.yml",
    "gradle.yml": "rules/gradle.yml",
    "grafana.yml": "rules/grafana.yml",
    "groq.yml": "rules/groq.yml",
    "hashicorp.yml": "rules/hashicorp.yml",
    "heroku.yml": "rules/heroku.yml",
    "huggingface.yml": "rules/huggingface.yml",
    "jenkins.yml": "rules/jenkins.yml",
    "jina.yml": "rules/jina.yml",
    "jwt.yml": "rules/jwt.yml",
    "kagi.yml": "rules/kagi.yml",
    "kubernetes.yml": "rules/kubernetes.yml",
    "linkedin.yml": "rules/linkedin.yml",
    "mailchimp.yml": "rules/mailchimp.yml",
    "mailgun.yml": "rules/mailgun.yml",
    "mapbox.yml": "rules/mapbox.yml",
    "microsoft_teams.yml": "rules/microsoft_teams.yml",
    "docker.yml": "rules/dockerhub.yml (Docker)",
    "gcp.yml": "rules/google.yml (Google Cloud)",
    "jfrog.yml": "rules/artifactory.yml (JFrog Artifactory)",
    "microsoftteamswebhook.yml": "rules/microsoft_teams.yml (Microsoft Teams)",
    "mongodb.yml": "rules/mongo.yml (MongoDB)",
}

_TITUS = "derived in part from Titus (https://github.com/praetorian-inc/titus), Kingfisher's NOTICE"
_BETTERLEAKS = (
    "derived in part from Betterleaks (https://github.com/betterleaks/betterleaks), Kingfisher's NOTICE"
)
_GITLEAKS = "derived in part from Gitleaks (https://github.com/gitleaks/gitleaks), Kingfisher's NOTICE"
IMPORTED: dict[str, str] = {
    # Rule files in scope that Kingfisher's NOTICE (at dcb74f9027032ab377bf8227ff682ff378950578,
    # NOTICE.kingfisher beside this file) lists as derived in part from another scanner's rules.
    "deviantart.yml": _TITUS,
    "firebase.yml": _TITUS,
    "helpscout.yml": _TITUS,
    "html.yml": _TITUS,
    "jamf.yml": _TITUS,
    "keenio.yml": _TITUS,
    "exoscale.yml": _BETTERLEAKS,
    "greptile.yml": _BETTERLEAKS,
    "infomaniak.yml": _BETTERLEAKS,
    "kimi.yml": _BETTERLEAKS,
    "lighton.yml": _BETTERLEAKS,
    "linear.yml": _BETTERLEAKS,
    "messagebird.yml": _BETTERLEAKS,
    "etsy.yml": _GITLEAKS,
    "flutterwave.yml": _GITLEAKS,
    "freemius.yml": _GITLEAKS,
    "kraken.yml": _GITLEAKS,
    "kucoin.yml": _GITLEAKS,
}

SECRET_GROUP: dict[str, int] = {
    # Rules with several capture groups: the group that holds the secret.
    "kingfisher.discord.1": 3,  # webhook URL prefix, `app`, the webhook token
    "kingfisher.falai.1": 1,  # the key `id:secret` as Kingfisher's TOKEN, and its two halves named
    "kingfisher.klingai.1": 3,  # access key (AKID), the `secret key` label, the secret key
    "kingfisher.modal.1": 2,  # token id (TOKEN_ID), token secret
}

LEFT_OUT_RULES: dict[str, str] = {
    # Rules whose name says they capture no secret (Kingfisher uses most of them, `visible:
    # false`, to feed another rule's validation), and the two that capture a whole connection
    # string rather than the credential in it.
    "kingfisher.deviantart.2": "DeviantArt OAuth Client ID (an identifier)",
    "kingfisher.discord.3": "Discord Bot ID (an identifier)",
    "kingfisher.dotnet.connstring.2": ".NET Connection String with Integrated Security (a connection string without a password)",
    "kingfisher.ebay.1": "eBay Production Client ID (an identifier)",
    "kingfisher.ebay.2": "eBay Sandbox Client ID (an identifier)",
    "kingfisher.flutterwave.1": "Flutterwave Public Key (a public key)",
    "kingfisher.foursquare.1": "Foursquare Client ID (an identifier)",
    "kingfisher.freshdesk.1": "Freshdesk Domain (a host name)",
    "kingfisher.helpscout.1": "Help Scout Client ID (an identifier)",
    "kingfisher.huawei.1": "Huawei Open Platform Client ID (an identifier)",
    "kingfisher.intra42.1": "Intra42 Client ID (an identifier)",
    "kingfisher.intra42.3": "Intra42 Prefixed Client ID (an identifier)",
    "kingfisher.jamf.1": "JAMF Pro Server URL (a host name)",
    "kingfisher.jamf.2": "JAMF Pro API Client ID (an identifier)",
    "kingfisher.jdbc.1": "JDBC connection string (captures the whole URL, not the password in it; one example has none)",
    "kingfisher.jira.1": "Jira Domain (a host name)",
    "kingfisher.jira.4": "Jira Data Center Domain (a host name)",
    "kingfisher.keenio.2": "Keen.io Project ID (an identifier)",
    "kingfisher.lacework.1": "Lacework API Key ID (an identifier)",
    "kingfisher.launchdarkly.2": "LaunchDarkly Client-side ID (an identifier)",
    "kingfisher.livekit.3": "LiveKit URL (a URL)",
    "kingfisher.mattermost.1": "Mattermost URL (a URL)",
    "kingfisher.maxmind.2": "MaxMind Account ID (an identifier)",
    "kingfisher.messagebird.2": "MessageBird Client ID (an identifier)",
    "kingfisher.miro.3": "Miro Client ID (an identifier)",
    "kingfisher.mixpanel.4": "Mixpanel Service Account Username (a user name)",
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
