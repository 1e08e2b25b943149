"""The generic rules' value checks (`entropy.py`) decide in time linear in the value.

A token with a run of 40 capitals once held an export for minutes (the words check, now in
`values.py` and tested in test_values.py); here the whole token check on such a run. And the
prefixed-token rule skips the checks of a token a rule that names the format has found.
Every value here is made up.
"""

from __future__ import annotations

import pytest

from graft_eval_pipeline.secrets import entropy
from graft_eval_pipeline.secrets.entropy import is_high_entropy_token
from graft_eval_pipeline.secrets.rules import secret_kinds_in


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
