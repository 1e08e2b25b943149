"""The Hyperscan search over joined texts: it passes over no text that RE2 finds a hit in.

`secret_kinds_in` is exact only if every ASCII text in which RE2's prefilters (`first_anchor`,
`first_keyword`) find a hit is one `texts_with_hits` names; checked on the whole secret corpus,
on random texts built from the rules' own keywords and awkward bytes, and through the counts.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from itertools import accumulate
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graft_eval_pipeline.secrets import rules
from graft_eval_pipeline.secrets.gitleaks import first_keyword
from graft_eval_pipeline.secrets.prefilter import hyperscan_syntax, texts_with_hits
from graft_eval_pipeline.secrets.rules import secret_kinds, secret_kinds_in
from graft_eval_pipeline.secrets.scan import first_anchor, scan

DATA = Path(__file__).parent / "data"


def _corpus_lines() -> list[str]:
    lines = []
    for name in ("true_positives.jsonl", "lookalikes.jsonl"):
        for row in (DATA / name).read_text(encoding="utf-8").splitlines():
            if row.strip():
                lines.append(str(json.loads(row)["line"]))
    return lines


def _missed(texts: list[str]) -> list[tuple[int, str]]:
    """(index, pass) of each ASCII text RE2 finds a hit in that the joined search does not name."""
    data = "\n".join(texts).encode("utf-8", "surrogatepass")
    starts = list(accumulate((len(t.encode("utf-8", "surrogatepass")) + 1 for t in texts), initial=0))
    named = texts_with_hits(data, starts)
    missed = []
    for index, text in enumerate(texts):
        if not text.isascii():
            continue
        piece = text.encode("ascii")
        ours, theirs, near = named.get(index, [False, False, False])
        if first_anchor(piece) is not None and not (ours or near):
            missed.append((index, "ours"))
        if first_keyword(piece) is not None and not theirs:
            missed.append((index, "theirs"))
    return missed


def test_every_corpus_line_with_a_hit_is_named() -> None:
    lines = [line for line in _corpus_lines() if line.isascii()]
    assert len(lines) > 500
    assert _missed(lines) == []
    hits = sum(first_anchor(line.encode()) is not None for line in lines)
    assert hits > 400  # the corpus does exercise the anchors


def test_counts_of_corpus_lines_joined_equal_each_line_alone() -> None:
    lines = _corpus_lines()
    for at in range(0, len(lines), 25):
        group = [(line, at % 2 == 0) for line in lines[at : at + 25]]
        alone: Counter[str] = Counter()
        for text, is_patch in group:
            alone.update(secret_kinds(text, is_patch=is_patch))
        assert secret_kinds_in(group) == alone, at


# Pieces of the rules' own vocabulary and the bytes on which the two engines' syntax differs
# (vertical tab, form feed, carriage return), so random texts often come close to an anchor.
_PIECES = [
    "password",
    "PASSWORD",
    "token",
    "secret",
    "api_key",
    "Authorization",
    "Bearer ",
    "login ",
    "env ",
    "--token ",
    "key",
    "name",
    "identified by ",
    "ghp_",
    "sk-",
    "AKIA",
    "xoxb-",
    "s.",
    "://",
    "://us",
    "@",
    ":",
    "=",
    " = ",
    "'",
    '"',
    "\t",
    "\v",
    "\f",
    "\r",
    " ",
    "\n",
    "_",
    "-",
    ".",
    "aB3dE6gH9jK2mN5pQ8sT1vW4",
    "0123456789abcdef",
    "Xk9#mQ2$vL7pR4wZ",
    "-----BEGIN ",
    "PRIVATE KEY",
    "heroku",
    "slack",
    "sonar",
    "stripe",
    "twilio",
    "value",
    "(",
    ")",
    ",",
    "/",
    "?sig=",
]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(_TEXT, max_size=8))
def test_random_texts_with_a_hit_are_named(texts: list[str]) -> None:
    assert _missed(texts) == []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_TEXT, st.booleans()), max_size=8))
def test_random_texts_joined_count_as_each_alone(texts: list[tuple[str, bool]]) -> None:
    # Also the skip of a text whose only hit is a near keyword and that holds no candidate run.
    alone: Counter[str] = Counter()
    for text, is_patch in texts:
        alone.update(secret_kinds(text, is_patch=is_patch))
    assert secret_kinds_in(texts) == alone


def test_a_near_keyword_alone_is_scanned_only_beside_a_candidate_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # `token` ends a name, no other rule's anchor is there: the high-entropy rule's region (this
    # line and the next) holds the run, so the text is scanned and the run found.
    with_run = ("+# the deploy token\n+aB3dE6gH9jK2mN5pQ8sT1vW4xYz7", True)
    without = ("+# the deploy token is rotated weekly", True)
    assert secret_kinds(with_run[0], is_patch=True) == {"high_entropy": 1}
    assert secret_kinds_in([without, with_run]) == {"high_entropy": 1}
    scanned: list[str] = []

    def spy(text: str, *args: object, **kwargs: object) -> bool:
        scanned.append(text)
        return scan(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(rules, "scan", spy)
    assert secret_kinds_in([without, with_run]) == {"high_entropy": 1}
    assert scanned == [with_run[0]]


def test_a_vertical_tab_where_re2_sees_no_space_is_still_found() -> None:
    # RE2's [^\s] matches a vertical tab, Hyperscan's does not: the translation spells RE2's out
    # (a URL's user name holding one, and no keyword that another anchor would find).
    text = "https://us\ver:Xk9mQ2vL@db.example.org"
    assert first_anchor(text.encode()) is not None
    assert _missed(["intro", text, "outro"]) == []


def test_hyperscan_syntax_spells_out_re2_spaces_and_keeps_the_rest() -> None:
    assert hyperscan_syntax(r"a\sb") == rb"a[\t\n\f\r ]b"
    assert hyperscan_syntax(r"[^\s=]+") == rb"[^\t\n\f\r =]+"
    assert hyperscan_syntax(r"\S{6}") == rb"[^\t\n\f\r ]{6}"
    assert hyperscan_syntax(r"[]\s]x\.") == rb"[]\t\n\f\r ]x\."
    assert hyperscan_syntax(r"[^]\s]") == rb"[^]\t\n\f\r ]"


def test_threads_searching_at_once_each_get_their_own_answer() -> None:
    texts = [("fix the parser", False), ("token = 'aB3dE6gH9jK2mN5pQ8sT1vW4'", False)] * 200
    expected = secret_kinds_in(texts)
    assert expected
    results: list[Counter[str]] = []

    def work() -> None:
        for _ in range(20):
            results.append(secret_kinds_in(texts))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 80 and all(r == expected for r in results)
