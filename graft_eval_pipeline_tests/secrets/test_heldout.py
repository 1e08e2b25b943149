"""Recall and look-alike rate of the redactor on held-out corpora nobody here wrote (issue 25).

`data/heldout/` holds the examples and negative examples of Nosey Parker's default rules and the
rule snapshot tests of secretlint (see its README): texts other scanners' authors wrote to test
their own rules, which ours were never tuned on. Each is redacted exactly as the committed corpus
is (`redaction_corpus`). The targets are those of the committed corpus, recall >= 95 % and <= 5 %
look-alikes touched; where the measured figure misses them, the floor or ceiling below is the
measured figure, so the test catches a regression without the rules being tuned to this corpus
(which would end its use as a held-out set).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

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
HELDOUT_RECALL_FLOOR = 0.80
"""The target is 0.95 and is NOT met: measured 80.9 % (280 of 346), rounded down to the percent.

Of the 66 misses, 25 are values our policy keeps on purpose (placeholder words such as `secret`,
`password`, `admin`; one-letter runs `aaaa…`; `FakeValues…`; name-like or identifier-like values
such as `open_sesame`, `thisismypassword`), 20 are passwords in a syntax no rule of ours reads
(PsExec `-p`, PowerCLI `-Password`, "the password is '…'", `.netrc` over several lines, a value
two or more lines below its name), 15 are formats the catalogue lacks or has narrower
(Dependency-Track `odt_`, crates.io `cio`, legacy Teams webhooks on outlook.office.com, New Relic
`NRAA-` and EU licence keys, a 33-character Telegram body, bare Salesforce tokens, ThingsBoard
tokens in a URL path), and 6 are bare tokens with no secret-ish name (`CC_TEST_REPORTER_ID`, a
Jenkins crumb, `vault operator unseal …`). Raise the floor when the rules improve for their own
reasons; do not tune them to these examples."""

LOOKALIKE_TARGET = 0.05
HELDOUT_LOOKALIKE_CEILING = 0.18
"""The target is 0.05 and is NOT met: measured 17.8 % (13 of 73), rounded up to the percent.

The rate counts only the negatives that no other rule of NP's default set matches and that NP's
rule file does not itself mark as a secret its rule misses (`matched_by`, `np_note`): NP's
negatives mean "this rule must not fire", and many of the others are real secrets of another
shape. Of the 13, 3 are credentials NP's pattern cannot parse (a Postgres URL with an IPv6 host,
`password = super$ecret` unquoted, an Okta token followed by `--`) and 1 arguable (the JSON
`"password": "$super$ecret"`); 9 are code, paths and placeholders next to a secret word
(`this.addPassword = "#add-password"`, `[Shared Access key goes here]`, `a1b2c3d4…` keys)."""


SECRETLINT_RECALL_FLOOR = 0.90
"""The target is 0.95 and is NOT met: measured 90.9 % (40 of 44) once, before any rule change of
issue 25's second round, rounded down. This corpus stays held out: its misses are not looked at
while rules change (only its overall figures, at the end of a round)."""

SECRETLINT_LOOKALIKE_CEILING = 0.11
"""The target is 0.05 and is NOT met: measured 10.7 % (6 of 56) once, before any rule change,
rounded up. secretlint's `ok.*` snapshots label these lines "not a secret" for its rule."""


@dataclass(frozen=True)
class Heldout:
    """One held-out corpus: its files, where its entries say they come from, and its floor/ceiling."""

    name: str
    positives: str
    negatives: str
    source: str
    licence: str
    rule_prefix: str
    min_positives: int
    min_families: int
    min_negatives: int
    licence_file: str
    licence_start: str
    recall_floor: float
    lookalike_ceiling: float


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
        40,
        15,
        50,
        "LICENSE.secretlint",
        "Copyright (c) 2020 azu",
        SECRETLINT_RECALL_FLOOR,
        SECRETLINT_LOOKALIKE_CEILING,
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
    assert (HELDOUT / corpus.licence_file).read_text().lstrip().startswith(corpus.licence_start)


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
    print(
        f"{corpus.name}: held-out recall {recall:.1%} ({len(positives) - len(misses)}/{len(positives)}), "
        f"target "
        f"{RECALL_TARGET:.0%}; {len(by_family)} rule families, {len(below)} below 100 %: {below}"
    )
    assert recall >= corpus.recall_floor, f"held-out recall {recall:.1%}; missed:\n" + "\n".join(misses)


def test_heldout_lookalike_rate(corpus: Heldout) -> None:
    negatives = load(HELDOUT / corpus.negatives)
    lookalikes = [e for e in negatives if is_lookalike(e)]
    real = [e for e in negatives if not is_lookalike(e)]
    hit = touched_entries(lookalikes, "rule")
    rate = len(hit) / len(lookalikes)
    real_hit = sum(touched(e)[0] for e in real)
    print(
        f"{corpus.name}: held-out look-alikes redacted {rate:.1%} ({len(hit)}/{len(lookalikes)}), target "
        f"{LOOKALIKE_TARGET:.0%}; negatives that are secrets of another rule or that NP marks as "
        f"missed: {real_hit}/{len(real)} redacted; all negatives: "
        f"{(len(hit) + real_hit) / len(negatives):.1%}"
    )
    assert rate <= corpus.lookalike_ceiling, f"look-alike rate {rate:.1%}:\n" + "\n".join(hit)
