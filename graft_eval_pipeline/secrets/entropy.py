"""High-entropy tokens next to a secret-ish keyword: a secret whose format no rule names.

Why: the catalogue and gitleaks' rules find the formats they know, and the assignment rule finds
a value assigned to a secret-named name; a token of an unknown format passed in some other way
(`api.setCredentials(`…`)`, a comment `# auth token:` above it, a header `X-Auth: …`) is found
by neither. A long run of base64, hex or base32 characters is rare next to such a word, unless
it is one of the known look-alikes (a git SHA, a UUID, an integrity hash, image data, a path or
an identifier), which `is_high_entropy_token` excludes.

How it stays linear: the scan (`scan.py`) hands this rule the region of a keyword hit (the
keyword's line and the next one, each cut to a bounded window) and the offset up to which an
earlier keyword's region was already examined; only the rest is searched, so every character
is examined at most once by this rule, however many keywords a line holds.

The second rule here needs no keyword: a *prefixed token*, a short prefix and a separator before
a long random body (`tvly-…`, `fo1_…`, `NRII-…`, `sk-proj-…`), the shape most providers give
their keys, whichever provider it is. Its body must hold a digit, an upper- and a lower-case
letter and pass the same randomness checks, which almost no identifier, path or digest does
(about four lines per 100 MB of real diffs).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator

import re2  # type: ignore[import-untyped]

from graft_eval_pipeline.secrets.values import PUBLIC_TOKENS, counted, entropy, is_placeholder, name_like

_A = re.ASCII
KIND = "high_entropy"
PREFIXED_KIND = "prefixed_token"
MIN_LENGTH = 20
"""The shortest run considered: below it, a random-looking run is as often an identifier."""
MIN_HEX_LENGTH = 32
"""The shortest run of hex digits (a 128-bit key); a 40- or 64-digit one is taken for a git or
SHA-256 digest, the commonest hex in code."""
_DIGEST_LENGTHS = frozenset((40, 64))
MIN_SWITCH_RATE = 0.3
"""Changes of character class (lower, upper, digit, other) per character: random base64 has
about 0.6, hex 0.47; words, `ALL_CAPS` and `snake_case` names far less."""
MIN_BASE32_SWITCH_RATE = 0.15
"""The same for a run of one case of base32 (letters and the digits 2-7 only, about 0.3 when
random), where an identifier would hold an underscore."""
ENTROPY_SHARE = 0.8
"""The least Shannon entropy of a run, as a share of the most its length and alphabet allow:
random runs sit at 0.85-0.95 of it, repeated or patterned ones below."""

# A run starts only where the previous character is none of its own (so a short run is not tried
# again from each of its characters: linear).
_RUN = re.compile(r"(?<![A-Za-z0-9+/_\-.])[A-Za-z0-9+/_\-.]{20,}={0,2}", _A)
_SEGMENT = re.compile(r"(?<![A-Za-z0-9+_\-.])[A-Za-z0-9+_\-.]{20,}={0,2}", _A)  # a URL's path segment
# The same runs found by RE2's DFA over an ASCII text's bytes (the common case: many times faster
# than `re`); RE2's leftmost match of a run of 20 or more starts at the run's first character.
_RUN_BYTES = re2.compile(rb"[A-Za-z0-9+/_\-.]{20,}={0,2}")._regexp.Match
_UNANCHORED = re2._re2.RE2.Anchor.UNANCHORED
# Eleven run characters with a digit at one end: every run this rule can report holds one (a run
# of 20 or more with a digit has 10 run characters on one side of that digit), and most keyword
# regions hold none, so a region without one is passed over unexamined.
_CANDIDATE = r"[A-Za-z0-9+/_\-.]{10}[0-9]|[0-9][A-Za-z0-9+/_\-.]{10}"
CANDIDATE_LENGTH = 11
_CANDIDATE_BYTES = re2.compile(_CANDIDATE.encode())._regexp.Match
_CANDIDATE_TEXT = re.compile(_CANDIDATE, _A)
_DIGIT = re.compile(r"[0-9]", _A)
_LETTER = re.compile(r"[A-Za-z]", _A)
_CLASS_RUNS = re.compile(r"[a-z]+|[A-Z]+|[0-9]+|[^A-Za-z0-9]+", _A)
_HEX = re.compile(r"[0-9a-f]+|[0-9A-F]+", _A)
_BASE32 = re.compile(r"[A-Z2-7]+=*|[a-z2-7]+=*", _A)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", _A)
# What stands before a digest, a base64 payload, a hash or a public key's number that is no secret
# (a JSON Web Key's public members `"x"`, `"y"`, `"n"`, `"e"`; its private ones are scan.py's).
_LOOKALIKE_BEFORE = re.compile(
    r"(?:sha1|sha224|sha256|sha384|sha512|md5|h1|blake2b|blake3|git|commit|rev|revision|digest|"
    r"checksum|hash|integrity|nonce|base64|sri|etag|id|uuid|guid|data:[\w/+.\-]+;base64|\"[xyne])"
    r"[\"']?[ \t]*[:=,@#]?[ \t]*[\"']?$",
    _A | re.IGNORECASE,
)
_INTEGRITY = re.compile(r"(?:sha1|sha256|sha384|sha512|md5)-", _A | re.IGNORECASE)

AddSpan = Callable[[int, int, str], None]

# --- prefixed tokens --------------------------------------------------------------------------
_BODY = r"[A-Za-z0-9_\-]"
PREFIXED_ANCHOR = (
    rf"\b[A-Za-z][A-Za-z0-9]{{1,9}}[_\-.](?:{_BODY}*[0-9]{_BODY}*(?:[A-Z]{_BODY}*[a-z]|[a-z]{_BODY}*[A-Z])|"
    rf"{_BODY}*[A-Z]{_BODY}*(?:[0-9]{_BODY}*[a-z]|[a-z]{_BODY}*[0-9])|"
    rf"{_BODY}*[a-z]{_BODY}*(?:[0-9]{_BODY}*[A-Z]|[A-Z]{_BODY}*[0-9]))"
)
"""The rule's RE2 anchor: a prefix, a separator and a body with a digit, an upper- and a lower-case
letter (RE2 has no look-ahead: the order of the three is spelt out). Its own pass (about 470 MB/s
on real diffs): inside the scan's alternation it would halve that DFA's speed."""
_PREFIXED_BYTES = re2.compile(PREFIXED_ANCHOR.encode())._regexp.Match
_LINE_LIMIT = 4096  # the longest prefixed token considered
# The left boundary: no token character before the prefix, except a diff line's own `+`/`-` (a
# token at the start of an added or removed line follows its prefix, which is no part of it).
_PREFIXED = re.compile(
    r"(?:(?<![A-Za-z0-9_\-./+])|(?<=^[+\-])|(?<=\n[+\-]))(?P<prefix>[A-Za-z][A-Za-z0-9]{1,9})[_\-.]"
    r"(?P<body>[A-Za-z0-9_\-]{16,}={0,2})(?![A-Za-z0-9_\-./+=])",
    _A,
)
_NOT_PREFIXES = frozenset(
    ("http", "https", "ftp", "file", "data", "sha1", "sha256", "sha384", "sha512", "md5")
)


def _catalogue_prefixes() -> frozenset[str]:
    """The catalogue's literal prefixes of four characters or more that end in a separator."""
    from graft_eval_pipeline.secrets.catalogue import TOKENS

    return frozenset(p for t in TOKENS for p in t.prefixes if len(p) >= 4 and p[-1] in "_-.")


_CATALOGUE_PREFIXES = _catalogue_prefixes()


def _glued_catalogue_prefix(head: str) -> bool:
    """`head` (prefix and separator) is a catalogue prefix with letters or digits glued before it.

    `xhvs.…`, `wordgsk_…`: the catalogue's own rule does not report a token glued to a word on
    purpose (its left boundary), and the rule for unknown providers must not report it instead.
    """
    return any(head[-size:] in _CATALOGUE_PREFIXES for size in range(4, len(head)))


def first_prefixed(data: bytes, pos: int = 0) -> int | None:
    """The byte offset of the first anchor of a prefixed token at or after `pos`, or None."""
    start = _PREFIXED_BYTES(_UNANCHORED, data, pos, len(data))[0][0]
    return None if start < 0 else int(start)


def prefixed_tokens(
    text: str,
    data: bytes,
    first: int,
    add: AddSpan,
    char_of: Callable[[int], int],
    taken: Callable[[int], bool] | None = None,
) -> None:
    """Report every prefixed token of `text` (from byte offset `first` of its UTF-8 `data`).

    `char_of` maps a byte offset to a character offset (the identity for ASCII text). An anchor
    that starts where `taken` holds (inside a span a rule that names the format found, which
    would win over this rule's) is passed over without its checks.
    """
    pos, size = first, len(data)
    while pos < size:
        byte_start, byte_end = _PREFIXED_BYTES(_UNANCHORED, data, pos, size)[0]
        if byte_start < 0:
            return
        start = char_of(byte_start)
        if taken is not None and taken(start):
            pos = max(byte_end, byte_start + 1)
            continue
        limit = min(len(text), start + _LINE_LIMIT)
        newline = text.find("\n", start, limit)
        end = prefixed_token_end(text, start, limit if newline < 0 else newline)
        if end is not None:
            add(start, end, PREFIXED_KIND)
        pos = max(byte_end, byte_start + 1)


def prefixed_token_end(text: str, start: int, hi: int) -> int | None:
    """The end of the prefixed token starting at `start` (within `text[:hi]`), or None.

    A prefix of two to ten letters and digits (not a URL scheme or a digest name, nor a catalogue
    prefix glued to a word, nor a token public by design), `_`, `-` or `.`, and a body of at least
    16 characters that `is_high_entropy_token` accepts, standing alone (no run character on either
    side) and not after a digest's or an id's name.
    """
    match = _PREFIXED.match(text, start, hi)
    if match is None or match.group("prefix").lower() in _NOT_PREFIXES:
        return None
    if text.startswith(PUBLIC_TOKENS, start):
        return None
    body = match.group("body").rstrip("=")
    if not is_high_entropy_token(body) or _glued_catalogue_prefix(text[start : match.start("body")]):
        return None
    line_start = text.rfind("\n", max(0, start - 64), start) + 1 or max(0, start - 64)
    if lookalike_context(body, text[line_start:start]):
        return None
    return match.end()


def switch_rate(value: str) -> float:
    """Changes of character class (lower, upper, digit, other) between neighbours, per character."""
    if len(value) < 2:
        return 0.0
    return (len(_CLASS_RUNS.findall(value)) - 1) / (len(value) - 1)


def _alphabet(value: str) -> int:
    if _HEX.fullmatch(value):
        return 16
    if _BASE32.fullmatch(value):
        return 32
    return 64


def lookalike_context(value: str, before: str) -> bool:
    """A digest, an id or a payload by what precedes it, or a UUID.

    What precedes it: `sha256:`, `h1:`, `commit `, `integrity sha512-`, `data:image/png;base64,`.
    """
    return bool(_LOOKALIKE_BEFORE.search(before) or _INTEGRITY.match(value) or _UUID.search(value))


def is_high_entropy_token(value: str, *, digests: bool = False) -> bool:
    """Is `value` (a run of base64/hex/base32 characters) random enough to be a secret?

    And no digest, identifier, path or placeholder. `digests`: 40 or 64 hexadecimal digits may be
    one too (where a key's name says what the value is, it is no git or SHA-256 digest).
    """
    if len(value) < MIN_LENGTH or _DIGIT.search(value) is None or _LETTER.search(value) is None:
        return False
    if value.startswith(PUBLIC_TOKENS):
        return False
    alphabet = _alphabet(value)
    if alphabet == 16 and (len(value) < MIN_HEX_LENGTH or (len(value) in _DIGEST_LENGTHS and not digests)):
        return False
    if alphabet == 32 and len(value) < MIN_HEX_LENGTH:
        return False
    least = MIN_BASE32_SWITCH_RATE if alphabet == 32 else MIN_SWITCH_RATE
    if switch_rate(value) < least or name_like(value) or is_placeholder(value) or counted(value):
        return False
    most = min(math.log2(alphabet), math.log2(len(value)))
    return entropy(value) >= ENTROPY_SHARE * most


def holds_candidate(data: bytes) -> bool:
    """Does UTF-8 `data` hold a run the high-entropy rule could report (`_CANDIDATE`) anywhere?

    Exact on any UTF-8 text: the run's characters are ASCII, and no byte of a multi-byte
    character is one. If not, a keyword of that rule in it finds nothing, wherever its region lies.
    """
    return bool(_CANDIDATE_BYTES(_UNANCHORED, data, 0, len(data))[0][0] >= 0)


class Candidates:
    """Whether a keyword's region holds a run this rule could report, in one text.

    `inside(lo, hi)` says whether `text[lo:hi]` holds a candidate (`_CANDIDATE`) wholly. Regions
    come in non-decreasing order of `lo`; what a search found (the first candidate after a
    position, or none up to a position) is remembered, so a character is searched at most once
    however many keyword regions overlap it, and never outside a region.
    """

    def __init__(self, text: str, data: bytes | None) -> None:
        """`data`: the text's bytes when it is ASCII (RE2 on bytes), else None (`re` on the text)."""
        self._text, self._data = text, data
        self._from = 0  # no candidate lies wholly inside [_from, _to) ...
        self._to = 0
        self._at = -1  # ... or: one starts at _at, and none before it from _from

    def inside(self, lo: int, hi: int) -> bool:
        if self._from <= lo <= self._at:
            return self._at + CANDIDATE_LENGTH <= hi
        begin, since = lo, lo
        if self._from <= lo < self._to:  # searched already up to _to: go on from there
            begin, since = max(lo, self._to - CANDIDATE_LENGTH + 1), self._from
        found = self._search(begin, hi)
        self._from, self._to, self._at = since, hi if found < 0 else found, found
        return found >= 0

    def _search(self, pos: int, end: int) -> int:
        if pos + CANDIDATE_LENGTH > end:
            return -1
        if self._data is not None:
            return int(_CANDIDATE_BYTES(_UNANCHORED, self._data, pos, end)[0][0])
        match = _CANDIDATE_TEXT.search(self._text, pos, end)
        return -1 if match is None else match.start()


def _runs(text: str, data: bytes | None, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """The (start, end) of each run in `text[lo:hi]`; `data` is the text's bytes when it is ASCII."""
    if data is None:
        for match in _RUN.finditer(text, lo, hi):
            yield match.span()
        return
    pos = lo
    while pos < hi:
        start, end = _RUN_BYTES(_UNANCHORED, data, pos, hi)[0]
        if start < 0:
            return
        yield start, end
        pos = end


def tokens_near_keyword(
    text: str, lo: int, hi: int, is_patch: bool, add: AddSpan, data: bytes | None = None
) -> None:
    """Report every high-entropy run of `text[lo:hi]` as a `high_entropy` span.

    `text[lo:hi]` is a keyword's region, less what an earlier region covered; `data` is the
    text's UTF-8 bytes when they are as many as its characters (ASCII). A run cut by the
    region's edge is judged on the part inside: a region is bounded, so the scan stays linear.
    """
    for start, end in _runs(text, data, lo, hi):
        if is_patch and (start == 0 or text[start - 1] == "\n"):
            start += 1  # the diff prefix (`+`, `-`) is no part of a run
        while start < end and text[start] in ".=":
            start += 1
        while end > start and text[end - 1] == ".":
            end -= 1
        value = text[start:end]
        url = value.startswith("//") and text[start - 1 : start] == ":"
        if not url and not is_high_entropy_token(value):
            continue  # most runs: cheap checks first, the context only for a candidate
        line_start = text.rfind("\n", max(0, start - 64), start) + 1 or max(0, start - 64)
        if lookalike_context(value, text[line_start:start]):
            continue
        if url:
            # A URL: its path segments one by one (a token in a webhook's path), not hex (a
            # content hash in a download URL).
            for part in _SEGMENT.finditer(text, start, end):
                if not _HEX.fullmatch(part.group()) and is_high_entropy_token(part.group()):
                    add(part.start(), part.end(), KIND)
        else:
            add(start, end, KIND)
