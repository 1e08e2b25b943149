"""Redaction of exported PR text (spec E14, 6.4): secrets always, e-mails, hosts and patterns on request.

Applied to the title, body, issue title and body, and every patch. A match never crosses a line
and the diff prefix (`+`, `-`, space) of a patch line is never touched, so a patch keeps its line
count and its shape; paths, statuses and counts are not looked at. Only `{kind, count}` is
recorded, never a value.

Speed: a pattern runs only when its literal needle occurs (`in` is several times faster than a
regex scan), and each pattern starts with that literal so `re` can skip ahead with its prefix
search (a leading `\\b` would defeat it); the word boundary is a look-behind after the literal.
Case-insensitive keywords are searched in a lower-cased copy when lowering keeps the length
(offsets then agree). Matches become spans that are resolved once (leftmost wins, ties
by kind priority) and spliced in a single pass.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache

from graft_eval_pipeline.card.models import CardInputs
from graft_eval_pipeline.evalset.sets import EvalError, Redaction

_A = re.ASCII  # JavaScript semantics: \b, \s and [A-Za-z] are ASCII-only

# Secret patterns of 6.4: (kind, needles, pattern). A pattern only runs when one of its literal
# needles occurs (`in` is several times faster than a regex scan); no needles means always.
_SECRET_RULES: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    ("aws_key", ("AKIA", "ASIA"), re.compile(r"A[KS]IA(?<![A-Za-z0-9_]A[KS]IA)[0-9A-Z]{16}\b", _A)),
    ("github_token", (), re.compile(r"gh(?<![A-Za-z0-9_]gh)[pousr]_[A-Za-z0-9]{36,}\b", _A)),
    (
        "github_token",
        ("github_pat_",),
        re.compile(r"github_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{60,}\b", _A),
    ),
    ("anthropic_key", ("sk-ant-",), re.compile(r"sk-ant-(?<![A-Za-z0-9_]sk-ant-)[A-Za-z0-9_-]{20,}", _A)),
    ("slack_token", ("xox",), re.compile(r"xox(?<![A-Za-z0-9_]xox)[abprs]-[A-Za-z0-9-]{10,}", _A)),
    (
        "jwt",
        ("eyJ",),
        re.compile(
            r"eyJ(?<![A-Za-z0-9_]eyJ)[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", _A
        ),
    ),
)

# assignment: (password|passwd|secret|token|api[_-]?key) then `:`/`=` then an 8+ character value.
# One pattern per keyword so each keeps a literal prefix; searched lower-cased, gated by its needle.
_VALUE = r"[^\S\n]*[:=][^\S\n]*([\"']?)(?P<v>[^\s\"']{8,})\1"
_ASSIGNMENT_SOURCES = (
    ("passw", r"passw(?<![a-z0-9_]passw)(?:or)?d\b"),
    ("secret", r"secret(?<![a-z0-9_]secret)\b"),
    ("token", r"token(?<![a-z0-9_]token)\b"),
    ("api", r"api(?<![a-z0-9_]api)[_-]?key\b"),
)
_ASSIGNMENT_LOWER = tuple((n, re.compile(src + _VALUE, _A)) for n, src in _ASSIGNMENT_SOURCES)
_ASSIGNMENT_ANYCASE = tuple(
    (n, re.compile(src + _VALUE, _A | re.IGNORECASE)) for n, src in _ASSIGNMENT_SOURCES
)

_PRIVATE_KEY_HINT = "PRIVATE KEY-----"
_PRIVATE_KEY_BEGIN = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
_PRIVATE_KEY_END = re.compile(r"-----END [A-Z ]*PRIVATE KEY-----")

# e-mail: found from its "@" (a literal), the local part is extended to the left by hand.
_EMAIL_RIGHT = re.compile(r"@[A-Za-z0-9.-]+\.[A-Za-z]{2,}", _A)
_EMAIL_LOCAL_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")
_KEPT_EMAIL = "noreply@anthropic.com"
_KEPT_EMAIL_DOMAIN = "@users.noreply.github.com"

_HOST_LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")
_SUBDOMAINS_BEFORE = re.compile(r"(?:[a-z0-9][a-z0-9-]*\.)+$", _A)

_PRIORITY = {
    kind: rank
    for rank, kind in enumerate(
        (
            "private_key",
            *dict.fromkeys(k for k, _, _ in _SECRET_RULES),
            "assignment",
            "email",
            "host",
            "custom",
        )
    )
}
_DIFF_PREFIXES = frozenset("+- ")
# Custom pattern syntax whose meaning depends on where the line starts: ^, \A, \Z, look-behind.
_NEEDS_LINE_CONTEXT = re.compile(r"\^|\\A|\\Z|\(\?<[=!]")


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
    # (per-line pattern, whole-text probe or None when the pattern needs line context)
    custom: tuple[tuple[re.Pattern[str], re.Pattern[str] | None], ...]


@cache
def _compile(options: RedactOptions) -> _Compiled:
    host_sources = [
        re.escape(h.strip().lower().rstrip(".")) + r"(?![a-z0-9-]|\.[a-z0-9])" for h in options.hosts
    ]
    try:
        custom = tuple(
            (re.compile(p), None if _NEEDS_LINE_CONTEXT.search(p) else re.compile(p, re.MULTILINE))
            for p in options.patterns
        )
    except re.error as err:
        raise EvalError(f"--redact-pattern is not a valid regular expression ({err}): fix it") from None
    return _Compiled(
        hosts_lower=tuple(re.compile(s, _A) for s in host_sources),
        hosts_anycase=tuple(re.compile(s, _A | re.IGNORECASE) for s in host_sources),
        custom=custom,
    )


@dataclass
class _Spans:
    items: list[tuple[int, int, int, str]] = field(default_factory=list)
    private_key_blocks: int = 0

    def add(self, start: int, end: int, kind: str) -> None:
        if end > start:
            self.items.append((start, _PRIORITY[kind], end, kind))


def _private_key_lines(text: str, is_patch: bool, spans: _Spans) -> None:
    """Every line from a BEGIN … PRIVATE KEY line to its END line; the diff prefix stays."""
    inside = False
    offset = 0
    for line in text.split("\n"):
        skip = 1 if is_patch and line[:1] in _DIFF_PREFIXES else 0
        content = line[skip:]
        if not inside and _PRIVATE_KEY_BEGIN.search(content):
            inside = True
            spans.private_key_blocks += 1
        if inside and not (is_patch and line.startswith("@@")):
            spans.add(offset + skip, offset + len(line), "private_key")
            if _PRIVATE_KEY_END.search(content):
                inside = False
        offset += len(line) + 1


def _emails(text: str, is_patch: bool, spans: _Spans) -> None:
    floor = 0  # the local part never reaches into the previous e-mail
    for match in _EMAIL_RIGHT.finditer(text):
        at = match.start()
        line_start = text.rfind("\n", 0, at) + 1
        limit = max(floor, line_start + (1 if is_patch else 0))
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
    patterns: Iterable[tuple[re.Pattern[str], re.Pattern[str] | None]],
    spans: _Spans,
) -> None:
    """User patterns run line by line (after the diff prefix) so they cannot swallow a newline.

    A whole-text probe first skips texts without a hit; a pattern that anchors at the start of
    the line or the text, or looks behind, could see the diff prefix there, so it is always run.
    """
    active = [line_pattern for line_pattern, probe in patterns if probe is None or probe.search(text)]
    if not active:
        return
    offset = 0
    for line in text.split("\n"):
        skip = 1 if is_patch and line[:1] in _DIFF_PREFIXES else 0
        content = line[skip:]
        for pattern in active:
            for match in pattern.finditer(content):
                spans.add(offset + skip + match.start(), offset + skip + match.end(), "custom")
        offset += len(line) + 1


def _splice(text: str, spans: _Spans, counts: Counter[str]) -> str:
    if not spans.items:
        return text
    pieces: list[str] = []
    pos = 0
    for start, _, end, kind in sorted(spans.items):
        if start < pos:
            continue  # overlaps an earlier (or higher-priority) span
        pieces.append(text[pos:start])
        pieces.append(f"[REDACTED:{kind}]")
        pos = end
        if kind != "private_key":
            counts[kind] += 1
    pieces.append(text[pos:])
    counts["private_key"] += spans.private_key_blocks
    return "".join(pieces)


def redact_text(text: str, options: RedactOptions, counts: Counter[str], *, is_patch: bool = False) -> str:
    """Redact one field; `counts` is updated per kind."""
    compiled = _compile(options)
    spans = _Spans()
    if _PRIVATE_KEY_HINT in text:
        _private_key_lines(text, is_patch, spans)
    for kind, needles, pattern in _SECRET_RULES:
        if not needles or any(n in text for n in needles):
            for match in pattern.finditer(text):
                spans.add(match.start(), match.end(), kind)
    lower = text.lower()
    same_offsets = len(lower) == len(text)
    haystack = lower if same_offsets else text
    for needle, pattern in _ASSIGNMENT_LOWER if same_offsets else _ASSIGNMENT_ANYCASE:
        if needle in lower:
            for match in pattern.finditer(haystack):
                spans.add(match.start("v"), match.end("v"), "assignment")
    if options.emails and "@" in text:
        _emails(text, is_patch, spans)
    if compiled.hosts_lower:
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
