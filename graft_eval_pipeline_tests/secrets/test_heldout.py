"""Recall and look-alike rate of the redactor on corpora nobody here wrote (issue 25).

`data/heldout/` holds the examples and negative examples of Nosey Parker's default rules, the
rule snapshot tests of secretlint, the test fixtures of Skyscanner's whispers, the provider
plugins' unit tests of Yelp's detect-secrets, the tests of sirwart's ripsecrets and of
Microsoft's security-utilities, the rule examples and tests of American Express' EarlyBird, the
detector tests of ThoughtWorks' Talisman, the leaks-rule tests of Zup's Horusec, the secret
scanner's tests of Aqua Security's Trivy, the tests of the secrets query of Checkmarx' KICS and
those of the plugins IBM's fork of detect-secrets adds, gosec's G101 samples, bandit's
hardcoded-password example and Kingfisher's rule examples (see its README): texts other scanners'
authors wrote to test their own rules. Each is redacted exactly as the committed corpus is
(`redaction_corpus`; whispers' entries inside their whole fixture file). The targets are those of
the committed corpus, recall >= 95 % and <= 5 % look-alikes touched; where the measured figure
misses them, the floor or ceiling below is the measured figure, so the test catches a regression.
Held out now: Kingfisher's third slice (measured at four commits, none tuned to it; its misses are
not shown).
Nosey Parker's was held out until the second round, secretlint's until the third, whispers' until
the fourth, detect-secrets' until the fifth, ripsecrets' and security-utilities' until the sixth,
EarlyBird's until the seventh, Talisman's until the eighth, Horusec's until the ninth, Trivy's
until the tenth, KICS' until the eleventh, IBM's until the twelfth, gosec's and bandit's until the
thirteenth, Kingfisher's first slice until the fourteenth, its second slice until the fifteenth:
they are development corpora now
(whose misses may lead fixes), their figures no longer a measure of generalisation.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

from graft_eval_pipeline.secrets.values import placeholder_shape
from graft_eval_pipeline_tests.secrets.redaction_corpus import (
    is_lookalike,
    load,
    missed,
    secrets_of,
    touched,
    touched_entries,
)

HELDOUT = Path(__file__).parent / "data" / "heldout"

RECALL_TARGET = 0.95
HELDOUT_RECALL_FLOOR = 0.87
"""Nosey Parker's corpus is NO LONGER HELD OUT: a development corpus since issue 25's second round.

Measured 80.9 % (280 of 346) while held out, before any rule was changed for it; its misses by
cause (placeholder words, syntaxes no rule read, formats the catalogue lacked, bare tokens) then
led the second round's fixes (the prefixed-token rule after a diff line's `+`, quoted passphrases,
command-line and `.netrc` credentials, prose, new formats), each tested with values of ours:
87.3 % (302 of 346). In the third round three values of one repeated character (`aaaa…`, two AWS
and an Okta one) became stand-ins by shape and left the corpus as its builder leaves such values
out (346 -> 343): 87.8 % (301 of 343), rounded down. In the fifth round three more stand-ins left it
(`aaaa…-`, `aaaa…NRAL`, `00aaaa…`: one unit repeated, `values.repeated_unit`; 343 -> 340): 88.5 %
(301 of 340); crates.io's `cio` tokens then became a catalogue format: 88.8 % (302 of 340). The
misses left (38 of the 44 then): values our policy keeps on purpose
(placeholder words, one-letter runs, `FakeValues…`, references such as `-p $Password`), bare
tokens with no secret-ish name, formats the catalogue lacks (bare Salesforce,
ThingsBoard URL paths), a value several lines below its name. The held-out figures are ripsecrets' and
security-utilities'."""

LOOKALIKE_TARGET = 0.05
HELDOUT_LOOKALIKE_CEILING = 0.07
"""Nosey Parker's (a development corpus now): the target is 0.05 and is NOT met. 17.8 % (13 of 73)
while held out; 11.0 % (8 of 73) after the second round; 6.8 % (5 of 73) after the eighth, rounded
up. Counted only over the negatives no other NP default rule matches and NP's rule file does not
mark as a secret its rule misses (`matched_by`, `np_note`). Of the 5: 3 credentials NP's pattern
cannot parse (a Postgres URL with an IPv6 host, `password = super$ecret`, an Okta token followed by
`--`), 1 arguable (`"password": "$super$ecret"`), and a random-looking bare token (a legacy
Dependency-Track key's shape). The eighth round left an HTML id of words after `access_key`, a
path after a `…-password` key and a Rails route."""

SECRETLINT_RECALL_FLOOR = 0.95
"""secretlint's corpus is NO LONGER HELD OUT: a development corpus since issue 25's third round.
While held out, measured once before any rule change of the second round: 90.9 % (40 of 44);
after the round (its misses not looked at): 95.5 % (42 of 44). By commit, the overall figures
only: both new hits came with the prefixed-token rule's fix for a token right after a diff line's
`+` (the corpus, like the committed one, is redacted as added patch lines). In the third round its
four Stripe positives of one repeated character (`sk_live_AAAA…`) became stand-ins by shape and
left the corpus as its builder leaves such values out (44 -> 40): 95.0 % (38 of 40), rounded
down; the 2 misses: upper-case hex where Databricks' format has lower-case, a token glued to a
word."""

SECRETLINT_LOOKALIKE_CEILING = 0.08
"""The target is 0.05 and is NOT met: 10.7 % (6 of 56) measured once before any rule change, 28.6 %
(16 of 56) after the second round (its misses not looked at), **7.1 % (4 of 56)** after the third
round, whose fixes these look-alikes led (rounded up): runs typed in order are no random body
(`aAbBcC…`, `aBcDeF…123…`), a catalogue prefix glued to a word is left to the catalogue's own
boundary (`xhvs.…`, `wordgsk_…`), a last part of one repeated character and `REPLACE_WITH_…` are
stand-ins by shape, a URL password that is one is kept, Cloudflare's `cfk_`/`cfut_`/`cfat_`
format. The 4 left, kept on purpose: a random 36-character token after an unknown prefix (`gXX_…`)
and a random Vault-like token after a wrong one (`hvx.…`), which the rule for any provider's
tokens is for; a random value under `AWS_SECRET_ACCESS_KEY` (encrypted, by secretlint's note);
`mongodb://username:password@…`, where the committed corpus (detect-secrets' test data) has
`username:password@` as a secret."""

WHISPERS_RECALL_FLOOR = 0.85
"""whispers' corpus is NO LONGER HELD OUT: a development corpus since issue 25's fourth round.
The target is 0.95 and is NOT met: 50.3 % (91 of 181), measured once at 4f6534c before any rule
change of issue 25's third round (line alone, without its file: 47.5 %), unchanged after it;
detect-secrets 31.5 %. 80.7 % after the fourth round, whose fixes its misses led; **85.6 %** (155
of 181) after the fifth (the catalogue's providers as words before `key`: `slackKey`,
`GITLAB_KEY`, `GITHUBKEY`). Rounded down."""

WHISPERS_LOOKALIKE_CEILING = 0.05
"""The target, met: 2.2 % (5 of 232) measured once at 4f6534c before any rule change of the third
round; detect-secrets 4.7 %."""

DETECTSECRETS_RECALL_FLOOR = 0.95
"""detect-secrets' corpus is NO LONGER HELD OUT: a development corpus since issue 25's fifth round.
While held out: 83.2 % (94 of 113), measured once before any rule change of the fourth round, and
not looked at again until the fifth. Its misses then led the fifth round's fixes: 51 of its
positives (SoftLayer's tests) hold `abcd1234` repeated, a stand-in by shape since that round
(`values.repeated_unit`), and left the corpus as its builder leaves such values out (113 -> 62);
Aiven's `AVNS_` format; `iam`, `cloud` and the catalogue's providers as words before `key`. Now
96.8 % (60 of 62), rounded down to the target. The 2 misses: a Vault token glued to a word
(`HideMyTokenhvs.…`, left to the catalogue's boundary), a legacy `s.` token longer than Vault's 24
characters. detect-secrets scan on its own plugins' tests: 86.7 % of the 113."""

DETECTSECRETS_LOOKALIKE_CEILING = 0.14
"""The target is 0.05 and is NOT met: 37.8 % (34 of 90) while held out; 14.4 % (13 of 90) after
the fifth round: 21 IBM negatives hold the same `abcd1234` stand-in, a camel-case name
(`MyClass.atLeast24CharactersField`) is no prefixed token, Stripe's publishable keys are public;
**13.3 % (12 of 90)** after the sixth (rounded up), where a JWT's header must decode to a JOSE
header (`eyJhbasdGci…`, letters typed into one, is no token). The 12 left, kept on purpose: each
is another plugin's negative that our policy counts as a secret (a UUID or base64 under npm's
`_authToken` or `_auth`, secret-named random values with a suffix, a JWT whose header is cut
short, provider tokens of a wrong length, a random token after an unknown prefix)."""


RIPSECRETS_RECALL_FLOOR = 0.95
"""ripsecrets' corpus is NO LONGER HELD OUT: a development corpus since issue 25's sixth round.
While held out: 94.9 % (37 of 39) before any rule change of the fifth round (23df165) and after
it. Its misses then led the sixth round's fixes (a JWE's five parts, Maven's encrypted master
password in braces): 100 % (39 of 39)."""

RIPSECRETS_LOOKALIKE_CEILING = 0.05
"""The target, met: 0 of 6 (1 of 6, 16.7 %, before the fifth round). A negative that another
scanner's rule matches (`matched_by`) is not a look-alike."""

SECURITY_UTILITIES_RECALL_FLOOR = 0.95
"""security-utilities' corpus is NO LONGER HELD OUT: a development corpus since issue 25's sixth
round. While held out: 61.5 % (8 of 13) before any rule change of the fifth round (23df165) and
after it. Its misses then led the sixth round's fixes (JOSE headers with a space or a newline after
the brace, any value after a named `Authorization` scheme, URL-encoded spaces there, a URL password
with `'`): 100 % (13 of 13)."""

SECURITY_UTILITIES_LOOKALIKE_CEILING = 0.05
"""The target, met: 0 of 7 (2 of 7, 28.6 %, before the fifth round)."""


EARLYBIRD_RECALL_FLOOR = 0.30
"""EarlyBird's corpus is NO LONGER HELD OUT: a development corpus since issue 25's seventh round.
The target is 0.95 and is NOT met. While held out: 29.3 % (24 of 82), measured once at cb5ca61
before any rule change of the sixth round, and the same after it. EarlyBird's authors label many
stand-ins as findings, which our policy keeps on purpose. Its misses then led the seventh round's
fixes (a key block whose body is no base64 between its BEGIN and END lines, a type annotation
ending in `!`): **30.5 %** (25 of 82), rounded down. The 57 misses: 21 values of the word list of
`is_placeholder` (`foobar`, `test`, …), 14 `do_not_use_this_in_production` (a name, not a value),
6 shorter than `MIN_PASSWORD_LENGTH`, 9 bare values with no name beside them (default passwords
such as `letmein`, character-class templates such as `aaaAaA0A0a00…`, a Google token without its
`ya29.` dot, a lone quoted random string), 7 others (names as values such as `valid_password`,
`propertyColonDelimitedPassword`, a name that starts with its keyword, `password_couchbase`: tried
as a rule, 11 more rewritten real-diff lines and 4 of our look-alikes)."""

EARLYBIRD_LOOKALIKE_CEILING = 0.07
"""The target is 0.05 and is NOT met: 18.3 % (11 of 60) while held out; **6.7 % (4 of 60)** after the
seventh round (rounded up): a type annotation then `nil`, an `@name` SQL parameter, a label in a
locale file (`Lösenord`, パスワード in HTML entities) are no values. The 4 left, kept on purpose:
an expired JWT (expiry is no reason to keep a token's claims), five JOSE headers joined by dots,
and two passwords with symbols and non-ASCII letters (`VeryStrong$$你好`), which EarlyBird skips
for their script alone."""


TALISMAN_RECALL_FLOOR = 0.05
"""Talisman's corpus is NO LONGER HELD OUT: a development corpus since issue 25's eighth round. The
target is 0.95 and is NOT met: 5.6 % (4 of 71) while held out, measured once at 13173ed, before any
rule change of the seventh round, and the same after it and after the eighth. Rounded down.
Talisman's tests flag stand-ins: its 71 positives hold 11 distinct values, and 56 come from one
loop of seven keywords in eight syntaxes with the values `UnsafeString` and `randomStringGoesHere`,
names our policy keeps on purpose (a redacted name would hide what a line does; a kept random value
would be a leak)."""

TALISMAN_LOOKALIKE_CEILING = 0.05
"""The target, met: 0 of 13, at 13173ed and after the seventh and eighth rounds."""

HORUSEC_RECALL_FLOOR = 0.82
"""Horusec's corpus is NO LONGER HELD OUT: a development corpus since issue 25's ninth round. The
target is 0.95 and is NOT met: 79.3 % (23 of 29) while held out, measured once at c675cda, the
eighth round's rule changes included (they were made before the corpus was built, led by the real
diffs and Nosey Parker's corpus), and the same at b7cb0a2 before them. Rounded down. 29 positives
of 28 rules (two of one rule): one entry is 3.4 points."""

HORUSEC_LOOKALIKE_CEILING = 0.05
"""The target, met: 0 of 28 (the safe sample of each rule, whole), at c675cda and b7cb0a2."""

TRIVY_RECALL_FLOOR = 0.87
"""Trivy's corpus is NO LONGER HELD OUT: a development corpus since issue 25's tenth round, whose
fixes its misses led. The target is 0.95 and is NOT met: 72.5 % (29 of 40) while held out,
measured once at 93c212e (and the same at b7cb0a2); **85.0 % (34 of 40)** after the tenth round:
Microsoft's common annotated keys (2), an OpenAI key with a service account's name, a Kubernetes
Secret's Docker config (2). The 6 left, by policy: a GitHub token typed in order
(`1234567890abcdef…`), a realtime key that repeats one unit, Symfony's published default secret,
a GitHub App token of the words `dummy` and `notreal`, and two camel-case names in Maven's
`<password>`/`<passphrase>` elements (`plainSecret`), which read as names."""

TRIVY_LOOKALIKE_CEILING = 0.14
"""The target is 0.05 and is NOT met: 13.0 % (3 of 23), at 93c212e and b7cb0a2, rounded up, the
same after the tenth round. Its negatives are the lines of Trivy's test files that no rule of
Trivy reports, with a token-like run (its README): "Trivy's rule does not fire", as Nosey Parker's
negatives are. The 3: `sk-ant-` and `sk-proj-` tokens that break OpenAI's format (Anthropic's and
OpenAI's own formats of ours take them) and a Maven encrypted passphrase (redacted on purpose:
it decrypts with the master password)."""

KICS_RECALL_FLOOR = 0.76
"""KICS' corpus is NO LONGER HELD OUT: a development corpus since issue 25's eleventh round. The
target is 0.95 and is NOT met: 74.6 % (44 of 59) while held out, measured once at 1b8ee6b, before
any rule change of the tenth round, and the same at 2cd224a after them and after the eleventh.
Rounded down. Its misses, by policy: short passwords (`root`, `passx`, `artemis`, `testpwd`,
`abcdefg`, `null`), Google OAuth client ids (public), AWS's documented example key altered, a
value of stand-in words (`exposed_password`) and an odd test value under `token_key`."""

KICS_LOOKALIKE_CEILING = 0.04
"""The target, 0.05, is met since the eleventh round: 7.3 % (10 of 137) while held out, at 1b8ee6b
and 2cd224a; **3.6 % (5 of 137)** after the round (CloudFormation's dynamic references
`{{resolve:…}}` are references, a key path inside one no assignment), rounded up. Its negatives
are lines of the query's negative test files with a token-like run (its README). The 5 left: three
MySQL password hashes (`*6BB4…`: redacted on purpose, a hash to crack offline costs nothing
redacted), an EFS creation token of words and a lifecycle action token that is a UUID (under a
token's name a UUID may be one: npm's legacy tokens are)."""

IBM_RECALL_FLOOR = 0.72
"""IBM's corpus is NO LONGER HELD OUT: a development corpus since issue 25's twelfth round. The
target is 0.95 and is NOT met: 60.5 % (26 of 43) while held out, measured once at 4407904, and the
same after the eleventh and twelfth rounds; 67.4 % (29 of 43) after the thirteenth (`pw`, `cred`,
one-word passwords), 72.1 % (31 of 43) after the fourteenth (`pat`, a `_key`). Rounded down.
Three plugins' tests (Box, Db2, GitHub Enterprise), 14 distinct secrets. Its misses, by policy: a
GitHub Enterprise stand-in typed in order (`abcdef0123456789…`, in 11 entries), short or stand-in
Db2 passwords (`secret`, `pass`), a hex key after a space (`github-key 2764…`) and a Basic
credential without a colon."""

IBM_LOOKALIKE_CEILING = 0.62
"""The target is 0.05 and is NOT met: 38.5 % (5 of 13) at 4407904 and after; 53.8 % (7 of 13)
after the fourteenth round, whose `<provider>_key` rule takes two more (`GIT-KEY: <39 hex digits>`,
`git_key=<41>`); 61.5 % (8 of 13) after the fifteenth, whose provider's-scheme rule takes
`Authorization: llama <base64>`. IBM's negatives are keys of the wrong length for its plugins (`…notakey…`, a
41-digit hex), which our generic rules take for values under a key's name, on purpose: a random
value under a key's name is redacted whatever its length."""

GOSEC_RECALL_FLOOR = 0.90
"""gosec's corpus is NO LONGER HELD OUT: a development corpus since issue 25's thirteenth round,
which its misses led. The target is 0.95 and is NOT met: 70.0 % (14 of 20) while held out,
measured once at 29a3ce6; 90.0 % (18 of 20) after the round (a literal compared with a secret's
name, `"…" == password`; `pw` and `cred` as names of a password). Left: a value under
`ATNStateTokenStart` (no secret's name ends it) and one after `Bearer:` with a colon. Small: G101's samples,
7 distinct secrets (one 40-digit hex value in 12 entries). detect-secrets 1.5.0: 95.0 %."""

GOSEC_LOOKALIKE_CEILING = LOOKALIKE_TARGET
"""The target, 0.05, is met: 0 of 13 at 29a3ce6 (detect-secrets 1.5.0: 53.8 %). Three of the 13
are `password := "secret"` lines that gosec's entropy check leaves (bandit's corpus counts such a
line a secret)."""

BANDIT_RECALL_FLOOR = 0.54
"""bandit's corpus is NO LONGER HELD OUT: a development corpus since issue 25's thirteenth round,
which its misses led. The target is 0.95 and is NOT met: 9.1 % (1 of 11) while held out, measured
once at 29a3ce6; 54.5 % (6 of 11) after the round (a quoted word of 4 to 7 letters or digits under a
password's name, `values.password_word`). Left, by policy: stand-in words (`secret`, `Admin`,
`root`), a name of words (`emails_secret`) and a value whose name does not end in a keyword
(`my_secret_password_for_email`). Eleven lines of bandit's hardcoded-password example, 8
distinct passwords, most short words (`blerg`, `root`, `1234`). detect-secrets 1.5.0: 90.9 %. No
negatives (bandit's example has no unlabelled line with a value)."""

KINGFISHER_RECALL_FLOOR = 0.85
"""Kingfisher's first slice is NO LONGER HELD OUT: a development corpus since issue 25's fourteenth
round, which its misses led. The target is 0.95 and is NOT met: 74.9 % (128 of 171) while held
out, measured once at 29a3ce6 and the same at 29eb02d; 86.0 % (147 of 171) after the round.
Rounded down. Left: bare provider names (`deepgram = <hex>`), UUIDs under a key's name, stand-ins
typed in order (`Aa1Bb2…`), Ansible Vault ciphertext (made to be committed) and short hex keys.
The rule examples of 76 of Kingfisher's rule files (the first 100 the index lists, less Nosey
Parker's providers): 70 rule families, 166 distinct secrets. detect-secrets 1.5.0: 59.6 %."""

KINGFISHER2_RECALL_FLOOR = 0.93
"""Kingfisher's second slice is NO LONGER HELD OUT: a development corpus since issue 25's fifteenth
round, which its misses led. The target is 0.95 and is NOT met: 76.5 % (166 of 217) measured once
at 699076d, before the fourteenth round, and 81.6 % (177 of 217) after it, while held out; 93.5 %
(203 of 217) after the fifteenth (password hashes, pre-filled password fields, a provider's own
`Authorization` scheme, an id and its secret under a key's name). Rounded down. Left: stand-ins
typed in order, a token in a URL's path, multi-word names with spaces (`env key`), short keys.
The rule examples of 95 rule files from `deno.yml` to `m…` (less Nosey Parker's providers): 91
rule families, 202 distinct secrets. detect-secrets 1.5.0: 56.2 %."""

KINGFISHER3_RECALL_FLOOR = 0.89
"""Kingfisher's third slice is HELD OUT (since issue 25's fifteenth round): the target is 0.95 and is
NOT met, 87.8 % (144 of 164) at 29a3ce6 and 699076d, 89.6 % (147 of 164) at 34032ec and 2fc6a2f
(after the fourteenth and fifteenth rounds, led by other corpora). Rounded down. The rule examples
of 62 rule files from `nango` to `statsig` (less Nosey Parker's providers): 58 rule families, 154
distinct secrets. detect-secrets 1.5.0: 39.6 %."""


@dataclass(frozen=True)
class Heldout:
    """One held-out corpus: its files, where its entries say they come from, and its floor/ceiling."""

    name: str
    positives: str
    negatives: str
    source: str | tuple[str, ...]
    """What every entry's `source` starts with (one of them)."""
    licence: str
    rule_prefix: str
    min_positives: int
    min_families: int
    min_negatives: int
    licence_file: str
    licence_start: str
    recall_floor: float
    lookalike_ceiling: float
    held_out: bool = False
    """Held out now: the tests print its figures only, never its misses or their rule families, and
    fail with counts only (the flag comes off when the corpus becomes a development one)."""


CORPORA = (
    Heldout(
        "noseyparker",
        "noseyparker.jsonl",
        "noseyparker_negative.jsonl",
        "praetorian-inc/noseyparker crates/noseyparker/",
        "Apache-2.0",
        "np.",
        300,
        80,
        100,
        "LICENSE",
        "Apache License",
        HELDOUT_RECALL_FLOOR,
        HELDOUT_LOOKALIKE_CEILING,
    ),
    Heldout(
        "secretlint",
        "secretlint.jsonl",
        "secretlint_negative.jsonl",
        "secretlint/secretlint packages/@secretlint/secretlint-rule-",
        "MIT",
        "secretlint.",
        38,
        15,
        50,
        "LICENSE.secretlint",
        "Copyright (c) 2020 azu",
        SECRETLINT_RECALL_FLOOR,
        SECRETLINT_LOOKALIKE_CEILING,
    ),
    Heldout(
        "whispers",
        "whispers.jsonl",
        "whispers_negative.jsonl",
        "Skyscanner/whispers tests/fixtures/",
        "Apache-2.0",
        "whispers.",
        170,
        35,
        200,
        "LICENSE.whispers",
        "Apache License",
        WHISPERS_RECALL_FLOOR,
        WHISPERS_LOOKALIKE_CEILING,
    ),
    Heldout(
        "detectsecrets",
        "detectsecrets.jsonl",
        "detectsecrets_negative.jsonl",
        "Yelp/detect-secrets tests/plugins/",
        "Apache-2.0",
        "ds.",
        60,
        15,
        85,
        "LICENSE.detect-secrets",
        "Apache License",
        DETECTSECRETS_RECALL_FLOOR,
        DETECTSECRETS_LOOKALIKE_CEILING,
    ),
    Heldout(
        "ripsecrets",
        "ripsecrets.jsonl",
        "ripsecrets_negative.jsonl",
        "sirwart/ripsecrets ",
        "MIT",
        "rs.",
        39,
        20,
        7,
        "LICENSE.ripsecrets",
        "Copyright 2022 Brian Smith",
        RIPSECRETS_RECALL_FLOOR,
        RIPSECRETS_LOOKALIKE_CEILING,
    ),
    Heldout(
        "security_utilities",
        "security_utilities.jsonl",
        "security_utilities_negative.jsonl",
        "microsoft/security-utilities src/",
        "MIT",
        "msu.",
        13,
        6,
        7,
        "LICENSE.security-utilities",
        "MIT License",
        SECURITY_UTILITIES_RECALL_FLOOR,
        SECURITY_UTILITIES_LOOKALIKE_CEILING,
    ),
    Heldout(
        "earlybird",
        "earlybird.jsonl",
        "earlybird_negative.jsonl",
        "americanexpress/earlybird ",
        "Apache-2.0",
        "eb.",
        82,
        50,
        60,
        "LICENSE.earlybird",
        "Apache License",
        EARLYBIRD_RECALL_FLOOR,
        EARLYBIRD_LOOKALIKE_CEILING,
    ),
    Heldout(
        "talisman",
        "talisman.jsonl",
        "talisman_negative.jsonl",
        "thoughtworks/talisman ",
        "MIT",
        "tl.",
        71,
        5,
        13,
        "LICENSE.talisman",
        "The MIT License (MIT)",
        TALISMAN_RECALL_FLOOR,
        TALISMAN_LOOKALIKE_CEILING,
    ),
    Heldout(
        "horusec",
        "horusec.jsonl",
        "horusec_negative.jsonl",
        "ZupIT/horusec ",
        "Apache-2.0",
        "hs.",
        29,
        28,
        28,
        "LICENSE.horusec",
        "Apache License",
        HORUSEC_RECALL_FLOOR,
        HORUSEC_LOOKALIKE_CEILING,
    ),
    Heldout(
        "trivy",
        "trivy.jsonl",
        "trivy_negative.jsonl",
        "aquasecurity/trivy ",
        "Apache-2.0",
        "tv.",
        40,
        29,
        23,
        "LICENSE.trivy",
        "Apache License",
        TRIVY_RECALL_FLOOR,
        TRIVY_LOOKALIKE_CEILING,
    ),
    Heldout(
        "kics",
        "kics.jsonl",
        "kics_negative.jsonl",
        "Checkmarx/kics ",
        "Apache-2.0",
        "kc.",
        59,
        32,
        137,
        "LICENSE.kics",
        "It is clarified",
        KICS_RECALL_FLOOR,
        KICS_LOOKALIKE_CEILING,
    ),
    Heldout(
        "ibm_detectsecrets",
        "ibm_detectsecrets.jsonl",
        "ibm_detectsecrets_negative.jsonl",
        # The Db2 plugin's test is stored in the index under Yelp's repository (the fork's history).
        ("IBM/detect-secrets ", "Yelp/detect-secrets tests/plugins/db2_test.py@"),
        "Apache-2.0",
        "ibm.",
        43,
        3,
        13,
        "LICENSE.ibm-detect-secrets",
        "Apache License",
        IBM_RECALL_FLOOR,
        IBM_LOOKALIKE_CEILING,
    ),
    Heldout(
        "gosec",
        "gosec.jsonl",
        "gosec_negative.jsonl",
        "securego/gosec testutils/g101_samples.go@",
        "Apache-2.0",
        "gosec.",
        20,
        2,
        13,
        "LICENSE.gosec",
        "Apache License",
        GOSEC_RECALL_FLOOR,
        GOSEC_LOOKALIKE_CEILING,
    ),
    Heldout(
        "bandit",
        "bandit.jsonl",
        "bandit_negative.jsonl",
        "PyCQA/bandit examples/hardcoded-passwords.py@",
        "Apache-2.0",
        "bandit.",
        11,
        3,
        0,
        "LICENSE.bandit",
        "Apache License",
        BANDIT_RECALL_FLOOR,
        LOOKALIKE_TARGET,
    ),
    Heldout(
        "kingfisher",
        "kingfisher.jsonl",
        "kingfisher_negative.jsonl",
        "mongodb/kingfisher crates/kingfisher-rules/data/rules/",
        "Apache-2.0",
        "kingfisher.",
        171,
        70,
        5,
        "LICENSE.kingfisher",
        "Apache License",
        KINGFISHER_RECALL_FLOOR,
        LOOKALIKE_TARGET,
    ),
    Heldout(
        "kingfisher2",
        "kingfisher2.jsonl",
        "kingfisher2_negative.jsonl",
        "mongodb/kingfisher crates/kingfisher-rules/data/rules/",
        "Apache-2.0",
        "kingfisher.",
        217,
        91,
        7,
        "LICENSE.kingfisher",
        "Apache License",
        KINGFISHER2_RECALL_FLOOR,
        LOOKALIKE_TARGET,
    ),
    Heldout(
        "kingfisher3",
        "kingfisher3.jsonl",
        "kingfisher3_negative.jsonl",
        "mongodb/kingfisher crates/kingfisher-rules/data/rules/",
        "Apache-2.0",
        "kingfisher.",
        164,
        58,
        3,
        "LICENSE.kingfisher",
        "Apache License",
        KINGFISHER3_RECALL_FLOOR,
        LOOKALIKE_TARGET,
        held_out=True,
    ),
)


def _family(rule: object) -> str:
    """`np.aws` for `np.aws.6`: the rules of one provider or kind."""
    return str(rule).rsplit(".", 1)[0]


@pytest.fixture(scope="module", params=CORPORA, ids=[c.name for c in CORPORA])
def corpus(request: pytest.FixtureRequest) -> Heldout:
    held: Heldout = request.param
    return held


def test_heldout_entries_quote_their_source(corpus: Heldout) -> None:
    positives, negatives = load(HELDOUT / corpus.positives), load(HELDOUT / corpus.negatives)
    assert len(positives) >= corpus.min_positives
    assert len({_family(e["rule"]) for e in positives}) >= corpus.min_families
    assert len(negatives) >= corpus.min_negatives
    for entry in positives + negatives:
        assert str(entry["source"]).startswith(corpus.source)
        assert entry["licence"] == corpus.licence
        assert str(entry["rule"]).startswith(corpus.rule_prefix)
    assert all(secret in str(e["line"]) for e in positives for secret in secrets_of(e))
    for entry in positives + negatives:
        if "hunk" in entry:  # the entry's line, where `at` says, in its whole file
            lines = str(entry["hunk"]).split("\n")
            at, count = int(str(entry["at"])), str(entry["line"]).count("\n") + 1
            assert "\n".join(lines[at : at + count]) == entry["line"]
    assert (HELDOUT / corpus.licence_file).read_text().lstrip().startswith(corpus.licence_start)


def test_no_heldout_secret_is_a_stand_in_by_shape(corpus: Heldout) -> None:
    """The builders leave out secrets our policy keeps by shape (`placeholder_shape`): none is left."""
    positives = load(HELDOUT / corpus.positives)
    assert not [s for e in positives for s in secrets_of(e) if placeholder_shape(s)]


def test_heldout_recall(corpus: Heldout) -> None:
    positives = load(HELDOUT / corpus.positives)
    by_family: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses = []
    for entry in positives:
        left = missed(entry)
        family = by_family[_family(entry["rule"])]
        family[1] += 1
        if left:
            misses.append(f"{entry['rule']}: {left[0][:12]}… in {str(entry['line'])[:60]!r}")
        else:
            family[0] += 1
    recall = 1 - len(misses) / len(positives)
    below = {name: f"{hit}/{n}" for name, (hit, n) in sorted(by_family.items()) if hit < n}
    figure = (
        f"recall {recall:.1%} ({len(positives) - len(misses)}/{len(positives)}), target {RECALL_TARGET:.0%}"
    )
    if corpus.held_out:
        print(f"{corpus.name} (held out): {figure}")
        assert recall >= corpus.recall_floor, f"held-out {figure} (its misses are not shown)"
        return
    print(f"{corpus.name}: {figure}; {len(by_family)} rule families, {len(below)} below 100 %: {below}")
    assert recall >= corpus.recall_floor, f"{figure}; missed:\n" + "\n".join(misses)


def test_heldout_lookalike_rate(corpus: Heldout) -> None:
    negatives = load(HELDOUT / corpus.negatives)
    lookalikes = [e for e in negatives if is_lookalike(e)]
    if not lookalikes:
        pytest.skip(f"{corpus.name} has no look-alikes (its source labels no line as one)")
    real = [e for e in negatives if not is_lookalike(e)]
    hit = touched_entries(lookalikes, "rule")
    rate = len(hit) / len(lookalikes)
    real_hit = sum(touched(e)[0] for e in real)
    print(
        f"{corpus.name}: look-alikes redacted {rate:.1%} ({len(hit)}/{len(lookalikes)}), target "
        f"{LOOKALIKE_TARGET:.0%}; negatives that are secrets of another rule or that NP marks as "
        f"missed: {real_hit}/{len(real)} redacted; all negatives: "
        f"{(len(hit) + real_hit) / len(negatives):.1%}"
    )
    shown = "(not shown: held out)" if corpus.held_out else "\n".join(hit)
    assert rate <= corpus.lookalike_ceiling, f"look-alike rate {rate:.1%}: {shown}"
