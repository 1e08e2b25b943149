"""The secret rules as one stage-neutral surface: what counts as a secret, found in one text.

Why here and not in export/: three stages apply the same rules. Export redacts with them
(`export/redact.py` splices the spans found here), a rescan re-runs them over an existing set, and
a live run looks at each prepared prompt one last time before it is sent (`run/` may not import
export/). The rules are pure text functions with no I/O, like the seeded sampling in `sample.py`,
so they live in the bottom stage; the catalogue, scanner and value checks are in
`secret_catalogue.py`, `secret_scan.py` and `secret_values.py` beside this module.

Only kinds and counts leave this module, never a value.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence

from graft_eval_pipeline.evalset.sets.secret_catalogue import TOKENS
from graft_eval_pipeline.evalset.sets.secret_scan import AddSpan, key_blocks, may_hold_secret, scan

STRUCTURED_KINDS = ("url_password", "connection_string", "auth_header", "basic_auth", "aws_secret_key")
SECRET_KINDS: tuple[str, ...] = tuple(
    dict.fromkeys(("private_key", *(t.kind for t in TOKENS), *STRUCTURED_KINDS, "assignment"))
)
"""Every kind a secret rule reports, in priority order (an earlier kind wins a tie at one start)."""

SECRET_PRIORITY = {kind: rank for rank, kind in enumerate(SECRET_KINDS)}

Span = tuple[int, int, int, str, bool]
"""(start, priority, end, kind, counted): a private-key block's lines are spans that are not
counted one by one (the block counts once)."""


def secret_spans(text: str, is_patch: bool, add: AddSpan, add_block_line: AddSpan) -> int:
    """Report every secret span of `text` through `add` (key-block lines through `add_block_line`);
    returns the number of private-key blocks found."""
    return key_blocks(text, is_patch, add_block_line) if scan(text, is_patch, add) else 0


def kept_spans(spans: Iterable[Span]) -> Iterator[Span]:
    """The spans a redaction replaces: leftmost first, ties by priority; one that overlaps an
    earlier kept span is dropped."""
    pos = 0
    for span in sorted(spans):
        if span[0] < pos:
            continue
        pos = span[2]
        yield span


def secret_kinds(text: str, *, is_patch: bool = False) -> Counter[str]:
    """Kind -> count of the secrets in `text`, counted as a redaction would count them, without
    rewriting anything: for a rescan report or the last look at a prompt before it is sent."""
    spans: list[Span] = []

    def add(start: int, end: int, kind: str) -> None:
        if end > start:
            spans.append((start, SECRET_PRIORITY[kind], end, kind, True))

    def add_block_line(start: int, end: int, kind: str) -> None:
        if end > start:
            spans.append((start, SECRET_PRIORITY[kind], end, kind, False))

    counts: Counter[str] = Counter()
    blocks = secret_spans(text, is_patch, add, add_block_line)
    if blocks:
        counts["private_key"] += blocks
    if spans:
        for _, _, _, kind, counted in kept_spans(spans):
            if counted:
                counts[kind] += 1
    return counts


def secret_kinds_in(texts: Sequence[str], *, is_patch: bool = False) -> Counter[str]:
    """Kind -> count summed over `texts`, each counted on its own as `secret_kinds` counts it.

    Short texts (a prompt's title, paths) cost RE2's fixed price per call more than their length:
    when no anchor occurs in all of them joined by newlines, none holds a secret (one call)."""
    found: Counter[str] = Counter()
    if texts and may_hold_secret("\n".join(texts)):
        for text in texts:
            if kinds := secret_kinds(text, is_patch=is_patch):
                found.update(kinds)
    return found
