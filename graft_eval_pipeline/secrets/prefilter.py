r"""Which of many joined texts hold a hit of our anchors or of gitleaks' keywords: one Hyperscan pass.

Why: the live pre-send check and a rescan search many short texts joined by newlines
(`rules.secret_kinds_in`), and most hold no hit at all. RE2 runs each prefilter as a DFA of its
own, about 200 MB/s for our 170 anchors and 370 MB/s for gitleaks' keywords on real diffs;
Hyperscan runs both as one SIMD automaton, several times faster. It reports where matches end,
not where they start, so it answers the question the joined search asks (which texts hold a
hit) and each such text is then scanned from its start by the RE2 rules, as before; a match
that Hyperscan finds across two texts only costs that scan.

Exact where it is used: only on ASCII texts. On ASCII input RE2's and Hyperscan's patterns mean
the same once `\s` is spelt out (RE2's has no vertical tab) and `$` and `^` are multi-line (a
text's end is a newline in the join); RE2's Unicode case folding (the Kelvin sign is a `k`)
cannot matter without non-ASCII bytes. A non-ASCII text is searched by RE2 alone.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections.abc import Sequence
from functools import cache
from typing import Any

import hyperscan

from graft_eval_pipeline.secrets.gitleaks import keywords
from graft_eval_pipeline.secrets.scan import NEAR_KEYWORD_ANCHOR, anchor_patterns

OURS, THEIRS, NEAR = 0, 1, 2
"""What Hyperscan looks for: our rules' anchors, gitleaks' keywords (`gitleaks.first_keyword`),
the high-entropy rule's keywords (with our anchors, what `scan.first_anchor` finds)."""

_SPACE = r"\t\n\f\r "  # RE2's \s


def hyperscan_syntax(pattern: str) -> bytes:
    r"""`pattern` (RE2 syntax) as a Hyperscan expression that matches the same ASCII text.

    `\s` and `\S` become RE2's own classes (Hyperscan's `\s` also holds the vertical tab);
    the rest of the syntax the rules use is common to both.
    """
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            escape = pattern[i : i + 2]
            if escape == r"\s":
                out.append(_SPACE if in_class else f"[{_SPACE}]")
            elif escape == r"\S":
                if in_class:
                    raise ValueError(r"\S inside a character class has no Hyperscan spelling here")
                out.append(f"[^{_SPACE}]")
            else:
                out.append(escape)
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            out.append(c)
            i += 1
            # a `]` (or `^]`) right after the opening bracket is a member, not the end
            for literal in ("^", "]"):
                if pattern.startswith(literal, i):
                    out.append(literal)
                    i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out).encode("ascii")


@cache
def _database() -> Any:
    expressions = [hyperscan_syntax(p) for p in (*anchor_patterns(), NEAR_KEYWORD_ANCHOR)]
    ids = [OURS] * (len(expressions) - 1) + [NEAR]
    flags = [hyperscan.HS_FLAG_MULTILINE] * len(expressions)
    for keyword in keywords():
        expressions.append(hyperscan_syntax(re.escape(keyword.decode("ascii"))))
        ids.append(THEIRS)
        flags.append(hyperscan.HS_FLAG_CASELESS)
    database = hyperscan.Database()
    database.compile(expressions=expressions, ids=ids, flags=flags)
    return database


_local = threading.local()  # a scratch space may serve one scan at a time: one per thread


def texts_with_hits(data: bytes, starts: Sequence[int]) -> dict[int, list[bool]]:
    """Text index -> [holds an anchor of ours, a gitleaks keyword, a near keyword], for the texts with any.

    `data` is the texts joined by newlines, `starts[i]` the byte offset of text i (and
    `starts[-1]` one past the end). A text reported may still hold nothing (a match across two
    texts); a text not reported holds no hit of either pass, when it is ASCII.
    """
    database = _database()
    scratch = getattr(_local, "scratch", None)
    if scratch is None:
        scratch = _local.scratch = hyperscan.Scratch(database)
    found: dict[int, list[bool]] = {}
    # The byte range of the last text each kind was seen in: most matches repeat it, and are
    # passed over with two comparisons.
    seen_from, seen_to = [0, 0, 0], [0, 0, 0]
    limit = len(starts) - 2

    def on_match(pass_: int, _start: int, end: int, _flags: int, _context: object) -> None:
        if seen_from[pass_] < end <= seen_to[pass_]:
            return
        index = min(bisect_right(starts, end - 1) - 1, limit)
        seen_from[pass_], seen_to[pass_] = starts[index], starts[index + 1]
        found.setdefault(index, [False, False, False])[pass_] = True

    database.scan(data, match_event_handler=on_match, scratch=scratch)
    return found
