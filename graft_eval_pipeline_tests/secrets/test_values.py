"""The value checks (`values.py`): what a secret-named assignment's value must look like.

A token's parts were judged "words run together" by `(?:[A-Z]?[a-z]+|[A-Z]{2,})+`, which tries
every way of cutting a run of capitals into words before it fails at the next character: 2^n
steps for a run of n. The check is now a direct test of the same strings; the old pattern is the
oracle on short parts. Then issue 25's eighth round: code and patterns under a secret's name
that the real diffs showed (format strings of fields, a test's regular expression, keyword
arguments, a model's name). Every value here is made up.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graft_eval_pipeline.secrets.values import (
    code_call,
    is_placeholder,
    looks_secret,
    name_like,
    words_run_together,
)
from graft_eval_pipeline_tests.builders import made_up

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


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("{task_id}_{self._name}", True),  # a format string of fields alone
        ("{org}/{repo}:{ref}", True),
        ("[a-zA-Z0-9]{54}", True),  # a regular expression's class and count
        (r"EZTK[a-z0-9]{54}", True),
        (r"[\w~.-]{31,34}", True),
        ("[A-Z]+", True),
        ("${keys[i2]}", True),  # a template's subscript
        (f"{{id}}{made_up(24)}", False),  # a field, then a value: the value is there
        (f"{made_up(16)}[ab]{made_up(6)}", False),  # brackets without a count
        (made_up(32), False),
    ],
)
def test_format_strings_patterns_and_subscripts_are_placeholders(value: str, expected: bool) -> None:
    assert is_placeholder(value) is expected


@pytest.mark.parametrize(
    ("value", "quoted", "strict", "expected"),
    [
        ("value=self.token_usage,", False, False, False),  # a keyword argument
        ("self).__init__(*args,", False, False, False),  # an expression
        ("forms.Textarea(attrs={'class':", False, False, False),
        ("retry_immediate=False", True, True, False),  # loose syntax: an assignment in a sentence
        ("openai/gpt-4", True, True, False),  # loose syntax: a model's name, words
        ("0011_update_proxy_permissions", True, True, False),  # a migration's name
        (made_up(24), False, False, True),
        (made_up(24, seed=1), True, True, True),
        ("a=" + made_up(20, seed=2), True, False, True),  # quoted: `=` inside a password is a value
    ],
)
def test_code_and_words_are_no_value(value: str, quoted: bool, strict: bool, expected: bool) -> None:
    assert looks_secret(value, quoted=quoted, strict=strict) is expected


def test_code_call_and_name_like() -> None:
    assert code_call("self.build_digest_header(r.method,")
    assert code_call("new Signer(")
    assert not code_call(made_up(32))
    assert name_like("openai/gpt-4") and name_like("src/auth/token_store.py")
    assert name_like("atLeast24CharactersField")
    assert not name_like(made_up(32, seed=3))
