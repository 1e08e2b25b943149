"""The secret rules as one surface: what counts as a secret, found in one text or in many.

Export redacts with `secret_spans` (splicing the spans it reports), a rescan and the live
pre-send check count with `secret_kinds` / `secret_kinds_in`; the catalogue, scanner and value
checks are `catalogue.py`, `scan.py` and `values.py` beside this module. Only kinds and counts
leave this module, never a value.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate

from graft_eval_pipeline.secrets.catalogue import TOKENS
from graft_eval_pipeline.secrets.entropy import KIND as HIGH_ENTROPY
from graft_eval_pipeline.secrets.entropy import (
    PREFIXED_KIND,
    first_prefixed,
    holds_candidate,
    prefixed_tokens,
)
from graft_eval_pipeline.secrets.gitleaks import first_keyword, gitleaks_spans, kind_of, rule_ids
from graft_eval_pipeline.secrets.prefilter import texts_with_hits
from graft_eval_pipeline.secrets.scan import AddSpan, first_anchor, key_blocks, scan
from graft_eval_pipeline.secrets.utf8 import Utf8Offsets

STRUCTURED_KINDS = (
    "url_password",
    "connection_string",
    "auth_header",
    "basic_auth",
    "aws_secret_key",
    "device_config",
)
SECRET_KINDS: tuple[str, ...] = tuple(
    dict.fromkeys(
        (
            "private_key",
            *(t.kind for t in TOKENS),
            *(kind_of(rule_id) for rule_id in rule_ids()),
            *STRUCTURED_KINDS,
            "assignment",
            PREFIXED_KIND,
            HIGH_ENTROPY,
        )
    )
)
"""Every kind a secret rule reports, in priority order (an earlier kind wins a tie at one start)."""

SECRET_PRIORITY = {kind: rank for rank, kind in enumerate(SECRET_KINDS)}

GENERIC_KINDS = frozenset((PREFIXED_KIND, HIGH_ENTROPY))
"""The kinds of the rules that need no format (`entropy.py`): where any other rule finds a span
that overlaps one of theirs, the other rule's span is kept and theirs dropped."""

Span = tuple[int, int, int, str, bool]
"""(start, priority, end, kind, counted): a private-key block's lines are spans that are not
counted one by one (the block counts once)."""


def secret_spans(
    text: str,
    is_patch: bool,
    add: AddSpan,
    add_block_line: AddSpan,
    data: bytes | None = None,
    first: int | None = 0,
    first_theirs: int | None = 0,
    first_prefixed: int | None = 0,
) -> int:
    """Report every secret span of `text` through `add` (key-block lines through `add_block_line`).

    Returns the number of private-key blocks found. `data` (the text's UTF-8 bytes), `first`,
    `first_theirs` and `first_prefixed` (byte offsets before which no anchor of ours, no gitleaks
    keyword, or no prefixed token's anchor occurs; None: none occurs at all, so that pass is
    skipped) come from a caller that has already searched.
    """
    if data is None:
        data = text.encode("utf-8", "surrogatepass")
    ours: list[tuple[int, int]] = []  # our token and structured spans: where we have the format
    named: list[tuple[int, int]] = []  # every span but the generic rules'
    generic: list[tuple[int, int, str]] = []  # the generic rules': kept where no other rule found one

    def add_ours(start: int, end: int, kind: str) -> None:
        if kind in GENERIC_KINDS:
            generic.append((start, end, kind))
            return
        if kind != "assignment":
            ours.append((start, end))
        named.append((start, end))
        add(start, end, kind)

    def add_block(start: int, end: int, kind: str) -> None:
        named.append((start, end))
        add_block_line(start, end, kind)

    found_key = first is not None and scan(text, is_patch, add_ours, data, first)
    blocks = key_blocks(text, is_patch, add_block) if found_key else 0
    ours.sort()
    offsets: Utf8Offsets | None = None

    def char_of(byte: int) -> int:
        nonlocal offsets
        if len(data) == len(text):
            return byte
        offsets = offsets or Utf8Offsets(text, data)
        return offsets.char_of(byte)

    if first_prefixed is not None:
        # A prefixed token that starts inside a span found above would lose to it: not checked.
        prefixed_tokens(text, data, first_prefixed, add_ours, char_of, _inside_one_of(named))

    def overlaps(start: int, end: int) -> bool:
        at = bisect_right(ours, (start, end))
        return bool((at and ours[at - 1][1] > start) or (at < len(ours) and ours[at][0] < end))

    def add_theirs(start: int, end: int, kind: str) -> None:
        start, end = char_of(start), char_of(end)
        if not overlaps(start, end):  # one that overlaps ours is left to ours (our kind and span)
            named.append((start, end))
            add(start, end, kind)

    def inside_ours(start: int, end: int) -> bool:
        at = bisect_right(ours, (start, len(data)))
        return bool(at and ours[at - 1][0] <= start and ours[at - 1][1] >= end)

    # A match wholly inside one of our spans is skipped before its capture groups are matched
    # (byte offsets are character offsets only in an ASCII text).
    if first_theirs is not None:
        gitleaks_spans(
            data, add_theirs, inside_ours if len(data) == len(text) and ours else None, first_theirs
        )
    if generic:
        named.sort()
        reach = list(accumulate((e for _, e in named), max))  # the furthest end up to each span
        for start, end, kind in generic:  # a rule that names the format (or the assignment) wins
            at = bisect_right(named, (start, end))
            if not ((at and reach[at - 1] > start) or (at < len(named) and named[at][0] < end)):
                add(start, end, kind)
    return blocks


def _inside_one_of(spans: list[tuple[int, int]]) -> Callable[[int], bool] | None:
    """Does a position lie inside one of `spans` (start <= position < end)? None: no spans."""
    if not spans:
        return None
    ordered = sorted(spans)
    starts = [start for start, _ in ordered]
    reach = list(accumulate((end for _, end in ordered), max))  # the furthest end up to each span

    def inside(pos: int) -> bool:
        at = bisect_right(starts, pos)
        return at > 0 and reach[at - 1] > pos

    return inside


def kept_spans(spans: Iterable[Span]) -> Iterator[Span]:
    """The spans a redaction replaces.

    Leftmost first, ties by priority; one that overlaps an earlier kept span is dropped.
    """
    pos = 0
    for span in sorted(spans):
        if span[0] < pos:
            continue
        pos = span[2]
        yield span


def secret_kinds(
    text: str,
    *,
    is_patch: bool = False,
    data: bytes | None = None,
    first: int | None = 0,
    first_theirs: int | None = 0,
    first_prefixed: int | None = 0,
    into: Counter[str] | None = None,
) -> Counter[str]:
    """Kind -> count of the secrets in `text`, counted as a redaction would, without rewriting anything.

    For a rescan report or the last look at a prompt before it is sent. `data` and the `first*`
    offsets as for `secret_spans`; `into`: the counter to add to (and return), for a caller that
    sums many texts.
    """
    spans: list[Span] = []

    def add(start: int, end: int, kind: str) -> None:
        if end > start:
            spans.append((start, SECRET_PRIORITY[kind], end, kind, True))

    def add_block_line(start: int, end: int, kind: str) -> None:
        if end > start:
            spans.append((start, SECRET_PRIORITY[kind], end, kind, False))

    counts: Counter[str] = Counter() if into is None else into
    blocks = secret_spans(text, is_patch, add, add_block_line, data, first, first_theirs, first_prefixed)
    if blocks:
        counts["private_key"] += blocks
    if spans:
        for _, _, _, kind, counted in kept_spans(spans):
            if counted:
                counts[kind] += 1
    return counts


def secret_kinds_in(texts: Sequence[tuple[str, bool]]) -> Counter[str]:
    """Kind -> count summed over `(text, is_patch)` pairs.

    Each pair is counted on its own as `secret_kinds` counts it.

    Why one search over the texts joined: a prompt is many short fields (title, paths, cut
    patches), most with no hit, and a search's fixed price per call costs more than their length.
    The texts are joined by newlines; one Hyperscan pass (`prefilter.py`) names the texts that
    hold one of our anchors or a gitleaks keyword, RE2 finds the first prefixed-token anchor of
    each text that has one, and only those texts are scanned on their own, by the passes that
    hit. Exact: an anchor that matches in a text alone matches at the same place in the join (a
    newline is no word character and no token's), so no text with a hit is passed over; a
    text whose only hit is a high-entropy keyword, with no run that rule could report, holds
    nothing any rule reports; a non-ASCII text is searched by RE2 alone (see `prefilter.py`).
    """
    found: Counter[str] = Counter()
    joined = "\n".join([text for text, _ in texts])
    ascii_join = joined.isascii()
    if ascii_join:
        data = joined.encode("ascii")
        sizes = [len(text) + 1 for text, _ in texts]
    else:  # each text encoded once: its size is its offset's step
        pieces = [text.encode("utf-8", "surrogatepass") for text, _ in texts]
        data = b"\n".join(pieces)
        sizes = [len(piece) + 1 for piece in pieces]
    starts = list(accumulate(sizes, initial=0))  # the byte offset of each text in `data`
    # Text index -> the byte offset in the text at which each pass starts (None: skipped).
    firsts: dict[int, list[int | None]] = {}
    for index, (ours, theirs, near) in texts_with_hits(data, starts).items():
        if ascii_join or texts[index][0].isascii():
            # A text whose only anchor is a near keyword is scanned only if it holds a run the
            # high-entropy rule could report (most do not: `token` in code without one).
            scanned = ours or (near and holds_candidate(data[starts[index] : starts[index + 1] - 1]))
            firsts[index] = [0 if scanned else None, 0 if theirs else None, None]
    if not ascii_join:
        for index, (text, _) in enumerate(texts):
            if not text.isascii():
                piece = data[starts[index] : starts[index + 1] - 1]
                firsts[index] = [first_anchor(piece), first_keyword(piece), None]
    pos = 0
    while pos < len(data) and (hit := first_prefixed(data, pos)) is not None:
        index = bisect_right(starts, hit) - 1
        firsts.setdefault(index, [None, None, None])[2] = hit - starts[index]
        pos = starts[index + 1]  # the next text: each text is scanned from its first hit on
    for index in sorted(firsts):
        mine, their, prefixed = firsts[index]
        if mine is None and their is None and prefixed is None:
            continue
        text, is_patch = texts[index]
        piece = data[starts[index] : starts[index + 1] - 1]
        secret_kinds(
            text,
            is_patch=is_patch,
            data=piece,
            first=mine,
            first_theirs=their,
            first_prefixed=prefixed,
            into=found,
        )
    return found
