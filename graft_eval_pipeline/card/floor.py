"""The rule-based risk floor (design 3.2): a minimum class from paths, sizes and markers.

The floor never reads model output, so a model that is fooled or down cannot lower it.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import re
import threading
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, get_args

import hyperscan

from graft_eval_pipeline.card.globs import (
    AUTH_SECRETS_GLOBS,
    BINARY_EXTENSIONS,
    CI_CONFIG_GLOBS,
    DEPENDENCY_GLOBS,
    INFRA_GLOBS,
    MIGRATION_GLOBS,
    POLICY_FILE_GLOBS,
    TEST_GLOBS,
    GlobIndex,
    glob_matcher,
)
from graft_eval_pipeline.card.models import RISK_ORDER, CardInputs, ChangedFile, RiskClass
from graft_eval_pipeline.card.result import FloorRuleId

FLOOR_RULE_IDS: tuple[FloorRuleId, ...] = get_args(FloorRuleId)
"""R1..R15, in rule order."""
PATH_RULE_IDS: tuple[FloorRuleId, ...] = FLOOR_RULE_IDS[:8]
"""R1..R8: the rules that read only the file list (the sampler's "sensitive" stratum)."""

RULE_CLASS: dict[FloorRuleId, RiskClass] = {
    "ci_config": "sensitive",
    "policy_file": "sensitive",
    "dependency_manifest": "sensitive",
    "infra": "sensitive",
    "auth_secrets": "sensitive",
    "migration": "sensitive",
    "configured_path": "sensitive",
    "test_deleted": "sensitive",
    "test_shrunk": "logic",
    "binary": "logic",
    "size_large": "logic",
    "size_huge": "sensitive",
    "listing_truncated": "sensitive",
    "partial_view": "logic",
    "injection_marker": "logic",
}

SIZE_LARGE_LINES = 300
SIZE_HUGE_LINES = 1_500
SIZE_HUGE_FILES = 50
TEST_SHRUNK_LINES = 5

# Bit i of a path's mask is set when list i matches; the order follows R1..R6, then tests.
_PATH_LISTS: tuple[tuple[FloorRuleId, tuple[str, ...]], ...] = (
    ("ci_config", CI_CONFIG_GLOBS),
    ("policy_file", POLICY_FILE_GLOBS),
    ("dependency_manifest", DEPENDENCY_GLOBS),
    ("infra", INFRA_GLOBS),
    ("auth_secrets", AUTH_SECRETS_GLOBS),
    ("migration", MIGRATION_GLOBS),
)
_TEST_BIT = 1 << len(_PATH_LISTS)
_RULE_BITS = _TEST_BIT - 1
_BIT_RULES = tuple((1 << i, rule) for i, (rule, _) in enumerate(_PATH_LISTS))
_INDEX = GlobIndex([globs for _, globs in _PATH_LISTS] + [TEST_GLOBS])
_SHRINKABLE = frozenset({"modified", "changed", "renamed"})


@dataclass(frozen=True, slots=True)
class FloorResult:
    """Which rules fired, and the first path or source that fired each (for `show` only).

    `fired_by` names the first path or source ("title", "body", "issue", "pr", "listing") that fired
    each rule; it is for display in `show`, never for reports (nor for repr).
    """

    risk: RiskClass
    rules: tuple[FloorRuleId, ...]
    fired_by: dict[FloorRuleId, str] = field(default_factory=dict, repr=False)


# R15. Every branch holds "instruction", "review" or "classif" (`_KEYWORDS`): the keywords are
# found at memory speed, and the regex runs only in short windows around them.
_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override) (?:all |any )?(?:of )?(?:the |your |my )?"
    r"(?:previous|prior|above|earlier|preceding|former|original|system) instructions?\b"
    r"|\bnote to (?:the |all |any )?(?:ai|llm|automated|bot|model) ?(?:code )?review(?:er|ers|bot|bots)?\b"
    r"|\b(?:ai|llm|automated|bot) (?:code )?reviewers? ?[:,-] ?(?:please )?"
    r"(?:approve|accept|lgtm|pass|ignore|skip|classify|mark|rate|treat)\b"
    r"|\bclassify (?:this|the|it)(?: (?:pr|pull request|change|changes|diff|patch|commit|one))? as\b"
)
_KEYWORDS = ("instruction", "review", "classif")
"""Every branch of `_INJECTION` holds one of these, so every match holds one."""
_MAX_MATCH = 48
"""No match of `_INJECTION` is longer (44 characters; a test checks the bound), and each holds a
keyword: so it lies within this many characters either side of one. R15 runs the regex only over
such windows around the keywords of a text, never over a whole file that mentions "review"."""


_MAX_CACHED_CHARACTERS = 65_536
"""Per-character caches stop growing here (a few MB each). Real text meets a few hundred
distinct non-ASCII characters, a CJK translation a few thousand; one hostile case holding
every code point would otherwise keep ~240 MB for the life of the process."""


class _FormatChars(dict[int, int | None]):
    """Unicode category Cf (zero-width, bidi controls, tags) -> deleted, for str.translate.

    Filled per code point when first met: listing every Cf character up front cost each
    process 35-150 ms (4-15% of a 1,000-case fake run) as soon as one text was not ASCII.
    """

    def __missing__(self, code_point: int) -> int | None:
        kept = None if unicodedata.category(chr(code_point)) == "Cf" else code_point
        if len(self) < _MAX_CACHED_CHARACTERS:
            self[code_point] = kept
        return kept


_FORMAT_CHARS = _FormatChars()


def normalize_text(text: str) -> str:
    """NFKC, drop format characters, lower-case, fold white space (design 3.2, R15)."""
    if not text.isascii():
        text = _drop_format_chars(unicodedata.normalize("NFKC", text))
    return " ".join(text.lower().split())


def _drop_format_chars(text: str) -> str:
    """`text` without its category Cf characters.

    Each distinct one its non-ASCII part holds is replaced away at C speed: `str.translate` with
    a table looks up every character (on a 1.7 MB minified bundle with one accent that took
    0.4 s).
    """
    others = text.encode("utf-8", "surrogatepass").translate(None, _ASCII).decode("utf-8", "surrogatepass")
    for char in set(others):
        if _FORMAT_CHARS[ord(char)] is None:
            text = text.replace(char, "")
    return text


def _could_inject(text: str) -> bool:
    """False when no phrase can match: the text holds none of the keywords every branch needs.

    ASCII text (the common case) is lower-cased and searched. Other text is searched in its
    letters-only view (`_ascii_view`), which holds every keyword `normalize_text` could make; so
    a non-ASCII diff without a keyword skips the normalisation and the regex as ASCII does.
    """
    if text.isascii():
        low = text.lower()
        return "instruction" in low or "review" in low or "classif" in low
    view = _ascii_view(text)
    return b"instruction" in view or b"review" in view or b"classif" in view


_ASCII = bytes(range(0x80))
_NOT_ASCII = bytes(range(0x80, 0x100))


class _GivesNoLetter(dict[str, bool]):
    """Non-ASCII character -> True when its NFKC form holds no ASCII letter.

    Filled per character when first met, up to `_MAX_CACHED_CHARACTERS` (as `_FormatChars`); a
    patch has a few dozen distinct non-ASCII characters.
    """

    def __missing__(self, char: str) -> bool:
        normal = unicodedata.normalize("NFKC", char)
        gives_none = not any(c.isascii() and c.isalpha() for c in normal)
        if len(self) < _MAX_CACHED_CHARACTERS:
            self[char] = gives_none
        return gives_none


_GIVES_NO_LETTER = _GivesNoLetter()


def _ascii_view(text: str) -> bytes:
    """The text's ASCII view for the keyword search, lower-cased, at C speed.

    The text's ASCII characters alone when that provably holds every keyword `normalize_text(text)`
    holds; otherwise NFKD with every non-ASCII character dropped. Both are C speed, with no
    per-character work on the ASCII part.

    The NFKD view holds every keyword of the normal form: its letters are ASCII letters of
    NFKC(text) with only Cf characters between them; NFKC composes only into non-ASCII
    characters, so each of those letters is in NFKD(text) too, with nothing between them but
    non-ASCII characters, which the view drops. Lower-casing maps no non-ASCII character of an
    NFKD text to ASCII (only U+0130 and U+212A would, and NFKD decomposes both). The view may
    hold more (accents split off, other scripts dropped): then the exact path decides.

    The ASCII characters alone hold as much when no non-ASCII character of the text gives an
    ASCII letter under NFKC (tested per distinct character; the first test, on the NFKD of all
    of them at once, settles other scripts and punctuation in one call). Then every ASCII letter
    of NFKC(text) is one of the text's own: normalisation never reorders or adds ASCII
    characters; composition never yields an ASCII character nor takes one as its second part;
    and a letter that NFKC(c) composes away is composed away in any context too, since a mark
    that canonical ordering moves before c's own has a lower combining class, so it composes
    first or does not block. What lies between two of those letters in the text is then non-ASCII
    (an ASCII character there would stay, or compose into a non-Cf character), and the view drops
    it. Lower-casing the normal form gives an ASCII letter from a non-ASCII character only for
    U+0130 ("i" and a combining dot, which no keyword can hold: each "i" in one is followed by a
    letter), since U+212A is not NFKC. Testing the whole non-ASCII part under NFKC at once would
    not do: a mark joined to an ASCII letter in the text could compose, in that part alone, with
    a full-width letter from elsewhere and hide it.
    """
    raw = text.encode("utf-8", "surrogatepass")
    others = raw.translate(None, _ASCII).decode("utf-8", "surrogatepass")  # a few % of a patch
    letters = unicodedata.normalize("NFKD", others).encode("ascii", "ignore")
    if letters.lower() == letters.upper() or all(_GIVES_NO_LETTER[c] for c in set(others)):
        return raw.translate(None, _NOT_ASCII).lower()
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").lower()


def addresses_ai_reviewer(text: str) -> bool:
    """True when the text, normalized, holds an instruction addressed to an AI reviewer."""
    return _could_inject(text) and _search_normal(normalize_text(text))


def _keyword_hits(low: str) -> list[int]:
    """Where a keyword starts in `low` (lower-cased text), every occurrence, in order."""
    return _occurrences(low, _KEYWORDS)


def _occurrences(text: str, needles: Iterable[str]) -> list[int]:
    """Where any of `needles` starts in `text`, every occurrence (overlapping ones too), in order."""
    found: list[int] = []
    for needle in needles:
        at = text.find(needle)
        while at >= 0:
            found.append(at)
            at = text.find(needle, at + 1)
    found.sort()
    return found


_HIT_SPAN = 1 << 20
"""An ASCII patch is searched this many characters at a time for its keywords: one copy of a whole
170 MB patch was the largest allocation of a run that held it."""
_LONGEST_KEYWORD = max(map(len, _KEYWORDS))


@functools.cache
def _keyword_database() -> Any:
    """The keywords for Hyperscan: literals, any case, each match reported at its start.

    Why: on real commits R15 searched 84 MB of ASCII patches for three keywords, a lower-cased
    copy and three `str.find` passes (about 0.2 s of a 2,000-case run); Hyperscan's one SIMD pass
    over the bytes takes a quarter of that (the secret prefilter uses it too).
    """
    database = hyperscan.Database()
    database.compile(
        expressions=[keyword.encode("ascii") for keyword in _KEYWORDS],
        ids=list(range(len(_KEYWORDS))),
        flags=[hyperscan.HS_FLAG_CASELESS | hyperscan.HS_FLAG_SOM_LEFTMOST] * len(_KEYWORDS),
    )
    return database


_scratch = threading.local()  # a scratch space serves one scan at a time: one per thread


def _ascii_keyword_hits(text: str) -> list[int]:
    """`_keyword_hits(text.lower())` for ASCII `text`, in one Hyperscan pass over its bytes."""
    database = _keyword_database()
    scratch = getattr(_scratch, "space", None)
    if scratch is None:
        scratch = _scratch.space = hyperscan.Scratch(database)
    hits: list[int] = []

    def on_match(_id: int, start: int, _end: int, _flags: int, _context: object) -> None:
        hits.append(start)

    database.scan(text.encode("ascii"), match_event_handler=on_match, scratch=scratch)
    hits.sort()
    return hits


def _patch_keyword_hits(patch: str) -> list[int]:
    """`_keyword_hits(patch.lower())` for ASCII `patch`, searching `_HIT_SPAN` characters at a time.

    Each span is searched with the `_LONGEST_KEYWORD` - 1 characters after it, so a keyword that
    starts in it is found there whole, and only hits that start in it are kept.
    """
    if len(patch) <= _HIT_SPAN:
        return _ascii_keyword_hits(patch)
    hits: list[int] = []
    for start in range(0, len(patch), _HIT_SPAN):
        piece = patch[start : start + _HIT_SPAN + _LONGEST_KEYWORD - 1]
        hits += [start + at for at in _ascii_keyword_hits(piece) if at < _HIT_SPAN]
    return hits


def _search_normal(normal: str) -> bool:
    """`_INJECTION.search(normal)` on normalized text, only in windows around its keywords.

    The windows reach `_MAX_MATCH` characters either side of each keyword and are merged where
    they overlap.

    A window starts after a space (or at 0) and ends before one (or at the end), so the regex,
    whose matches begin and end with a letter, sees the same word boundaries there as in the
    whole text; `search(text, pos, endpos)` reads the character before `pos` as it is.
    """
    hits = _keyword_hits(normal)
    i = 0
    while i < len(hits):
        start = max(hits[i] - _MAX_MATCH, 0)
        start = normal.rfind(" ", 0, start + 1) + 1 if start else 0
        end = len(normal)
        while i < len(hits) and hits[i] < end:  # every keyword inside the window widens it
            end = normal.find(" ", hits[i] + _MAX_MATCH)
            end = len(normal) if end < 0 else end
            i += 1
        if _INJECTION.search(normal, start, end) is not None:
            return True
    return False


def _added_lines(patch: str) -> str:
    return "\n".join(line[1:] for line in patch.split("\n") if line.startswith("+"))


def _patch_injects(patch: str) -> bool:
    """`addresses_ai_reviewer(_added_lines(patch))`, not joining or normalizing a patch whole.

    The ones that cost are minified bundles of one 1.6 MB line, whose keywords are mostly in
    removed lines or far from any phrase.

    Each keyword of an added line (found in `_keyword_view`) gets a window of the added text
    around it, cut where `_NOT_WORD` says the cut keeps the regex's verdict, with at least
    `_MAX_MATCH` normalized characters either side of the keyword (or up to the text's ends), and
    so does each character that normalization turns into ASCII letters or drops (`_special_windows`);
    windows that overlap are merged, and only they are joined, normalized and searched. A patch
    with too many such characters, or one too far from any ASCII character, is joined and
    normalized whole; the regex still runs only around its keywords (`_search_normal`).
    """
    found = _keyword_view(patch)
    lines = _Lines(patch)
    special = None if found is None else _special_windows(patch, found[1], lines)
    if found is None or special is None:
        return _could_inject(patch) and _search_normal(normalize_text(_added_lines(patch)))
    windows = heapq.merge(_keyword_windows(patch, _patch_keyword_hits(found[0]), lines), special)
    for start, end in _merged(windows):
        if _INJECTION.search(normalize_text(_added_text(patch, start, end))) is not None:
            return True
    return False


def _keyword_windows(patch: str, hits: list[int], lines: _Lines) -> Iterator[tuple[int, int]]:
    """(start, end) of the window around each keyword of an added line, in order.

    A keyword inside the window of one before it widens that window instead.
    """
    i = 0
    while i < len(hits):
        hit = hits[i]
        i += 1
        line_start, line_end, added = lines.of(hit)
        if not added:
            continue
        start = _window_start(patch, hit, line_start)
        end = _window_end(patch, hit, line_end)
        while (j := bisect.bisect_left(hits, end, i)) > i:  # hits[i:j] lie inside the window
            widened = end
            for k in range(j - 1, i - 1, -1):  # the window ends far enough after its last keyword
                _, k_end, k_added = lines.of(hits[k])
                if k_added:
                    widened = _window_end(patch, hits[k], k_end)
                    break
            i = j
            if widened <= end:
                break
            end = widened
        yield start, end


def _merged(windows: Iterable[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The windows, each that overlaps the one before it joined with it.

    They come about in order of start; one that does not is still searched, in full: the union of
    two windows that overlap is one window, each end a cut of its own.
    """
    current: tuple[int, int] | None = None
    for start, end in windows:
        if current is not None and start < current[1] and end > current[0]:
            current = (min(current[0], start), max(current[1], end))
            continue
        if current is not None:
            yield current
        current = (start, end)
    if current is not None:
        yield current


_MAX_SPECIALS = 10_000
"""A patch with more characters that give ASCII letters or are dropped is normalized whole."""
_SPECIAL_REACH = 256
"""How far from such a character its window looks for an ASCII character (or its line's end)."""
_ASCII_CHAR = re.compile(r"[\x00-\x7f]")
_LAST_ASCII = re.compile(r"[\x00-\x7f](?=[^\x00-\x7f]*\Z)")


def _keyword_view(patch: str) -> tuple[str, list[int]] | None:
    """An ASCII text of the patch's length, where windows go around keywords, and the special characters.

    The view is the patch itself when it is ASCII; otherwise each non-ASCII character becomes "?"
    (one a code point: positions are the patch's). The special characters are where the
    patch holds a format character (Cf: normalization drops it) or one that gives an ASCII
    letter under NFKC: keywords can form there that the view does not show, so each gets a
    window of its own (`_special_windows`). None when there are over `_MAX_SPECIALS`.

    Why the windows then see every phrase, as on ASCII text: every other ASCII letter of the
    normal form is one of the patch's own (`_ascii_view` gives the argument), and between two
    letters of one keyword only a format character can lie; so each keyword of the normal form
    is one of the view's or reaches a special character. Every ASCII character has a
    normalization boundary before it (combining class 0, never the second of a composition), and
    windows are cut and measured only before ASCII characters (`_NOT_WORD`) or at line breaks,
    so a window normalizes to its slice of the whole normal form, as on ASCII text, and its
    lengths add up. Lower-casing differs by context only for a final sigma, a word character
    either way, so no verdict can change.
    """
    if patch.isascii():
        return patch, []
    others = patch.encode("utf-8", "surrogatepass").translate(None, _ASCII).decode("utf-8", "surrogatepass")
    special = [c for c in set(others) if _FORMAT_CHARS[ord(c)] is None or not _GIVES_NO_LETTER[c]]
    if sum(patch.count(c) for c in special) > _MAX_SPECIALS:
        return None
    return patch.encode("ascii", "replace").decode("ascii"), _occurrences(patch, special)


def _special_windows(patch: str, at: list[int], lines: _Lines) -> list[tuple[int, int]] | None:
    """(start, end) of a window around each special character of an added line, in order.

    Or None when one has no ASCII character (nor its line's start or end) within
    `_SPECIAL_REACH` on a side. A keyword that reaches the character at `p` starts at most
    `_LONGEST_KEYWORD` - 1 normalized characters before it, and ends at most where the
    character's own normal form does; a match reaches `_MAX_MATCH` from the keyword. So the window
    is measured from the last ASCII character `a` before `p` (or the line's start): `_MAX_MATCH`
    + `_LONGEST_KEYWORD` normalized characters before `a`, and that many after the first ASCII
    character after `p` (or the line's end), measured as the normal length of the text from `a`
    to it and that many more.
    """
    margin = _MAX_MATCH + _LONGEST_KEYWORD
    windows = []
    for p in at:
        line_start, line_end, added = lines.of(p)
        if not added:
            continue
        lo = line_start + 1
        before = _LAST_ASCII.search(patch, max(lo, p - _SPECIAL_REACH), p)
        after = _ASCII_CHAR.search(patch, p + 1, min(line_end, p + _SPECIAL_REACH))
        a = before.start() if before is not None else lo if p - lo <= _SPECIAL_REACH else None
        q = after.start() if after is not None else line_end if line_end - p <= _SPECIAL_REACH else None
        if a is None or q is None:
            return None
        start = _window_start(patch, a, line_start, margin)
        windows.append((start, _window_end(patch, a, line_end, len(normalize_text(patch[a:q])) + margin)))
    windows.sort()
    return windows


class _Lines:
    """The line of a patch around a position: start, end, whether it is an added line.

    The last one found is kept, as the positions asked for mostly grow within one long line.
    """

    __slots__ = ("_added", "_end", "_patch", "_start")

    def __init__(self, patch: str) -> None:
        self._patch = patch
        self._start = self._end = -1
        self._added = False

    def of(self, at: int) -> tuple[int, int, bool]:
        if not self._start <= at < self._end:
            patch = self._patch
            self._start = patch.rfind("\n", 0, at) + 1
            end = patch.find("\n", at)
            self._end = len(patch) if end < 0 else end
            self._added = patch.startswith("+", self._start)
        return self._start, self._end, self._added


_NOT_WORD = re.compile(r"[^0-9A-Za-z_\x80-\U0010ffff]")
"""Where a window may be cut: an ASCII character that is neither a letter, a digit nor `_`. The
regex's matches begin and end with a letter and hold no look-around but word boundaries, so a
match cannot start or end on such a character, and a word boundary beside it reads the same in
the window as in the whole text. Normalization is per character but for the folding of white
space, which a cut leaves as it is in the whole text, and NFKC, which never composes across the
start of an ASCII character (`_keyword_view`)."""


def _cut_back(text: str, lo: int, hi: int, need: int) -> tuple[int, int]:
    """(cut, got): a cut in [lo, hi] where `text[cut:hi]` normalizes to `got` >= `need` characters.

    Or cut == lo when there is none; the cut is lo or a `_NOT_WORD` position.
    """
    span = need
    while hi - span > lo:
        found = _NOT_WORD.search(text, max(lo, hi - 2 * span), hi - span + 1)
        if found is not None:
            cut = found.start()
            got = len(normalize_text(text[cut:hi]))
            if got >= need:
                return cut, got
            span = hi - cut
        span *= 2
    return lo, len(normalize_text(text[lo:hi]))


def _cut_forward(text: str, lo: int, hi: int, need: int) -> tuple[int, int]:
    """(cut, got): a cut in [lo, hi] where `text[lo:cut]` normalizes to `got` >= `need` characters.

    Or cut == hi when there is none; the cut is hi or a `_NOT_WORD` position.
    """
    span = need
    while lo + span < hi:
        found = _NOT_WORD.search(text, lo + span, min(hi, lo + 2 * span))
        if found is not None:
            cut = found.start()
            got = len(normalize_text(text[lo:cut]))
            if got >= need:
                return cut, got
            span = cut - lo
        span *= 2
    return hi, len(normalize_text(text[lo:hi]))


def _window_start(patch: str, hit: int, line_start: int, need: int = _MAX_MATCH) -> int:
    """Where the window before a keyword (at `hit`) of an added line starts.

    `need` (`_MAX_MATCH` for a keyword) normalized characters of added text before it (fewer at
    the start of the patch), skipping the removed and context lines, which the added text does not
    hold.
    """
    hi, start, cut = hit, line_start, hit
    while True:
        if patch.startswith("+", start):
            cut, got = _cut_back(patch, start + 1, hi, need)
            if got >= need:
                return cut
            need -= got
        if start == 0:
            return cut
        hi = start - 1
        start = patch.rfind("\n", 0, hi) + 1


def _window_end(patch: str, hit: int, line_end: int, need: int = _MAX_MATCH) -> int:
    """Where the window after a keyword (at `hit`, in an added line) ends.

    `need` (`_MAX_MATCH` for a keyword) normalized characters of added text from it (fewer at the end
    of the patch).
    """
    lo, end = hit, line_end
    while True:
        cut, got = _cut_forward(patch, lo, end, need)
        if got >= need:
            return cut
        need -= got
        while True:  # the next added line, if any
            if end == len(patch):
                return cut
            lo = end + 1
            found = patch.find("\n", lo)
            end = len(patch) if found < 0 else found
            if patch.startswith("+", lo):
                lo += 1
                break


def _added_text(patch: str, start: int, end: int) -> str:
    """The added text between two positions of a patch, `start` inside an added line.

    The first piece as it is, then the pieces of the added lines without their "+".
    """
    first, *rest = patch[start:end].split("\n")
    return "\n".join([first, *(line[1:] for line in rest if line.startswith("+"))])


@dataclass(frozen=True, slots=True)
class _Scan:
    """What the floor read of one case's texts: R15's source and the path rules per set of globs."""

    texts: tuple[str | None, ...]
    injection: str | None
    paths: dict[tuple[str, ...], tuple[dict[FloorRuleId, str], list[int]]]


class _LastScan:
    """R15's verdict and the path rules on the inputs scanned last, found again by their identity.

    A run computes a case's floor twice: the report's case panel at first sight and `prepare`
    (with its cut paths) as the card is made; R15 was most of a fake run on real commits, and the
    path rules R1-R8 a few per cent more. Both depend on the texts, paths and statuses alone
    (the path rules on the configured globs too, kept per globs), and a `str` never changes, so
    the same objects give the same verdicts: the scan is kept with references to them (which
    also keeps their ids from being reused) and compared by `is`, in O(files). What depends on
    the counts, the cut paths or the flags is computed each time. It holds one case's texts
    until the next case is scanned.
    """

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last = _Scan((), None, {})

    def scan(
        self, inputs: CardInputs, extra_sensitive_globs: tuple[str, ...]
    ) -> tuple[dict[FloorRuleId, str], list[int], str | None]:
        """(path rules fired, which files are tests, R15's source): `_scan_paths` and `_injection_source`."""
        issue = inputs.issue
        texts: tuple[str | None, ...] = (
            inputs.pr.title,
            inputs.pr.body,
            issue.title if issue is not None else None,
            issue.body if issue is not None else None,
            *(text for f in inputs.files for text in (f.path, f.patch, f.previous_path, f.status)),
        )
        last = self._last  # one object, replaced whole: threads never see a torn scan
        if len(texts) != len(last.texts) or not all(a is b for a, b in zip(texts, last.texts, strict=True)):
            last = _Scan(texts, _injection_source(inputs), {})
            self._last = last
        paths = last.paths.get(extra_sensitive_globs)
        if paths is None:
            paths = last.paths[extra_sensitive_globs] = _scan_paths(inputs.files, extra_sensitive_globs)
        fired, is_tests = paths
        return dict(fired), is_tests, last.injection


_LAST_SCAN = _LastScan()


def _injection_source(inputs: CardInputs) -> str | None:
    texts = [("title", inputs.pr.title), ("body", inputs.pr.body)]
    if inputs.issue is not None:
        texts += [("issue", inputs.issue.title), ("issue", inputs.issue.body)]
    for source, text in texts:
        if addresses_ai_reviewer(text):
            return source
    for f in inputs.files:
        if f.patch and _patch_injects(f.patch):
            return f.path
    return None


def _is_binary(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return "." in name and name.rsplit(".", 1)[1].lower() in BINARY_EXTENSIONS


def _scan_paths(
    files: Sequence[ChangedFile], extra_sensitive_globs: Iterable[str]
) -> tuple[dict[FloorRuleId, str], list[int]]:
    """R1-R8 (rule -> first path that fired it) and, per file, whether its path is a test."""
    fired: dict[FloorRuleId, str] = {}
    is_tests: list[int] = []
    configured = glob_matcher(extra_sensitive_globs) if extra_sensitive_globs else None
    mask_of = _INDEX.mask
    for f in files:
        masks = [(f.path, mask_of(f.path))]
        if f.previous_path:
            masks.append((f.previous_path, mask_of(f.previous_path)))
        for path, mask in masks:
            if mask & _RULE_BITS:
                for bit, rule in _BIT_RULES:
                    if mask & bit:
                        fired.setdefault(rule, path)
            if configured is not None and configured(path):
                fired.setdefault("configured_path", path)
        is_test = masks[0][1] & _TEST_BIT
        was_test = masks[-1][1] & _TEST_BIT
        status = f.status
        if (status == "removed" and is_test) or (status == "renamed" and was_test and not is_test):
            fired.setdefault("test_deleted", f.path)
        is_tests.append(is_test)
    return fired, is_tests


def path_rules(
    files: Sequence[ChangedFile], extra_sensitive_globs: Iterable[str] = ()
) -> dict[FloorRuleId, str]:
    """The path rules R1-R8 alone: each that fired, in rule order, with the first path that fired it.

    They read only paths, previous paths and statuses (never patches or PR text), so the
    sampler calls this on a file listing; `compute_risk_floor` gives the same R1-R8.
    """
    fired, _ = _scan_paths(files, tuple(extra_sensitive_globs))
    return {r: fired[r] for r in PATH_RULE_IDS if r in fired}


def compute_risk_floor(
    inputs: CardInputs,
    extra_sensitive_globs: Sequence[str] = (),
    *,
    cut_paths: frozenset[str] = frozenset(),
) -> FloorResult:
    """The floor of one PR. `cut_paths` are the files whose patch `prepare` shortened (R14)."""
    fired, is_tests, source = _LAST_SCAN.scan(inputs, tuple(extra_sensitive_globs))
    for f, is_test in zip(inputs.files, is_tests, strict=True):
        if f.status in _SHRINKABLE and is_test and f.deletions - f.additions >= TEST_SHRUNK_LINES:
            fired.setdefault("test_shrunk", f.path)
        if f.patch is None:
            if _is_binary(f.path):
                fired.setdefault("binary", f.path)
            elif not inputs.too_large:
                fired.setdefault("partial_view", f.path)
        elif f.path in cut_paths and not inputs.too_large:
            fired.setdefault("partial_view", f.path)

    lines = inputs.pr.additions + inputs.pr.deletions
    if lines > SIZE_HUGE_LINES or inputs.pr.changed_files > SIZE_HUGE_FILES:
        fired["size_huge"] = "pr"
    elif lines > SIZE_LARGE_LINES:
        fired["size_large"] = "pr"
    if inputs.listing_truncated:
        fired["listing_truncated"] = "listing"
    if source is not None:
        fired["injection_marker"] = source

    rules = tuple(r for r in FLOOR_RULE_IDS if r in fired)
    risk: RiskClass = max((RULE_CLASS[r] for r in rules), key=RISK_ORDER.__getitem__, default="trivial")
    return FloorResult(risk=risk, rules=rules, fired_by={r: fired[r] for r in rules})
