"""The generic rules' value checks (`entropy.py`) decide in time linear in the value.

A token's parts were judged "words run together" by `(?:[A-Z]?[a-z]+|[A-Z]{2,})+`, which tries
every way of cutting a run of capitals into words before it fails at the next character: 2^n
steps for a run of n, so one made-up token with 40 capitals held an export for minutes. The
check is now a direct test of the same strings; the old pattern is the oracle on short parts. And
the prefixed-token rule skips the checks of a token a rule that names the format has found.
Every value here is made up.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graft_eval_pipeline.secrets import entropy
from graft_eval_pipeline.secrets.entropy import is_high_entropy_token, words_run_together
from graft_eval_pipeline.secrets.rules import secret_kinds_in

_BACKTRACKING_WORDS = re.compile(r"(?:[A-Z]?[a-z]+|[A-Z]{2,})+", re.ASCII)


@given(st.text(alphabet="aAbBzZ1_é", max_size=12))
def test_words_run_together_accepts_what_the_old_pattern_matched_whole(part: str) -> None:
    assert words_run_together(part) == (_BACKTRACKING_WORDS.fullmatch(part) is not None)


def test_words_run_together_on_camel_case_names_and_random_parts() -> None:
    assert words_run_together("hasOwnProperty")
    assert words_run_together("RawURLEncoding")
    assert words_run_together("URL")
    assert not words_run_together("fooB")
    assert not words_run_together("B")
    assert not words_run_together("")


def test_a_long_run_of_capitals_in_a_token_is_judged_in_one_look() -> None:
    # 5,000 capitals, then a random tail: the old pattern would take about 2^5000 steps here.
    value = "Q" * 5_000 + "7hK2pX9mV4nB8cL3zT6wR1yF5"
    assert is_high_entropy_token(value) is False  # one letter repeated: no random token
    token = "Zq" + "ABCDEFGHJKLMNPQRSTUVWXYZ" * 2 + "7hK2pX9mV4nB8cL3zT6wR1yF5jD0sG"
    kinds = secret_kinds_in([(f'+api_key = "{token}"\n+x = ab_{token}\n', True)])
    assert kinds["assignment"] == 1


def test_a_prefixed_anchor_inside_a_known_format_is_passed_over_unchecked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The catalogue's span would win over the prefixed-token rule's, so its checks are not run.
    checked: list[int] = []
    real = entropy.prefixed_token_end

    def counting(text: str, start: int, hi: int) -> int | None:
        checked.append(start)
        return real(text, start, hi)

    monkeypatch.setattr(entropy, "prefixed_token_end", counting)
    github = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4xY7zA0cD2fG4hJ"[:36]
    assert secret_kinds_in([(f'token = "{github}"', False)]) == {"github_token": 1}
    assert checked == []
    lone = "zq_" + "Xk9LmN2pQ7rS4tV8wY3zB6cD1fG5hJ0"
    assert secret_kinds_in([(f"see {lone} here", False)]) == {"prefixed_token": 1}
    assert checked == [4]
