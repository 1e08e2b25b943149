"""gitleaks' vendored rules (issue 25).

Provenance, every running rule compiles, and they find the formats our catalogue lacks, under their
rule ids. Every value is made up at run time.
"""

from __future__ import annotations

import random
import tomllib
from collections import Counter

import re2  # type: ignore[import-untyped]

from graft_eval_pipeline.secrets import SECRET_KINDS
from graft_eval_pipeline.secrets.gitleaks import DATA, DROPPED, kind_of, rule_ids, without_groups
from graft_eval_pipeline.secrets.rules import secret_kinds

_RNG = random.Random(25)


def _chars(alphabet: str, n: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def test_the_vendored_rules_carry_their_licence_and_provenance_and_every_dropped_id_exists() -> None:
    assert "MIT" in (DATA.parent / "LICENSE").read_text(encoding="utf-8")
    assert "b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b" in (DATA.parent / "README.md").read_text(
        encoding="utf-8"
    )
    with DATA.open("rb") as handle:
        ids = {str(rule["id"]) for rule in tomllib.load(handle)["rules"]}
    assert set(DROPPED) <= ids and all(DROPPED.values())
    assert set(rule_ids()) == ids - set(DROPPED) and len(rule_ids()) >= 200
    assert {kind_of(rule_id) for rule_id in rule_ids()} <= set(SECRET_KINDS)


def test_without_groups_keeps_classes_and_escapes() -> None:
    assert without_groups(r"(a(?:b)[(]\(c)") == r"(?:a(?:b)[(]\(c)"
    assert without_groups(r"[^]()](x)") == r"[^]()](?:x)"
    for rule_id in ("sonar-api-token", "azure-ad-client-secret"):
        with DATA.open("rb") as handle:
            regex = next(str(r["regex"]) for r in tomllib.load(handle)["rules"] if r["id"] == rule_id)
        assert re2.compile(without_groups(regex)).groups == 0


def test_formats_our_catalogue_lacks_are_found_under_their_rule_ids() -> None:
    lower = "abcdefghijklmnopqrstuvwxyz0123456789"
    sonar = "squ_" + _chars(lower, 40)
    twitch = _chars(lower, 30)
    text = f'sonar.login = "{sonar}"\ntwitch_client_secret: {twitch}\n'
    counts = secret_kinds(text)
    assert counts["gl_sonar_api_token"] == 1, counts
    assert counts["gl_twitch_api_token"] + counts["assignment"] == 1, counts


def test_a_placeholder_by_shape_is_kept_and_a_finding_inside_ours_keeps_our_kind() -> None:
    assert secret_kinds('sonar.login = "squ_' + "x" * 40 + '"') == Counter()
    token = "ghp_" + _chars("ABCDEFabcdef0123456789", 36)
    assert set(secret_kinds(f"token = {token}")) == {"github_token"}
