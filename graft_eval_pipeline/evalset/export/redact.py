"""Redaction of exported PR text (spec E14, 6.4): secrets always, e-mails, hosts and patterns on request.

Applied to the title, body, issue title and body, and every patch. A match never crosses a line
(a private-key block is redacted line by line) and the diff prefix (`+`, `-`, space) of a patch
line is never touched, so a patch keeps its line count and its shape; paths, statuses and counts
are not looked at. Only `{kind, count}` is recorded, never a value.

What counts as a secret lives in its own package (`graft_eval_pipeline.secrets`), because a
rescan and the live-mode prompt check apply the same rules. Matches become spans that are
resolved once (`kept_spans`: leftmost wins, ties by kind priority) and spliced in a single pass.
User patterns (`--redact-pattern`) run on RE2, a linear-time engine, so no pattern can make an
export hang.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache

import re2  # type: ignore[import-untyped]

from graft_eval_pipeline.card import CardInputs
from graft_eval_pipeline.evalset.sets import EvalError, Redaction
from graft_eval_pipeline.secrets import SECRET_KINDS, Utf8Offsets, kept_spans, secret_kinds_in, secret_spans

_A = re.ASCII  # JavaScript semantics: \b, \s and [A-Za-z] are ASCII-only

# e-mail: found from its "@" (a literal), the local part is extended to the left by hand.
_EMAIL_RIGHT = re.compile(r"@[A-Za-z0-9.-]+\.[A-Za-z]{2,}", _A)
_EMAIL_LOCAL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")
_LOCAL_PART_MAX = 256  # RFC 5321 allows 64
_KEPT_EMAIL = "noreply@anthropic.com"
_KEPT_EMAIL_DOMAIN = "@users.noreply.github.com"

_HOST_LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
_SUBDOMAINS_BEFORE = re.compile(r"(?:[a-z0-9][a-z0-9-]*\.)+$", _A)

_PRIORITY = {kind: rank for rank, kind in enumerate((*SECRET_KINDS, "email", "host", "custom"))}
_DIFF_PREFIXES = frozenset("+- ")
# Custom pattern syntax whose meaning depends on where the line starts: ^, \A, \Z.
_NEEDS_LINE_CONTEXT = re.compile(r"\^|\\A|\\Z")
_PY_END_OF_TEXT = re.compile(r"(?<!\\)((?:\\\\)*)\\Z")  # Python's \Z is RE2's \z


@dataclass(frozen=True)
class RedactOptions:
    """Secrets are always on; the rest comes from --redact emails, --redact-host, --redact-pattern."""

    emails: bool = False
    hosts: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _compile(self)  # a bad --redact-pattern fails here, before any request


@dataclass(frozen=True)
class _Compiled:
    hosts_lower: tuple[re.Pattern[str], ...]
    hosts_anycase: tuple[re.Pattern[str], ...]
    # (per-line RE2 pattern, whole-text RE2 probe or None when the pattern needs line context)
    custom: tuple[tuple[object, object | None], ...]


@cache
def _compile(options: RedactOptions) -> _Compiled:
    host_sources = [
        re.escape(h.strip().lower().rstrip(".")) + r"(?![a-z0-9-]|\.[a-z0-9])" for h in options.hosts
    ]
    custom = tuple(_compile_custom(p) for p in options.patterns)
    return _Compiled(
        hosts_lower=tuple(re.compile(s, _A) for s in host_sources),
        hosts_anycase=tuple(re.compile(s, _A | re.IGNORECASE) for s in host_sources),
        custom=custom,
    )


MAX_PATTERN_CHARS = 1000
"""A `--redact-pattern` longer than this is refused before it is compiled: a pattern that names a
secret's shape is short, and RE2 compiles a huge one into a program that overflows its memory
budget on every search."""


@cache
def _re2_options() -> object:
    """RE2 logs every compile error (and a search that overflows its memory) to stderr itself.

    graft-eval says it in one line instead.
    """
    options = re2.Options()
    options.log_errors = False
    return options


def _compile_custom(pattern: str) -> tuple[object, object | None]:
    """RE2 (linear time: no pattern can hang an export); look-around and back-references are refused.

    Checked before RE2 sees it: the length, then Python's parser (its error names the position);
    RE2 compiles with its own logging off, so every refusal is one line.
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        raise EvalError(
            f"--redact-pattern is {len(pattern):,} characters long; at most {MAX_PATTERN_CHARS:,} "
            "are allowed: match the secret's shape, not a list of values"
        )
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as err:
        reason = err if isinstance(err, re.error) else "nested too deeply"
        raise EvalError(f"--redact-pattern is not a valid regular expression ({reason}): fix it") from None
    source = _PY_END_OF_TEXT.sub(r"\1\\z", pattern)
    options = _re2_options()
    try:
        line = re2.compile(source, options)
        probe = None if _NEEDS_LINE_CONTEXT.search(pattern) else re2.compile("(?m)" + source, options)
    except re2.error:
        raise EvalError(
            "--redact-pattern uses syntax the linear-time engine (RE2) does not support "
            "(look-around, back-references, possessive or atomic groups): rewrite it without them"
        ) from None
    return line, probe


@dataclass
class _Spans:
    # (start, priority, end, kind, counted): a private-key block is counted once, not per line.
    items: list[tuple[int, int, int, str, bool]] = field(default_factory=list)

    def add(self, start: int, end: int, kind: str) -> None:
        if end > start:
            self.items.append((start, _PRIORITY[kind], end, kind, True))

    def add_block_line(self, start: int, end: int, kind: str) -> None:
        if end > start:
            self.items.append((start, _PRIORITY[kind], end, kind, False))


def _emails(text: str, is_patch: bool, spans: _Spans) -> None:
    floor = 0  # the local part never reaches into the previous e-mail
    for match in _EMAIL_RIGHT.finditer(text):
        at = match.start()
        # The local part: back to the line's start, the previous e-mail or _LOCAL_PART_MAX
        # characters, whichever is nearest (so a long minified line is not searched per "@").
        reach = max(floor, at - _LOCAL_PART_MAX)
        newline = text.rfind("\n", max(0, reach - 1), at)
        line_start = newline + 1 if newline >= 0 or reach == 0 else None
        limit = reach if line_start is None else max(reach, line_start + (1 if is_patch else 0))
        start = at
        while start > limit and text[start - 1] in _EMAIL_LOCAL_CHARS:
            start -= 1
        if start == at:
            continue
        value = text[start : match.end()].lower()
        floor = match.end()
        if value == _KEPT_EMAIL or value.endswith(_KEPT_EMAIL_DOMAIN):
            continue
        spans.add(start, match.end(), "email")


def _hosts(haystack: str, is_patch: bool, patterns: Iterable[re.Pattern[str]], spans: _Spans) -> None:
    """The host and its subdomains; `notcorp.example` is not `corp.example`.

    In a patch the diff prefix at the start of a line is a boundary, not part of the name: a
    removed line `-corp.example/api` names `corp.example` (a `-` is a label character elsewhere).
    """
    for pattern in patterns:
        for match in pattern.finditer(haystack):
            start = match.start()
            before = haystack[start - 1 : start].lower()
            after_diff_prefix = (
                is_patch and before in _DIFF_PREFIXES and (start == 1 or haystack[start - 2] == "\n")
            )
            if before and before in _HOST_LABEL_CHARS and not after_diff_prefix:
                continue
            if before == ".":
                subdomains = _SUBDOMAINS_BEFORE.search(haystack[max(0, start - 253) : start].lower())
                if subdomains:
                    start -= len(subdomains.group(0))
            spans.add(start, match.end(), "host")


def _custom(
    text: str,
    is_patch: bool,
    patterns: Iterable[tuple[object, object | None]],
    spans: _Spans,
) -> None:
    """User patterns run line by line (after the diff prefix) so they cannot swallow a newline.

    A whole-text probe (over the UTF-8 bytes: RE2 would encode a `str` at every call) finds the
    lines that can hold a hit, and only those are matched line by line; a pattern that anchors
    at the start of the line or the text could see the diff prefix there, so it runs on every line.
    """
    data = text.encode("utf-8", "surrogatepass")
    for line_pattern, probe in patterns:
        if probe is None:
            offset = 0
            for line in text.split("\n"):
                _custom_line(text, offset, offset + len(line), is_patch, line_pattern, spans)
                offset += len(line) + 1
            continue
        offsets = None if len(data) == len(text) else Utf8Offsets(text, data)
        pos = 0
        while pos <= len(data):
            hit = probe.search(data, pos)  # type: ignore[attr-defined]
            if hit is None:
                break
            line_start = data.rfind(b"\n", pos, hit.start()) + 1 or pos
            line_end = data.find(b"\n", hit.start())
            line_end = len(data) if line_end < 0 else line_end
            if offsets is None:
                _custom_line(text, line_start, line_end, is_patch, line_pattern, spans)
            else:
                start = offsets.char_of(line_start)
                _custom_line(text, start, offsets.char_of(line_end), is_patch, line_pattern, spans)
            pos = line_end + 1


def _custom_line(text: str, start: int, end: int, is_patch: bool, pattern: object, spans: _Spans) -> None:
    skip = 1 if is_patch and text[start : start + 1] in _DIFF_PREFIXES else 0
    content = text[start + skip : end]
    for match in pattern.finditer(content):  # type: ignore[attr-defined]
        spans.add(start + skip + match.start(), start + skip + match.end(), "custom")


def _splice(text: str, spans: _Spans, counts: Counter[str]) -> str:
    if not spans.items:
        return text
    pieces: list[str] = []
    pos = 0
    for start, _, end, kind, counted in kept_spans(spans.items):
        pieces.append(text[pos:start])
        pieces.append(f"[REDACTED:{kind}]")
        pos = end
        if counted:
            counts[kind] += 1
    pieces.append(text[pos:])
    return "".join(pieces)


def redact_text(text: str, options: RedactOptions, counts: Counter[str], *, is_patch: bool = False) -> str:
    """Redact one field; `counts` is updated per kind."""
    compiled = _compile(options)
    spans = _Spans()
    blocks = secret_spans(text, is_patch, spans.add, spans.add_block_line)
    if blocks:
        counts["private_key"] += blocks
    if options.emails and "@" in text:
        _emails(text, is_patch, spans)
    if compiled.hosts_lower:
        lower = text.lower()
        same_offsets = len(lower) == len(text)
        haystack = lower if same_offsets else text
        _hosts(haystack, is_patch, compiled.hosts_lower if same_offsets else compiled.hosts_anycase, spans)
    if compiled.custom:
        _custom(text, is_patch, compiled.custom, spans)
    return _splice(text, spans, counts)


def redact_inputs(inputs: CardInputs, options: RedactOptions) -> tuple[CardInputs, list[Redaction]]:
    """Redacted copy of the inputs and `{kind, count}` per kind (sorted by kind, counts > 0)."""
    counts: Counter[str] = Counter()
    pr = inputs.pr.model_copy(
        update={
            "title": redact_text(inputs.pr.title, options, counts),
            "body": redact_text(inputs.pr.body, options, counts),
        }
    )
    issue = inputs.issue
    if issue is not None:
        issue = issue.model_copy(
            update={
                "title": redact_text(issue.title, options, counts),
                "body": redact_text(issue.body, options, counts),
            }
        )
    files = [
        f
        if f.patch is None
        else f.model_copy(update={"patch": redact_text(f.patch, options, counts, is_patch=True)})
        for f in inputs.files
    ]
    redacted = inputs.model_copy(update={"pr": pr, "issue": issue, "files": files})
    return redacted, [Redaction(kind=k, count=n) for k, n in sorted(counts.items()) if n > 0]


def redacted_fields(inputs: CardInputs) -> list[tuple[str, bool]]:
    """The `(text, is_patch)` fields export redacts: PR and issue title and body, every patch."""
    texts = [(inputs.pr.title, False), (inputs.pr.body, False)]
    if inputs.issue is not None:
        texts += [(inputs.issue.title, False), (inputs.issue.body, False)]
    return texts + [(f.patch, True) for f in inputs.files if f.patch is not None]


def secret_counts(inputs: CardInputs) -> list[Redaction]:
    """What `redact_inputs(inputs, RedactOptions())` reports, without rewriting anything.

    For a rescan: one prefilter pass over every field (`secret_kinds_in`), so a case without a
    secret costs two RE2 calls and no copy.
    """
    counts = secret_kinds_in(redacted_fields(inputs))
    return [Redaction(kind=k, count=n) for k, n in sorted(counts.items()) if n > 0]
