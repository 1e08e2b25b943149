"""User `--redact-pattern`s (issue 23, item 4).

Checked before RE2 sees them, RE2's own logging off, one line per error, a length limit. RE2 logs
from C++ straight to file descriptor 2, so the tests capture at that level (capfd).
"""

from __future__ import annotations

import pytest

from graft_eval_pipeline.evalset.export.redact import MAX_PATTERN_CHARS, RedactOptions
from graft_eval_pipeline.evalset.sets.errors import EvalError


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(?<=api)key", "syntax the linear-time engine (RE2) does not support"),
        (r"(a)\1", "syntax the linear-time engine (RE2) does not support"),
        (r"a{1001}", "syntax the linear-time engine (RE2) does not support"),  # RE2's repeat limit
        (r"(unclosed", "is not a valid regular expression"),
        ("(" * 200_000 + ")" * 200_000, "characters long"),
    ],
)
def test_a_pattern_re2_refuses_is_one_line_and_re2_prints_nothing(
    capfd: pytest.CaptureFixture[str], pattern: str, reason: str
) -> None:
    with pytest.raises(EvalError) as info:
        RedactOptions(patterns=(pattern,))
    message = str(info.value)
    assert "\n" not in message and reason in message
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


def test_a_pattern_longer_than_the_limit_is_refused_before_it_is_compiled(
    capfd: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(EvalError, match=r"^--redact-pattern is 100,000 characters long; at most 1,000"):
        RedactOptions(patterns=("x" * 100_000,))
    RedactOptions(patterns=("x" * MAX_PATTERN_CHARS,))  # at the limit: accepted
    assert capfd.readouterr() == ("", "")
